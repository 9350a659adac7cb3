package entity

import (
	"context"
	crand "crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// Counters keeps per-entity counts in SQL, cached in Redis. All methods
// are safe for concurrent use.
type Counters struct {
	clock            interface{ Now() time.Time }
	db               *sql.DB
	q                queries
	pool             Pool
	router           *redisconn.Router // nil without a pool
	kinds            map[string]*kindSpec
	order            []string
	prefix           string
	ttl              time.Duration
	writeBehind      bool
	flushInterval    time.Duration
	foldInterval     time.Duration
	cacheTimeout     time.Duration
	statementTimeout time.Duration
	bufferInterval   time.Duration
	inactiveAfter    time.Duration
	maxFollowees     int
	onError          func(error)
	hooks            hooks

	pendingKey  string // write-behind deltas not yet taken by a flush
	flushingKey string // the batch a flush is persisting
	epochKey    string // moves whenever a flush starts or finishes a batch

	instance  string // random, makes tokens and batch ids unique
	seq       atomic.Uint64
	cacheDown atomic.Bool  // Redis failed; SQL answers until the probe succeeds
	outage    sync.RWMutex // writes recording stale entries read-lock it; see whileDown
	flushMu   sync.Mutex   // one flush at a time in this process

	buf *buffer // buffered fields' deltas not yet written

	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

// New validates cfg, creates the SQL tables if they do not exist, finishes
// a write-behind flush a previous process left half done, and starts the
// background work (write-behind and buffered flushes, the sweep of stale
// cache entries, folding hot slots). Call Close to stop it.
func New(ctx context.Context, cfg Config) (*Counters, error) {
	kinds, order, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	id := make([]byte, 8)
	if _, err := crand.Read(id); err != nil {
		return nil, fmt.Errorf("entity: instance id: %w", err)
	}
	c := &Counters{
		db:               cfg.DB,
		q:                newQueries(cfg.Dialect, cfg.Table),
		pool:             cfg.Pool,
		router:           routerFor(cfg.Pool),
		kinds:            kinds,
		order:            order,
		prefix:           cfg.Prefix,
		ttl:              cfg.TTL,
		writeBehind:      cfg.WriteBehind,
		flushInterval:    cfg.FlushInterval,
		foldInterval:     cfg.FoldInterval,
		cacheTimeout:     cfg.CacheTimeout,
		statementTimeout: cfg.StatementTimeout,
		bufferInterval:   cfg.BufferInterval,
		inactiveAfter:    cfg.InactiveAfter,
		maxFollowees:     cfg.MaxFollowees,
		onError:          cfg.OnError,
		clock:            cfg.Clock,
		hooks:            cfg.hooks,
		pendingKey:       cfg.Prefix + "pulse:ent-pending",
		flushingKey:      cfg.Prefix + "pulse:ent-pending:flushing",
		epochKey:         cfg.Prefix + "pulse:ent-epoch",
		instance:         hex.EncodeToString(id),
		buf:              newBuffer(),
		done:             make(chan struct{}),
	}
	if err := c.createSchema(ctx); err != nil {
		return nil, err
	}
	for _, name := range []string{markNotices, markDot} {
		if _, err := c.exec(ctx, c.q.seqInit, name); err != nil {
			return nil, fmt.Errorf("entity: create tables: %w", err)
		}
	}
	// Finish a flush a previous process left half done, and sweep what it
	// recorded as stale, before serving; failures are retried in the
	// background.
	c.tick(ctx)
	loopCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go c.loop(loopCtx)
	return c, nil
}

// Kinds lists the declared kinds and their fields, in declaration order.
func (c *Counters) Kinds() []KindInfo {
	out := make([]KindInfo, 0, len(c.order))
	for _, name := range c.order {
		k := c.kinds[name]
		out = append(out, KindInfo{Name: k.name, Fields: append([]string(nil), k.fields...)})
	}
	return out
}

func (c *Counters) kind(name string) (*kindSpec, error) {
	k, ok := c.kinds[name]
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownKind, name)
	}
	return k, nil
}

func (c *Counters) field(kind, field string) (*kindSpec, int, error) {
	k, err := c.kind(kind)
	if err != nil {
		return nil, 0, err
	}
	i, ok := k.index[field]
	if !ok {
		return nil, 0, fmt.Errorf("%w %q of kind %q", ErrUnknownField, field, kind)
	}
	return k, i, nil
}

func (c *Counters) newToken() string {
	return c.instance + "." + strconv.FormatUint(c.seq.Add(1), 36)
}

func (c *Counters) loop(ctx context.Context) {
	defer close(c.done)
	flushes := time.NewTicker(c.flushInterval)
	defer flushes.Stop()
	folds := time.NewTicker(c.foldInterval)
	defer folds.Stop()
	buffered := time.NewTicker(c.bufferInterval)
	defer buffered.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-flushes.C:
			c.tick(ctx)
		case <-buffered.C:
			if err := c.flushBuffered(ctx); err != nil && ctx.Err() == nil {
				c.onError(err)
			}
		case <-folds.C:
			c.maintain(ctx)
		}
	}
}

// tick is the frequent background work: probe Redis while it is down,
// sweep stale entries, flush write-behind deltas.
func (c *Counters) tick(ctx context.Context) {
	if c.pool == nil {
		return
	}
	if !c.cacheUp() {
		c.probe(ctx)
		return
	}
	if _, err := c.sweep(ctx); err != nil && ctx.Err() == nil {
		c.onError(err)
	}
	if err := c.flush(ctx); err != nil && ctx.Err() == nil {
		c.onError(err)
	}
}

// batchRetention is how long applied batch ids are kept; a flush left half
// done longer than that by every process could be applied twice.
const batchRetention = 7 * 24 * time.Hour

// maintain is the slow background work: fold hot slots, prune old batch
// ids and the read marks of inactive users.
func (c *Counters) maintain(ctx context.Context) {
	if err := c.fold(ctx); err != nil && ctx.Err() == nil {
		c.onError(err)
	}
	cutoff := c.now().Add(-batchRetention).Unix()
	if _, err := c.exec(ctx, c.q.prune, cutoff); err != nil && ctx.Err() == nil {
		c.onError(fmt.Errorf("entity: prune batches: %w", err))
	}
	if c.inactiveAfter > 0 {
		if _, err := c.PruneInactive(ctx, c.now().Add(-c.inactiveAfter)); err != nil && ctx.Err() == nil {
			c.onError(err)
		}
	}
}

// Close stops the background work and flushes what is pending: buffered
// deltas and, in write-behind mode, the deltas in Redis; it retries until
// it succeeds or ctx ends.
func (c *Counters) Close(ctx context.Context) error {
	first := false
	c.closeOnce.Do(func() {
		first = true
		c.cancel()
		<-c.done
	})
	if !first {
		return nil
	}
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		err = c.flushBuffered(ctx)
		if err == nil && c.writeBehind {
			err = c.Flush(ctx)
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
	return err
}

// stop ends the background work without flushing, as a crash would.
func (c *Counters) stop() {
	c.closeOnce.Do(func() {
		c.cancel()
		<-c.done
	})
}

// now is the time by Config.Clock.
func (c *Counters) now() time.Time {
	if c.clock == nil {
		return time.Now()
	}
	return c.clock.Now()
}

// routerFor is the Router of the cache's pool, nil without one.
func routerFor(p Pool) *redisconn.Router {
	if p == nil {
		return nil
	}
	return redisconn.NewRouter(p)
}
