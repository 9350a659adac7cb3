package alert

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries"
)

// HealthSource is what a *timeseries.Recorder offers the evaluator: its
// flushes tell whether Redis holds every hit yet.
type HealthSource interface {
	Health() timeseries.Health
}

// Config sets up an Evaluator. Pool is required; every other field has a
// default.
type Config struct {
	// Pool and Schema are those of the app's recorder.
	Pool   timeseries.Pool
	Schema timeseries.Schema
	// Rules are the rules to evaluate; nil means DefaultRules. They are
	// filled with defaults and validated by New.
	Rules []Rule
	// Recorder is the app's recorder. While its flushes fail or lag, no
	// rule over series fires or resolves; Health rules read it. Without
	// one, Health rules are an error (the default ones are left out).
	// Latency rules read durations binned as a *timeseries.Recorder bins
	// them (its DurationAccuracy, DurationMin, DurationMax); without one,
	// as the defaults do.
	Recorder HealthSource
	// Detector answers Anomaly rules.
	Detector Detector
	// Receivers get the notifications.
	Receivers []Receiver
	// Clock tells the evaluation time; nil means the system clock.
	Clock timeseries.Clock
	// Interval is the time between evaluations; default 30 s.
	Interval time.Duration
	// LeaseTTL is how long the evaluating instance's lease lasts unless
	// renewed (at each evaluation); default 3 × Interval.
	LeaseTTL time.Duration
	// Instance names this instance in the lease and in Health alerts;
	// default host name, process id and a random suffix.
	Instance string
	// DashboardURL is the dashboard's address, for each alert's link to
	// its series (generatorURL).
	DashboardURL string
	// ResendEvery is how often a firing alert is posted to Alertmanager
	// again; default 1 min. Alertmanager lets it lapse after 4 × that.
	ResendEvery time.Duration
	// MaxBuckets bounds the buckets one window is read in, which picks
	// its precision; default 20.
	MaxBuckets int
	// History is how many transitions are kept; default 100.
	History int
	// QueueSize bounds each receiver's queue; default 256.
	QueueSize int
	// MinBackoff and MaxBackoff bound the wait between attempts to
	// deliver (default 1 s and 30 s); GiveUpAfter ends the attempts
	// (default 10 min), counting the notification undelivered.
	MinBackoff, MaxBackoff, GiveUpAfter time.Duration
	// StaleAfter is how old a recorder's last good flush may be before
	// the data counts as missing; default 3 × its FlushInterval, at
	// least 3 s. It applies to Config.Recorder and, through the
	// heartbeats they publish in Redis, to every other instance's.
	StaleAfter time.Duration
	// GoneAfter is how long an instance's recorder may go unheard
	// before it is forgotten, its heartbeat deleted; default 15 min,
	// MaxPendingAge's default. It also bounds how long a silent
	// instance that reported hits pending, with a recorder too old to
	// publish its MaxPendingAge, holds resolves back.
	GoneAfter time.Duration
	// RouteRefresh is how often the route list of EveryRoute rules is
	// read again; default 1 min.
	RouteRefresh time.Duration
	// Logger gets delivery failures and lease changes; default slog's.
	Logger *slog.Logger
}

// defaultMaxBuckets reads the default windows at 1 min, 5 min, 1 h and 5 h.
const defaultMaxBuckets = 20

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Interval, 30*time.Second)
	def(&c.LeaseTTL, 3*c.Interval)
	def(&c.ResendEvery, time.Minute)
	def(&c.MinBackoff, time.Second)
	def(&c.MaxBackoff, 30*time.Second)
	def(&c.GiveUpAfter, 10*time.Minute)
	def(&c.RouteRefresh, time.Minute)
	def(&c.GoneAfter, defaultGoneAfter)
	if c.MaxBuckets <= 0 {
		c.MaxBuckets = defaultMaxBuckets
	}
	if c.History <= 0 {
		c.History = 100
	}
	if c.QueueSize <= 0 {
		c.QueueSize = 256
	}
	if c.Clock == nil {
		c.Clock = timeseries.SystemClock{}
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Instance == "" {
		host, _ := os.Hostname()
		b := make([]byte, 4)
		rand.Read(b)
		c.Instance = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), hex.EncodeToString(b))
	}
	return c
}

// Evaluator evaluates an app's rules and sends its notifications. Every
// instance of the app may run one: a lease in Redis picks the one that
// evaluates, and its fencing token guards each write of alert state.
type Evaluator struct {
	cfg       Config
	rules     []Rule
	local     []Rule // Health rules, evaluated by every instance
	schema    timeseries.Schema
	store     *timeseries.Store
	durations *timeseries.Store // the recorder's when there is one: its bins
	st        *stateStore
	out       []*outbox
	startedAt time.Time

	// cache and settle are the evaluating goroutine's alone.
	cache  settled       // buckets no recorder adds to any more
	settle time.Duration // how long after its end a bucket is settled
	waited bool          // the last evaluation's resolves waited

	mu    sync.Mutex
	mem   memory
	stats evalStats

	bg      context.Context
	stop    context.CancelFunc
	wg      sync.WaitGroup
	runDone chan struct{}
	running bool
	closed  bool
}

