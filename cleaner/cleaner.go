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
	// Pool is the caller's connection pool; required.
	Pool *redis.Pool
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
	// OnError receives the errors of passes run by Run; nil logs them with
	// log/slog, at most one line a minute.
	OnError func(error)
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
	pool     *redis.Pool
	schema   timeseries.Schema
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

// New validates cfg and returns a Cleaner. Start or Run it to clean
// periodically, or call Pass to clean once.
func New(cfg Config) (*Cleaner, error) {
	if cfg.Pool == nil {
		return nil, errors.New("cleaner: Config.Pool is nil")
	}
	if cfg.Interval < 0 || cfg.Samples < 0 || cfg.PageSize < 0 {
		return nil, errors.New("cleaner: negative Interval, Samples or PageSize")
	}
	schema, err := cfg.Schema.Normalize()
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
		cfg.Clock = timeseries.SystemClock
	}
	if cfg.OnError == nil {
		cfg.OnError = ratelog.New("pulse: cleaner", time.Minute)
	}
	stopped, stop := context.WithCancel(context.Background())
	return &Cleaner{
		pool:     cfg.Pool,
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
	}, nil
}

// Start runs Run on a new goroutine. Close stops it and waits for it.
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
		if _, err := c.Pass(ctx); err != nil && ctx.Err() == nil {
			c.onError(err)
		}
		select {
		case <-ctx.Done():
			return
		case <-ticker.C:
		}
	}
}

// Close stops Run, interrupting a pass under way, and waits for it to
// return. It is safe to call more than once.
func (c *Cleaner) Close() error {
	c.stop()
	c.mu.Lock()
	started, done := c.started, c.done
	c.mu.Unlock()
	if started {
		<-done
	}
	return nil
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
	err := c.pass(ctx, &st)
	if err != nil {
		err = fmt.Errorf("cleaner: pass %d: %w", st.Pass, err)
	}
	return st, err
}

func (c *Cleaner) pass(ctx context.Context, st *Stats) error {
	conn, err := c.pool.GetContext(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()

	token, err := newToken()
	if err != nil {
		return err
	}
	// Take the lock and load the script in one round trip.
	_ = conn.Send("SET", c.lockKey, token, "NX", "PX", c.lockTTL.Milliseconds())
	_ = conn.Send("SCRIPT", "LOAD", cleanSource)
	st.RoundTrips++
	replies, err := redis.Values(redis.DoContext(conn, ctx, ""))
	if err != nil {
		return err
	}
	if replies[0] == nil {
		st.Skipped = true
		return nil
	}
	defer func() {
		// Release only a lock that is still ours, on a fresh connection, so
		// a pass cut off mid-pipeline still lets the next one in at once.
		// Briefly: should Redis not answer, the lock expires by itself, and
		// Close must not wait on it.
		rctx, cancel := context.WithTimeout(context.Background(), unlockTimeout)
		defer cancel()
		if rc, err := c.pool.GetContext(rctx); err == nil {
			_, _ = unlockScript.DoContext(rctx, rc, c.lockKey, token)
			rc.Close()
			st.RoundTrips++
		}
	}()

	now := c.clock.Now().Unix()
	known := c.schema.KnownKey()
	page, err := redis.Strings(redis.DoContext(conn, ctx, "ZRANGEBYLEX", known, "-", "+", "LIMIT", 0, c.pageSize))
	st.RoundTrips++
	if err != nil {
		return fmt.Errorf("read known set: %w", err)
	}
	for {
		sent := 0
		for _, m := range page {
			p, _, ok := timeseries.ParseMember(m)
			if !ok || !c.due(p, st.Pass) {
				continue // not a Pulse series, or not its turn
			}
			cutoff := timeseries.BucketStart(now, p) - int64(c.samples-1)*int64(p)
			if err := cleanScript.SendHash(conn, c.schema.MemberKey(m), known, m, cutoff, c.samples); err != nil {
				return err
			}
			sent++
		}
		more := len(page) == c.pageSize
		if more {
			// Ask for the next page in the same round trip, after the last
			// member seen: removals during the pass cannot shift it.
			_ = conn.Send("ZRANGEBYLEX", known, "("+page[len(page)-1], "+", "LIMIT", 0, c.pageSize)
		}
		if sent == 0 && !more {
			return nil
		}
		if err := conn.Flush(); err != nil {
			return err
		}
		st.RoundTrips++
		st.Series += sent
		for range sent {
			res, err := redis.Int64s(redis.ReceiveContext(conn, ctx))
			if err != nil {
				var rerr redis.Error
				if errors.As(err, &rerr) {
					// One bad key (of another type, say) must not stop
					// the pass.
					c.onError(fmt.Errorf("cleaner: %w", err))
					continue
				}
				return err
			}
			st.FieldsDeleted += res[0]
			st.SeriesRemoved += int(res[1])
		}
		if !more {
			return nil
		}
		if page, err = redis.Strings(redis.ReceiveContext(conn, ctx)); err != nil {
			return fmt.Errorf("read known set: %w", err)
		}
	}
}

func newToken() (string, error) {
	b := make([]byte, 12)
	if _, err := crand.Read(b); err != nil {
		return "", fmt.Errorf("lock token: %w", err)
	}
	return hex.EncodeToString(b), nil
}

// cleanScript trims one series. Fields are compared as numbers; fields that
// are not numbers were not written by Pulse and are left alone.
//
// KEYS: count hash, known set. ARGV: member, cutoff, samples.
// Returns {fields deleted, 1 if the series was removed from the known set}.
var cleanScript = redis.NewScript(2, cleanSource)

const cleanSource = `
local cutoff = tonumber(ARGV[2])
local keep = tonumber(ARGV[3])
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
if redis.call('EXISTS', KEYS[1]) == 0 then
  return {#del, redis.call('ZREM', KEYS[2], ARGV[1])}
end
return {#del, 0}
`

// unlockScript deletes the lock only if it still holds our token.
var unlockScript = redis.NewScript(1, `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)
