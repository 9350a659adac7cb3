package timeseries

import (
	"cmp"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pulse-dev/pulse/internal/ratelog"
	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// Pool hands out Redis connections: a *redis.Pool for one server, or a
// *redisc.Cluster for Redis Cluster. The caller owns it.
type Pool = redisconn.Pool

const (
	maxBackoff = 30 * time.Second
	// maxBatchDeltas bounds one flush script, so that catching up after a
	// long outage does not stall Redis with one huge call.
	maxBatchDeltas = 8192
)

// Config configures a Recorder. Nil and zero fields take the defaults.
type Config struct {
	// Pool is the caller's *redis.Pool or *redisc.Cluster; required. Give
	// it short dial, read and write timeouts: a Redis outage then costs a
	// flush a bounded wait instead of piling up goroutines.
	Pool Pool
	// Schema sets the key prefix and precisions.
	Schema Schema
	// FlushInterval is how often aggregated hits are written (default 1 s).
	FlushInterval time.Duration
	// FlushTimeout bounds one write to Redis (default 2 s).
	FlushTimeout time.Duration
	// WriteThrough makes Record write its hits before it returns, through
	// the same idempotent flush as the background writer (concurrent
	// calls share one write): no loss window, one Redis round trip per
	// request. While Redis fails, Record returns at once and the hits wait
	// for the background writer.
	WriteThrough bool
	// WaitReplicas, when > 0, counts a flush as written only once WAIT
	// says that many replicas have it; otherwise it is sent again, which
	// the idempotence marker makes safe. Then a master lost right after a
	// flush loses no hit.
	WaitReplicas int
	// SpillDir, when set, is where Close writes the hits it could not
	// send because Redis was unreachable; the next Recorder started with
	// the same directory sends them once and removes the file.
	SpillDir string
	// MaxNames caps the distinct series names (default 1000). Past it, new
	// names fold into the series OverflowName, so the key count stays
	// bounded whatever clients send.
	MaxNames int
	// OverflowName is the series that takes hits of names over the cap
	// (default "overflow").
	OverflowName string
	// MaxPendingAge bounds how long hits are kept in memory while Redis is
	// unreachable (default 15 min). Older hits are dropped and counted in
	// Health.DroppedHits.
	MaxPendingAge time.Duration
	// Clock stamps hits and times retries; nil means the system clock.
	// With a *ManualClock the flush ticker and Close's pause between
	// attempts run on it too; with any other Clock they run on the
	// system's timers.
	Clock Clock
	// OnError receives flush errors; nil logs them with log/slog, at most
	// one line every 10 s.
	OnError func(error)

	// DisableDurations turns off request durations; the middlewares
	// then read no clock per request either. Otherwise they record each
	// request's duration in its hits, route and app-named series, as
	// histograms flushed with the hits (see the package doc,
	// "Durations").
	DisableDurations bool
	// DurationAccuracy is the relative error of a duration quantile, 0.01
	// to 0.05 (default 0.05). Finer costs memory in Redis: see the README.
	DurationAccuracy float64
	// DurationMin and DurationMax bound the durations given bins of their
	// own (default 10 µs and 10 min); shorter and longer ones are counted
	// in an underflow and an overflow bin.
	DurationMin, DurationMax time.Duration
	// SlowThresholds, at most MaxSlowThresholds of them, each above 0,
	// count the requests slower than each, exactly, as they are
	// recorded: a hit in SlowSeries(name, threshold) beside each series
	// name a request is timed in. A latency SLO (package alert) reads
	// them as an availability SLO reads the 5xx class, instead of the
	// histograms. Nil: none. Needs durations.
	SlowThresholds []time.Duration

	// DisableVisitors turns off unique visitors. Otherwise the
	// middlewares count each request's visitor, a hash of its address and
	// User-Agent under a salt that changes every UTC day, in HyperLogLogs
	// of the hits series (and of routes and app-named series they opt
	// in), at Schema.VisitorPrecisions (1 min, 5 min, 1 h, 1 day; see
	// the README, "Visitors and privacy").
	DisableVisitors bool
}

// Recorder counts hits in process and writes them to Redis in the
// background. All methods are safe for concurrent use.
type Recorder struct {
	schema        series.Keys
	counts        counters        // the series and the request path's stripes
	durations     *durations      // nil: durations off
	slow          []time.Duration // Config.SlowThresholds, ascending
	started       int64           // unix second of NewRecorder: slow requests are counted from it
	visitors      *visitorState   // nil: visitors off
	clock         Clock
	interval      time.Duration
	writeThrough  bool
	spillDir      string
	maxPendingAge int64
	onError       func(error)
	id            string  // this process's name, in its markers and spill files
	sender        *sender // builds, sends and settles the batches

	mu             sync.Mutex // guards the fields below, the sender's and the counters' names
	ledger         *ledger
	status         flushStatus
	closed         bool
	slowRegistered bool // Redis has since when r.slow are counted

	timers timerClock // the clock's, for the flusher's waits

	flushMu sync.Mutex // one flush at a time

	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

// NewRecorder validates cfg and starts the background flusher. Call Close
// to stop it and write what is pending. With Config.SpillDir set, hits a
// previous Recorder spilled there are sent first.
func NewRecorder(cfg Config) (*Recorder, error) {
	coarse := cfg.Clock == nil || cfg.Clock == Clock(SystemClock{})
	cfg, schema, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	m, err := newDurationMapping(cfg)
	if err != nil {
		return nil, err
	}
	slow, err := slowThresholds(cfg)
	if err != nil {
		return nil, err
	}
	id := make([]byte, 8)
	if _, err := crand.Read(id); err != nil {
		return nil, fmt.Errorf("timeseries: instance id: %w", err)
	}
	name := hex.EncodeToString(id)
	r := &Recorder{
		schema:        schema,
		slow:          slow,
		started:       cfg.Clock.Now().Unix(),
		clock:         cfg.Clock,
		interval:      cfg.FlushInterval,
		writeThrough:  cfg.WriteThrough,
		spillDir:      cfg.SpillDir,
		maxPendingAge: int64(cfg.MaxPendingAge / time.Second),
		onError:       cfg.OnError,
		id:            name,
		sender:        newSender(redisconn.NewRouter(cfg.Pool), cfg, schema, schema.Prefix+"pulse:flushed:"+name),
		done:          make(chan struct{}),
		timers:        timersOf(cfg.Clock),
	}
	r.counts.coarse, r.counts.clock = coarse, cfg.Clock
	r.counts.maxNames, r.counts.names = cfg.MaxNames, map[string]*Counter{}
	if m != nil {
		r.durations = newDurations(m)
	}
	r.ledger = newLedger(schema, r.maxPendingAge, r.sender.markerFor, m)
	r.sender.mu, r.sender.ledger, r.sender.status, r.sender.removeSpill = &r.mu, r.ledger, &r.status, r.removeSpill
	if !cfg.DisableVisitors {
		if r.visitors = newVisitorState(r.visitorEnv()); r.visitors != nil {
			r.visitors.start()
		}
	}
	r.status.health.RedisUp = true
	r.counts.overflow = r.newCounterLocked(cfg.OverflowName, true)
	if r.spillDir != "" {
		if err := r.loadSpills(); err != nil {
			return nil, err
		}
	}
	r.start()
	return r, nil
}

// withDefaults checks cfg and fills its zero fields.
func (cfg Config) withDefaults() (Config, series.Keys, error) {
	if cfg.Pool == nil {
		return cfg, series.Keys{}, errors.New("timeseries: Config.Pool is nil")
	}
	schema, err := series.Keys(cfg.Schema).Normalize()
	if err != nil {
		return cfg, schema, err
	}
	if cfg.FlushInterval < 0 || cfg.FlushTimeout < 0 || cfg.MaxNames < 0 || cfg.MaxPendingAge < 0 || cfg.WaitReplicas < 0 {
		return cfg, schema, errors.New("timeseries: negative FlushInterval, FlushTimeout, MaxNames, MaxPendingAge or WaitReplicas")
	}
	cfg.FlushInterval = cmp.Or(cfg.FlushInterval, series.DefaultFlushInterval)
	cfg.FlushTimeout = cmp.Or(cfg.FlushTimeout, series.DefaultFlushTimeout)
	cfg.MaxNames = cmp.Or(cfg.MaxNames, series.DefaultMaxNames)
	cfg.OverflowName = cmp.Or(cfg.OverflowName, series.DefaultOverflowName)
	if err := series.ValidateName(cfg.OverflowName); err != nil {
		return cfg, schema, fmt.Errorf("timeseries: OverflowName: %w", err)
	}
	cfg.MaxPendingAge = cmp.Or(cfg.MaxPendingAge, series.DefaultMaxPendingAge)
	if cfg.Clock == nil {
		cfg.Clock = SystemClock{}
	}
	if cfg.OnError == nil {
		cfg.OnError = ratelog.New("pulse: recorder", 10*time.Second)
	}
	return cfg, schema, nil
}

// Counter returns the series called name, creating it on first use. Names
// are checked here, once, not per hit. Past Config.MaxNames distinct names
// it returns the overflow series and counts the refusal.
func (r *Recorder) Counter(name string) (*Counter, error) {
	if err := series.ValidateName(name); err != nil {
		return nil, err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if c := r.counts.lookupLocked(name); c != nil {
		return c, nil
	}
	// name may be a view into a buffer its caller reuses (fasthttp's): the
	// map keeps a copy, made once per name.
	name = strings.Clone(name)
	c := r.newCounterLocked(name, true)
	r.counts.names[name] = c
	return c, nil
}

// newCounterLocked makes the series name; a timed one keeps durations
// and slow series when its recorder does.
func (r *Recorder) newCounterLocked(name string, timed bool) *Counter {
	var s seriesKeys
	for _, p := range r.schema.Precisions {
		key := r.schema.CountKey(p, name)
		s.keys = append(s.keys, key)
		s.members = append(s.members, series.Member(p, name))
		s.groups = append(s.groups, r.sender.groupOf(key))
	}
	if r.durations != nil && timed {
		s.lat = timedKeys(r.schema, name)
	}
	c := &Counter{rec: r, id: r.ledger.addSeries(s), name: name, timed: s.lat != nil}
	if c.timed && len(r.slow) > 0 {
		c.slow = make(slowSlots, len(r.slow))
	}
	for i := range c.rings {
		for j := range c.rings[i].slots {
			c.rings[i].slots[j].sec.Store(emptySlot)
		}
	}
	r.counts.all = append(r.counts.all, c)
	return c
}

// Flush writes everything recorded so far now, ignoring any retry
// backoff, and returns the error of the attempt.
func (r *Recorder) Flush(ctx context.Context) error { return r.flush(ctx, true) }

// Close stops the flusher and writes everything pending, retrying until
// it succeeds or ctx ends. Then, with Config.SpillDir set, what is left is
// written to a spill file there and Close returns nil; otherwise the error
// says how many hits and visitor ids were not written. Hits recorded after
// Close are not written.
func (r *Recorder) Close(ctx context.Context) error {
	r.closeOnce.Do(func() {
		r.mu.Lock()
		r.closed = true
		r.mu.Unlock()
		r.cancel()
		<-r.done
	})
	for again := 0; ; {
		err := r.flush(ctx, true)
		if err == nil {
			// Hits recorded while that flush ran (requests still
			// finishing) get a few more; under traffic that goes on
			// after Close, Close must still end.
			if r.Health().PendingHits == 0 {
				_ = r.beat(ctx, true) // nothing of this process is missing
				return nil
			}
			if again++; again > 3 {
				return nil
			}
			continue
		}
		if !r.sleep(ctx, closeRetryWait) {
			if r.spillDir != "" {
				var visitorsErr error
				if r.visitors != nil {
					visitorsErr = r.visitors.spill()
				}
				return errors.Join(visitorsErr, r.spill())
			}
			h := r.Health()
			return fmt.Errorf("timeseries: close: %d hits and %d visitor ids not written: %w", h.PendingHits, h.PendingVisitors, err)
		}
	}
}

// closeRetryWait is Close's pause between failed flushes.
const closeRetryWait = 100 * time.Millisecond

// sleep waits d on the clock; false means ctx ended first.
func (r *Recorder) sleep(ctx context.Context, d time.Duration) bool {
	t := r.timers.newTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// drainLocked moves what the request path holds, the counters' rings and
// the durations' stripes, into the ledger.
func (r *Recorder) drainLocked() {
	if r.durations != nil {
		r.durations.drainLocked(&r.counts, r.ledger)
	}
	r.counts.drainLocked(r.ledger)
}