// New checks cfg and returns an evaluator; its delivery starts at once,
// its evaluations with Run.
func New(cfg Config) (*Evaluator, error) {
	if cfg.Pool == nil {
		return nil, errors.New("alert: nil pool")
	}
	cfg = cfg.withDefaults()
	schema, err := cfg.Schema.Normalize()
	if err != nil {
		return nil, fmt.Errorf("alert: %w", err)
	}
	rules := cfg.Rules
	if rules == nil {
		rules = DefaultRules()
		if cfg.Recorder == nil {
			rules = withoutKind(rules, Health)
		}
	}
	rules, err = ValidateRules(rules)
	if err != nil {
		return nil, err
	}
	e := &Evaluator{cfg: cfg, schema: schema, runDone: make(chan struct{})}
	if err := e.splitRules(rules); err != nil {
		return nil, err
	}
	if e.store, err = timeseries.NewStore(cfg.Pool, cfg.Schema, cfg.Clock); err != nil {
		return nil, fmt.Errorf("alert: %w", err)
	}
	e.durations = e.store
	if rs, ok := cfg.Recorder.(interface{ Store() *timeseries.Store }); ok {
		e.durations = rs.Store()
	}
	e.warnUncounted()
	e.st = &stateStore{r: redisconn.NewRouter(cfg.Pool), k: keysFor(schema.Prefix), history: cfg.History}
	e.mem = newMemory()
	e.startedAt = cfg.Clock.Now()
	e.cache.reset(e.startedAt)
	e.settle = minSettle
	e.bg, e.stop = context.WithCancel(context.Background())
	for _, r := range cfg.Receivers {
		if err := r.validate(); err != nil {
			return nil, err
		}
		o, err := newOutbox(r, cfg.QueueSize, cfg.MinBackoff, cfg.MaxBackoff, cfg.GiveUpAfter, e.delivered, e.fresh)
		if err != nil {
			return nil, err
		}
		e.out = append(e.out, o)
	}
	for _, o := range e.out {
		e.wg.Add(1)
		go func() { defer e.wg.Done(); o.run(e.bg) }()
	}
	return e, nil
}

func withoutKind(rules []Rule, k Kind) []Rule {
	var out []Rule
	for _, r := range rules {
		if r.Kind != k {
			out = append(out, r)
		}
	}
	return out
}

func (e *Evaluator) splitRules(rules []Rule) error {
	for _, r := range rules {
		switch {
		case r.Kind == Health && e.cfg.Recorder == nil:
			return fmt.Errorf("alert: rule %q: a health rule needs Config.Recorder", r.Name)
		case r.Kind == Anomaly && e.cfg.Detector == nil:
			return fmt.Errorf("alert: rule %q: an anomaly rule needs Config.Detector", r.Name)
		case r.Kind == Health:
			e.local = append(e.local, r)
		default:
			e.rules = append(e.rules, r)
		}
	}
	return nil
}

// Run evaluates every Interval until ctx ends or Close is called. It
// returns nil then; evaluation errors go to Health, not to Run.
func (e *Evaluator) Run(ctx context.Context) error {
	e.mu.Lock()
	if e.running || e.closed {
		e.mu.Unlock()
		return errors.New("alert: run: already running or closed")
	}
	e.running = true
	e.mu.Unlock()
	defer close(e.runDone)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-e.bg.Done():
			cancel()
		case <-ctx.Done():
		}
	}()
	// Before the recorder's first flush an evaluation decides nothing;
	// the next comes as soon as a flush may have landed.
	soon := min(e.cfg.Interval, time.Second)
	t := time.NewTimer(0)
	defer t.Stop()
	next := time.Now()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		wait := e.cfg.Interval
		if e.tick(ctx) {
			wait = soon
		}
		// As a ticker does: on time, but a late evaluation is not
		// followed by others back to back.
		if next = next.Add(wait); time.Until(next) < 0 {
			next = time.Now()
		}
		t.Reset(time.Until(next))
	}
}

// Close stops Run and delivery and gives the lease up, so another
// instance takes over at once rather than after LeaseTTL. Messages still
// queued are dropped: the next holder sends what was not marked sent.
func (e *Evaluator) Close(ctx context.Context) error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	running := e.running
	e.mu.Unlock()
	e.stop()
	done := make(chan struct{})
	go func() {
		e.wg.Wait()
		if running {
			<-e.runDone
		}
		close(done)
	}()
	select {
	case <-done:
	case <-ctx.Done():
		return fmt.Errorf("alert: close: %w", ctx.Err())
	}
	e.mu.Lock()
	e.mem.token = 0
	e.mu.Unlock()
	if err := e.st.release(ctx, e.cfg.Instance); err != nil {
		return fmt.Errorf("alert: close: release lease: %w", err)
	}
	return nil
}
