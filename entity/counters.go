package entity

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pulse-dev/pulse/entity/internal/redisstore"
	"github.com/pulse-dev/pulse/entity/internal/sqlstore"
)

// Counters keeps per-entity counts in SQL, cached in Redis. All methods
// are safe for concurrent use.
//
// Its work is split by role: the cacheSide keeps entities in Redis (the
// key layout, the read leases, the outage and its sweep) and the flusher
// moves counts Redis and memory hold to SQL (write-behind, buffered
// fields, hot slots). The three share one state.
type Counters struct {
	*state
	cs *cacheSide
	fl *flusher
}

// cacheSide is the Counters' role in Redis: the layout entities are kept
// in, the leases that warm them, and the outage while Redis fails.
type cacheSide struct{ *state }

// flusher is the Counters' role of writing to SQL what Redis and memory
// hold: write-behind deltas, buffered fields and hot slots.
type flusher struct {
	*state
	cs   *cacheSide
	inTx func(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) error // Counters.InTx
}

// state is what the Counters' roles share: the configuration, the stores
// and the background loop.
type state struct {
	clock          Clock
	sql            *sqlstore.Store
	cache          *redisstore.Client // nil without a pool
	keys           redisstore.Keys
	kinds          map[string]*kindSpec
	order          []string
	ttl            time.Duration
	writeBehind    bool
	layout         Layout
	flushInterval  time.Duration
	foldInterval   time.Duration
	bufferInterval time.Duration
	inactiveAfter  time.Duration
	onError        func(error)
	hooks          hooks

	instance  string // random, makes tokens and batch ids unique
	seq       atomic.Uint64
	cacheDown atomic.Bool // Redis failed; SQL answers until the probe succeeds
	outage    outageLock  // writes recording stale entries share it; see whileDown
	flushMu   sync.Mutex  // one flush at a time in this process

	buf    *buffer  // buffered fields' deltas not yet written
	unread *unreads // unread counts, built on the methods above

	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

// New validates cfg and returns the Counters. It does no I/O: call
// Migrate before serving.
//
// New starts the one background goroutine (write-behind and buffered
// flushes, the sweep of stale cache entries, folding hot slots) because
// its lifetime is the Counters' own, New to Close, whether or not the app
// lets Migrate create the tables. It sleeps until its first tick, one
// FlushInterval, BufferInterval or FoldInterval later, so New itself
// touches neither SQL nor Redis.
func New(ctx context.Context, cfg Config) (*Counters, error) {
	kinds, order, err := cfg.validate()
	if err != nil {
		return nil, err
	}
	id := make([]byte, 8)
	if _, err := crand.Read(id); err != nil {
		return nil, fmt.Errorf("entity: instance id: %w", err)
	}
	st := &state{
		clock:          cfg.Clock,
		sql:            sqlstore.New(cfg.DB, sqlstore.Dialect(cfg.Dialect), cfg.Table, cfg.StatementTimeout),
		keys:           redisstore.NewKeys(cfg.Prefix),
		kinds:          kinds,
		order:          order,
		ttl:            cfg.TTL,
		writeBehind:    cfg.WriteBehind,
		layout:         cfg.Layout,
		flushInterval:  cfg.FlushInterval,
		foldInterval:   cfg.FoldInterval,
		bufferInterval: cfg.BufferInterval,
		inactiveAfter:  cfg.InactiveAfter,
		onError:        cfg.OnError,
		hooks:          cfg.hooks,
		instance:       hex.EncodeToString(id),
		buf:            newBuffer(),
		outage:         newOutageLock(),
		done:           make(chan struct{}),
	}
	if cfg.Pool != nil {
		st.cache = redisstore.NewClient(cfg.Pool, cfg.CacheTimeout)
	}
	cs := &cacheSide{st}
	c := &Counters{state: st, cs: cs, fl: &flusher{state: st, cs: cs}}
	c.fl.inTx = c.InTx
	c.unread = newUnreads(c, cfg.MaxFollowees)
	loopCtx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	go c.loop(loopCtx)
	return c, nil
}

// Migrate creates the tables that do not exist (Config.Table and four
// more next to it), then readies the cache for this process: it finishes
// a write-behind flush a previous process left half done and drops the
// cache entries recorded as stale, so nothing stale is served; failures
// of that part go to OnError and are retried in the background. Safe to
// run on every start, from several processes at once.
func (c *Counters) Migrate(ctx context.Context) error {
	if err := c.sql.Migrate(ctx, unreadSeqs...); err != nil {
		return fmt.Errorf("entity: create tables: %w", err)
	}
	c.tick(ctx)
	return nil
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

func (c *state) newToken() string {
	return c.instance + "." + strconv.FormatUint(c.seq.Add(1), 36)
}

func (c *state) newBatchID() string {
	return "b" + c.newToken()
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
			if err := c.fl.flushBuffered(ctx); err != nil && ctx.Err() == nil {
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
	if c.cache == nil {
		return
	}
	if !c.cs.cacheUp() {
		c.cs.probe(ctx)
		return
	}
	if _, err := c.cs.sweep(ctx); err != nil && ctx.Err() == nil {
		c.onError(err)
	}
	if err := c.fl.flush(ctx); err != nil && ctx.Err() == nil {
		c.onError(err)
	}
}

// batchRetention is how long applied batch ids are kept; a flush left half
// done longer than that by every process could be applied twice.
const batchRetention = 7 * 24 * time.Hour

// maintain is the slow background work: fold hot slots, prune old batch
// ids and the read marks of inactive users.
func (c *Counters) maintain(ctx context.Context) {
	if err := c.fl.fold(ctx); err != nil && ctx.Err() == nil {
		c.onError(err)
	}
	if err := c.sql.PruneBatches(ctx, c.clock.Now().Add(-batchRetention)); err != nil && ctx.Err() == nil {
		c.onError(err)
	}
	if c.inactiveAfter > 0 {
		if _, err := c.PruneInactive(ctx, c.clock.Now().Add(-c.inactiveAfter)); err != nil && ctx.Err() == nil {
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
		err = c.fl.flushBuffered(ctx)
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
