package cleaner

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/pulse-dev/pulse/internal/ratelog"
	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries"
)

// Defaults for Config's zero fields.
const (
	DefaultInterval = 60 * time.Second
	DefaultSamples  = 120
	DefaultPageSize = 1000
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
	// (default 1000).
	PageSize int
	// Clock tells which buckets are the newest; nil means the system clock.
	Clock timeseries.Clock
	// OnError receives the errors of passes run in the background; nil
	// logs them with log/slog, at most one line a minute.
	OnError func(error)
	// IncidentRetention is how long an incident kept by the forecasts
	// (forecast/fromstore) is kept after its end (default
	// DefaultIncidentRetention); negative keeps them all.
	IncidentRetention time.Duration
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
	// Series counts the series whose precision was due: those cleaned
	// and those Deferred.
	Series int
	// FieldsDeleted counts the buckets deleted.
	FieldsDeleted int64
	// SeriesRemoved counts the series removed from the known set because
	// their hash was empty.
	SeriesRemoved int
	// Deferred counts the due series left for a later pass: their node
	// failed or no longer served their hash (its slot was being moved).
	Deferred int
	// IncidentsRemoved counts the incident records deleted for being
	// older than the retention.
	IncidentsRemoved int
	// RoundTrips counts the waits for Redis replies the pass made; on a
	// cluster each is one pipeline per node, the nodes served at once.
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
	schema   timeseries.Schema
	interval time.Duration
	samples  int
	pageSize int
	// retention is Config.IncidentRetention, its default filled in.
	retention time.Duration
	clock     timeseries.Clock
	onError   func(error)
	lockKey   string
	lockTTL   time.Duration

	passMu   sync.Mutex // one pass at a time; guards the fields below
	passes   int64
	perKey   bool // the node script does not compile: one trim script call per series
	deferred bool // the last pass deferred series

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
		st := r.Store()
		if cfg.Pool == nil {
			cfg.Pool = st.Pool()
		}
		if cfg.Schema.Prefix == "" && cfg.Schema.Precisions == nil {
			cfg.Schema = st.Schema()
		}
		if cfg.Clock == nil {
			cfg.Clock = st.Clock()
		}
	}
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
	if cfg.IncidentRetention == 0 {
		cfg.IncidentRetention = DefaultIncidentRetention
	}
	if cfg.Clock == nil {
		cfg.Clock = timeseries.SystemClock{}
	}
	if cfg.OnError == nil {
		cfg.OnError = ratelog.New("pulse: cleaner", time.Minute)
	}
	stopped, stop := context.WithCancel(context.Background())
	c := &Cleaner{
		router:    redisconn.NewRouter(cfg.Pool),
		schema:    schema,
		interval:  cfg.Interval,
		samples:   cfg.Samples,
		pageSize:  cfg.PageSize,
		retention: cfg.IncidentRetention,
		clock:     cfg.Clock,
		onError:   cfg.OnError,
		lockKey:   schema.Prefix + "pulse:cleaner:lock",
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
