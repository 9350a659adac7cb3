package cleaner

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/ratelog"
	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/internal/series"
	"github.com/pulse-dev/pulse/timeseries"
)

// Defaults for Config's zero fields.
const (
	DefaultInterval = 60 * time.Second
	DefaultSamples  = 120
	DefaultPageSize = 500
)

// unlockTimeout bounds the release of the lock at the end of a pass.
const unlockTimeout = 200 * time.Millisecond

// Config configures a Cleaner. Zero fields take the defaults.
type Config struct {
	// Recorder, when set, gives the Pool, Schema and Clock that are not
	// set here: the cleaner then cleans what that recorder writes.
	Recorder *timeseries.Recorder
	// Pool is the caller's *redis.Pool or *redisc.Cluster; required
	// unless Recorder is set.
	Pool timeseries.Pool
	// Schema must match the Recorders' (key prefix); its precisions are
	// not consulted: every series listed in the known set is cleaned.
	Schema timeseries.Schema
	// Interval is the time between passes (default 60 s); the first pass
	// runs at start.
	Interval time.Duration
	// Samples is how many of the newest buckets each series keeps
	// (default 120).
	Samples int
	// PageSize is how many known-set members one round trip covers
	// (default 500).
	PageSize int
	// Clock tells which buckets are the newest; nil means the system clock.
	Clock timeseries.Clock
	// OnError receives the errors of passes run in the background; nil
	// logs them with log/slog, at most one line a minute.
	OnError func(error)
	// Manual, when true, starts no background passes: call Pass yourself
	// (a cron job, a test), or Start or Run later.
	Manual bool
}

// Stats describes one pass.
type Stats struct {
	// Pass numbers the passes of this Cleaner from 0.
	Pass int64
	// Skipped is true when another cleaner held the lock, so this pass
	// did nothing.
	Skipped bool
	// Series counts the series cleaned: those whose precision was due.
	Series int
	// FieldsDeleted counts the buckets deleted.
	FieldsDeleted int64
	// SeriesRemoved counts the series removed from the known set because
	// their hash was empty.
	SeriesRemoved int
	// RoundTrips counts the waits for Redis replies the pass made.
	RoundTrips int
}

// Cleaner trims series in the background. Its methods are safe for
// concurrent use.
type Cleaner struct {
	// Hooks for tests: beforeUnlist runs between the trims that left
	// hashes empty and their unlisting; beforePass at the start of each
	// pass; afterPass after each background pass.
	beforeUnlist func()
	beforePass   func()
	afterPass    func(Stats, error)

	router   *redisconn.Router
	schema   series.Schema
	interval time.Duration
	samples  int
	pageSize int
	clock    timeseries.Clock
	onError  func(error)
	lockKey  string
	lockTTL  time.Duration

	passMu sync.Mutex // one pass at a time; guards passes
	passes int64

	stop     context.CancelFunc // ends Run
	stopped  context.Context
	mu       sync.Mutex // guards started and done
	started  bool
	done     chan struct{}
	closeErr error
}

// New validates cfg and returns a Cleaner that cleans in the background,
// at once and then every Config.Interval, until Close: the same shape as
// NewRecorder and entity.New. With Config.Manual it starts nothing: call
// Pass to clean once, or Start or Run.
func New(cfg Config) (*Cleaner, error) {
	if r := cfg.Recorder; r != nil {
		h := series.HandleOf(r)
		if cfg.Pool == nil {
			cfg.Pool = h.Router.Pool()
		}
		if cfg.Schema.Prefix == "" && cfg.Schema.Precisions == nil {
			cfg.Schema = timeseries.Schema(h.Schema)
		}
		if cfg.Clock == nil {
			cfg.Clock = h.Clock
		}
	}
	if cfg.Pool == nil {
		return nil, errors.New("cleaner: Config.Pool is nil")
	}
	if cfg.Interval < 0 || cfg.Samples < 0 || cfg.PageSize < 0 {
		return nil, errors.New("cleaner: negative Interval, Samples or PageSize")
	}
	schema, err := series.Schema(cfg.Schema).Normalize()
	if err != nil {
		return nil, fmt.Errorf("cleaner: %w", err)
	}
	if cfg.Interval == 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.Samples == 0 {
		cfg.Samples = DefaultSamples
	}
	if cfg.PageSize == 0 {
		cfg.PageSize = DefaultPageSize
	}
	if cfg.Clock == nil {
		cfg.Clock = series.Wall{}
	}
	if cfg.OnError == nil {
		cfg.OnError = ratelog.New("pulse: cleaner", time.Minute)
	}
	stopped, stop := context.WithCancel(context.Background())
	c := &Cleaner{
		router:   redisconn.NewRouter(cfg.Pool),
		schema:   schema,
		interval: cfg.Interval,
		samples:  cfg.Samples,
		pageSize: cfg.PageSize,
		clock:    cfg.Clock,
		onError:  cfg.OnError,
		lockKey:  schema.Prefix + "pulse:cleaner:lock",
		// Held for one pass; the expiry only matters when a cleaner dies
		// holding it.
		lockTTL: max(cfg.Interval, 10*time.Second),
		stop:    stop,
		stopped: stopped,
	}
	if !cfg.Manual {
		if err := c.Start(context.Background()); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// Start runs Run on a new goroutine, for a Cleaner made with
// Config.Manual. Close stops it and waits for it.
func (c *Cleaner) Start(ctx context.Context) error {
	if err := c.begin(); err != nil {
		return err
	}
	go c.run(ctx)
	return nil
}

// Run cleans at start and then every Config.Interval until ctx is done or
// Close is called, and returns nil then. Errors of a pass go to
// Config.OnError; the next pass runs as usual.
func (c *Cleaner) Run(ctx context.Context) error {
	if err := c.begin(); err != nil {
		return err
	}
	c.run(ctx)
	return nil
}

func (c *Cleaner) begin() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.started {
		return errors.New("cleaner: already started")
	}
	if c.stopped.Err() != nil {
		return errors.New("cleaner: closed")
	}
	c.started = true
	c.done = make(chan struct{})
	return nil
}

func (c *Cleaner) run(ctx context.Context) {
	defer close(c.done)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(c.stopped, cancel)()
	ticker := time.NewTicker(c.interval)
	defer ticker.Stop()
	for {
		st, err := c.Pass(ctx)
		if err != nil && ctx.Err() == nil {
			c.onError(err)
		}
		if c.afterPass != nil {
			c.afterPass(st, err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// Close stops the background passes, interrupting one under way, and
// waits for them to end, or for ctx: then it returns ctx's error. It is
// safe to call more than once.
func (c *Cleaner) Close(ctx context.Context) error {
	c.stop()
	c.mu.Lock()
	started, done := c.started, c.done
	c.mu.Unlock()
	if !started {
		return nil
	}
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("cleaner: close: %w", ctx.Err())
	}
}

// due reports whether precision p is cleaned in the pass numbered pass:
// every max(1, p/I) passes, I being the interval in seconds, so that with
// the default interval of a minute a series is looked at about once per
// bucket it gains.
func (c *Cleaner) due(p int, pass int64) bool {
	every := int64(p) / max(1, int64(c.interval/time.Second))
	return every <= 1 || pass%every == 0
}

// Pass cleans once now, unless another cleaner holds the lock.
func (c *Cleaner) Pass(ctx context.Context) (Stats, error) {
	c.passMu.Lock()
	defer c.passMu.Unlock()
	st := Stats{Pass: c.passes}
	c.passes++
	if c.beforePass != nil {
		c.beforePass()
	}
	err := c.pass(ctx, &st)
	if err != nil {
		err = fmt.Errorf("cleaner: pass %d: %w", st.Pass, err)
	}
	return st, err
}

func (c *Cleaner) pass(ctx context.Context, st *Stats) error {
	do := func(cmds ...redisconn.Cmd) []redisconn.Reply {
		st.RoundTrips++
		return c.router.DoContext(ctx, cmds, redisconn.Options{Timeout: passTimeout})
	}
	token, err := newToken()
	if err != nil {
		return err
	}
	lock := do(redisconn.Cmd{Key: c.lockKey, Name: "SET", Args: []any{c.lockKey, token, "NX", "PX", c.lockTTL.Milliseconds()}})[0]
	if lock.Err != nil {
		return lock.Err
	}
	if lock.Value == nil {
		st.Skipped = true
		return nil
	}
	defer func() {
		// Release only a lock that is still ours. Briefly: should Redis not
		// answer, the lock expires by itself, and Close must not wait on it.
		c.router.Do([]redisconn.Cmd{unlockScript.Cmd([]string{c.lockKey}, token)}, redisconn.Options{Timeout: unlockTimeout})
		st.RoundTrips++
	}()

	now := c.clock.Now().Unix()
	known := c.schema.KnownKey()
	page := func(after string) redisconn.Cmd {
		return redisconn.Cmd{Key: known, Name: "ZRANGEBYLEX", Args: []any{known, after, "+", "LIMIT", 0, c.pageSize}}
	}
	first := do(page("-"))[0]
	members, err := redis.Strings(first.Value, first.Err)
	if err != nil {
		return fmt.Errorf("read known set: %w", err)
	}
	var empty []string // series whose hash the trim left empty
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		var cmds []redisconn.Cmd
		var due []string
		for _, m := range members {
			p, _, ok := series.ParseMember(m)
			if !ok || !c.due(p, st.Pass) {
				continue // not a Pulse series, or not its turn
			}
			cutoff := series.BucketStart(now, p) - int64(c.samples-1)*int64(p)
			cmds = append(cmds, trimScript.Cmd([]string{c.schema.MemberKey(m)}, cutoff, c.samples))
			due = append(due, m)
		}
		more := len(members) == c.pageSize
		if more {
			// The next page goes in the same round trip, after the last
			// member seen: removals during the pass cannot shift it.
			cmds = append(cmds, page("("+members[len(members)-1]))
		}
		if len(cmds) == 0 {
			break
		}
		replies := do(cmds...)
		st.Series += len(due)
		for i, m := range due {
			res, err := redis.Int64s(replies[i].Value, replies[i].Err)
			if err != nil {
				if redisconn.Classify(err) == redisconn.KeyPermanent {
					// One bad key (of another type, say) must not stop
					// the pass.
					c.onError(fmt.Errorf("cleaner: %s: %w", c.schema.MemberKey(m), err))
					continue
				}
				return err
			}
			st.FieldsDeleted += res[0]
			if res[1] == 0 {
				empty = append(empty, m)
			}
		}
		if !more {
			break
		}
		if members, err = redis.Strings(replies[len(cmds)-1].Value, replies[len(cmds)-1].Err); err != nil {
			return fmt.Errorf("read known set: %w", err)
		}
	}
	if len(empty) == 0 {
		return nil
	}
	removed, err := c.unlist(empty, func() bool { return ctx.Err() != nil }, st)
	st.SeriesRemoved += removed
	return err
}

// passTimeout bounds each round trip of a pass run without a deadline.
const passTimeout = 10 * time.Second

// unlist removes series whose hash the trim left empty from the known
// set, then looks at each hash again and lists the ones that have data
// once more. A Recorder writes a hash before it lists it (on a cluster the
// hash and known: may live on different nodes, so no script can do both
// atomically): a write that came before the second look is seen by it,
// and one that came after is followed by the recorder's own ZADD. Either
// way a series with data ends up listed; it is unlisted at most for the
// cleaner's two round trips.
//
// Once the ZREM is sent the steps after it always run, even when the pass
// is being stopped (then each is bounded by unlockTimeout instead of
// passTimeout): stopping in between would leave a written series
// unlisted. A ZREM whose outcome is unknown is looked after the same way.
// It returns how many stayed removed.
func (c *Cleaner) unlist(members []string, stopping func() bool, st *Stats) (int, error) {
	if stopping() {
		return 0, nil // nothing removed yet: the next pass finds them
	}
	if c.beforeUnlist != nil {
		c.beforeUnlist()
	}
	do := func(cmds ...redisconn.Cmd) []redisconn.Reply {
		st.RoundTrips++
		t := passTimeout
		if stopping() {
			t = unlockTimeout
		}
		return c.router.Do(cmds, redisconn.Options{Timeout: t})
	}
	known := c.schema.KnownKey()
	var zrem []redisconn.Cmd
	for i := 0; i < len(members); i += 1000 {
		args := []any{known}
		for _, m := range members[i:min(i+1000, len(members))] {
			args = append(args, m)
		}
		zrem = append(zrem, redisconn.Cmd{Key: known, Name: "ZREM", Args: args})
	}
	var zremErr error
	for _, rep := range do(zrem...) {
		if rep.Err != nil && zremErr == nil {
			zremErr = rep.Err
		}
	}
	var re redis.Error
	if errors.As(zremErr, &re) {
		return 0, fmt.Errorf("unlist: %w", zremErr) // refused: nothing removed
	}
	cmds := make([]redisconn.Cmd, len(members))
	for i, m := range members {
		key := c.schema.MemberKey(m)
		cmds[i] = redisconn.Cmd{Key: key, Name: "EXISTS", Args: []any{key}}
	}
	relist := []any{known}
	var lookErr error
	for i, rep := range do(cmds...) {
		n, err := redis.Int(rep.Value, rep.Err)
		if err != nil || n > 0 {
			// Unsure counts as written: listing an empty series costs a
			// member until the next pass, unlisting one with data hides it.
			relist = append(relist, 0, members[i])
			if err != nil && lookErr == nil {
				lookErr = err
			}
		}
	}
	removed := len(members) - (len(relist)-1)/2
	if len(relist) > 1 {
		if rep := do(redisconn.Cmd{Key: known, Name: "ZADD", Args: relist})[0]; rep.Err != nil {
			return removed, fmt.Errorf("relist: %w", rep.Err)
		}
	}
	switch {
	case zremErr != nil:
		return removed, fmt.Errorf("unlist: %w", zremErr)
	case lookErr != nil:
		return removed, fmt.Errorf("look again: %w", lookErr)
	}
	return removed, nil
}

func newToken() (string, error) {
	b := make([]byte, 12)
	if _, err := crand.Read(b); err != nil {
		return "", fmt.Errorf("lock token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// trimScript trims one series. Fields are compared as numbers; fields that
// are not numbers were not written by Pulse and are left alone.
//
// KEYS: count hash. ARGV: cutoff, samples.
// Returns {fields deleted, fields left}.
var trimScript = redisconn.NewScript(`
local cutoff = tonumber(ARGV[1])
local keep = tonumber(ARGV[2])
local del, times, names = {}, {}, {}
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  local t = tonumber(f)
  if t then
    if t < cutoff then
      del[#del + 1] = f
    else
      times[#times + 1] = t
      names[#names + 1] = f
    end
  end
end
if #times > keep then
  local order = {}
  for i = 1, #times do order[i] = i end
  table.sort(order, function(a, b) return times[a] < times[b] end)
  for i = 1, #times - keep do del[#del + 1] = names[order[i]] end
end
for i = 1, #del, 1000 do
  redis.call('HDEL', KEYS[1], unpack(del, i, math.min(i + 999, #del)))
end
return {#del, redis.call('HLEN', KEYS[1])}
`)

// unlockScript deletes the lock only if it still holds our token.
var unlockScript = redisconn.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)
