package entity

import (
	"context"
	crand "crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Counters keeps per-entity counts in SQL, cached in Redis. All methods
// are safe for concurrent use.
type Counters struct {
	db            *sql.DB
	q             queries
	pool          *redis.Pool
	kinds         map[string]*kindSpec
	order         []string
	prefix        string
	ttl           time.Duration
	writeBehind   bool
	flushInterval time.Duration
	foldInterval  time.Duration
	cacheTimeout  time.Duration
	onError       func(error)
	hooks         hooks

	pendingKey  string // write-behind deltas not yet taken by a flush
	flushingKey string // the batch a flush is persisting
	epochKey    string // moves whenever a flush starts or finishes a batch

	instance  string // random, makes tokens and batch ids unique
	seq       atomic.Uint64
	cacheDown atomic.Bool  // Redis failed; SQL answers until the probe succeeds
	outage    sync.RWMutex // writes recording stale entries read-lock it; see whileDown
	flushMu   sync.Mutex   // one flush at a time in this process

	cancel    context.CancelFunc
	done      chan struct{}
	closeOnce sync.Once
}

// New validates cfg, creates the SQL tables if they do not exist, finishes
// a write-behind flush a previous process left half done, and starts the
// background work (write-behind flushes, the sweep of stale
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
		db:            cfg.DB,
		q:             newQueries(cfg.Dialect, cfg.Table),
		pool:          cfg.Pool,
		kinds:         kinds,
		order:         order,
		prefix:        cfg.Prefix,
		ttl:           cfg.TTL,
		writeBehind:   cfg.WriteBehind,
		flushInterval: cfg.FlushInterval,
		foldInterval:  cfg.FoldInterval,
		cacheTimeout:  cfg.CacheTimeout,
		onError:       cfg.OnError,
		hooks:         cfg.hooks,
		pendingKey:    cfg.Prefix + "pulse:ent-pending",
		flushingKey:   cfg.Prefix + "pulse:ent-pending:flushing",
		epochKey:      cfg.Prefix + "pulse:ent-epoch",
		instance:      hex.EncodeToString(id),
		done:          make(chan struct{}),
	}
	if err := c.q.createSchema(ctx, c.db); err != nil {
		return nil, err
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

// Incr adds delta to one counter. In the default write-through mode it
// returns once SQL has the delta, and the cache has it too or has dropped
// the entity; with Redis down it still succeeds on SQL alone. In
// write-behind mode it returns once Redis has the delta.
func (c *Counters) Incr(ctx context.Context, kind string, id int64, field string, delta int64) error {
	k, fi, err := c.field(kind, field)
	if err != nil {
		return err
	}
	if delta == 0 {
		return nil
	}
	if delta > MaxDelta || delta < -MaxDelta {
		return fmt.Errorf("entity: incr: delta %d beyond ±%d", delta, int64(MaxDelta))
	}
	if c.pool == nil {
		return c.incrSQL(ctx, c.db, k, id, fi, delta)
	}
	for attempt := 0; attempt < 3; attempt++ {
		handled, err := c.whileDown(ctx, kind, id, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, c.q.incr, kind, id, field, slot(k, fi), delta, delta)
			return err
		})
		if handled {
			if err != nil {
				return fmt.Errorf("entity: incr: %w", err)
			}
			return nil
		}
		var done bool
		if c.writeBehind {
			done, err = c.incrBehind(ctx, kind, id, field, delta)
		} else {
			done, err = c.incrThrough(ctx, k, id, fi, delta)
		}
		if done {
			return err
		}
	}
	// The cache failed and came back under this call, more than once: SQL
	// alone, and the entry dropped.
	if err := c.incrSQL(ctx, c.db, k, id, fi, delta); err != nil {
		return err
	}
	return c.invalidate(context.WithoutCancel(ctx), kind, []int64{id})
}

// incrThrough is the write-through increment with the cache in use: mark
// the entity, write SQL, apply to the cache and withdraw the mark. done is
// false if the cache failed before anything was written.
func (c *Counters) incrThrough(ctx context.Context, k *kindSpec, id int64, fi int, delta int64) (done bool, err error) {
	kind, field := k.name, k.fields[fi]
	ek := c.entityKey(kind, id)
	token := c.newToken()
	if _, err := c.runScript(ctx, markWriteScript, marksKey(ek), token, writeMarkTTL.Milliseconds()); err != nil {
		c.cacheError(ctx, "incr", err)
		if ctx.Err() != nil {
			return true, fmt.Errorf("entity: incr: %w", err)
		}
		return false, nil
	}
	if err := c.incrSQL(ctx, c.db, k, id, fi, delta); err != nil {
		// SQL may have applied it even so (a lost reply): drop the entry.
		c.abandonWrite(ctx, kind, id, ek, token)
		return true, err
	}
	if h := c.hooks.afterSQLWrite; h != nil {
		h(kind, id)
	}
	if _, err := c.runScript(ctx, throughIncrScript, ek, leaseKey(ek), marksKey(ek), token, field, delta, coldBelow); err != nil {
		c.cacheError(ctx, "incr", err)
		c.abandonWrite(ctx, kind, id, ek, token)
	}
	return true, nil
}

// incrBehind is the write-behind increment. done is false if the command
// cannot have reached Redis, so SQL may take the delta instead.
func (c *Counters) incrBehind(ctx context.Context, kind string, id int64, field string, delta int64) (done bool, err error) {
	conn, cctx, cancel, err := c.conn(ctx)
	if err != nil {
		c.cacheError(ctx, "incr", err)
		if ctx.Err() != nil {
			return true, fmt.Errorf("entity: incr: %w", err)
		}
		return false, nil
	}
	defer cancel()
	defer conn.Close()
	ek := c.entityKey(kind, id)
	_, err = behindIncrScript.DoContext(cctx, conn, ek, leaseKey(ek), c.pendingKey, field, delta, coldBelow, pendingField(kind, id, field))
	if err != nil {
		c.cacheError(ctx, "incr", err)
		// Redis may have taken the delta before failing: writing it to SQL
		// as well could count it twice.
		return true, fmt.Errorf("entity: incr: write-behind: outcome unknown: %w", err)
	}
	return true, nil
}

// abandonWrite withdraws a write-through write's mark and drops the
// entity's entry, when the write's outcome in SQL or in the cache is not
// known; if Redis cannot be reached the entity is recorded as stale.
func (c *Counters) abandonWrite(ctx context.Context, kind string, id int64, ek, token string) {
	ctx = context.WithoutCancel(ctx)
	if c.cacheUp() {
		conn, cctx, cancel, err := c.conn(ctx)
		if err == nil {
			defer cancel()
			defer conn.Close()
			_ = conn.Send("ZREM", marksKey(ek), token)
			_ = conn.Send("DEL", ek, leaseKey(ek))
			_, err = redis.DoContext(conn, cctx, "")
		}
		if err == nil {
			return
		}
		c.cacheError(ctx, "incr", err)
	}
	// The mark, if it stands, expires on its own.
	if err := c.invalidate(ctx, kind, []int64{id}); err != nil {
		c.onError(err)
	}
}

// slot picks the SQL row an increment goes to: random among a hot field's
// slots, chosen here because MySQL would evaluate RAND() once per row.
func slot(k *kindSpec, fi int) int {
	if n := k.slots[fi]; n > 1 {
		return rand.IntN(n)
	}
	return 0
}

func (c *Counters) incrSQL(ctx context.Context, db sqlExecer, k *kindSpec, id int64, fi int, delta int64) error {
	err := retry(ctx, func() error {
		_, err := db.ExecContext(ctx, c.q.incr, k.name, id, k.fields[fi], slot(k, fi), delta, delta)
		return err
	})
	if err != nil {
		return fmt.Errorf("entity: incr: %w", err)
	}
	return nil
}

// whileDown is how writes go while the cache is out of use: fn's SQL
// write and a record that the entity's cache entry is stale, in one
// transaction. It does nothing (handled is false) if the cache is in use.
// The probe holds the outage lock for its last sweep and while it puts the
// cache back in use, so no stale record can commit after the sweep that
// lets the cache be trusted again.
func (c *Counters) whileDown(ctx context.Context, kind string, id int64, fn func(tx *sql.Tx) error) (handled bool, err error) {
	c.outage.RLock()
	defer c.outage.RUnlock()
	if c.cacheUp() {
		return false, nil
	}
	return true, inTx(ctx, c.db, func(tx *sql.Tx) error {
		if err := fn(tx); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, c.q.markStale, kind, id)
		return err
	})
}

// Reset sets one counter to 0, e.g. an unread count the user just read.
// Increments racing it land either before it (and are reset) or after it
// (and count); none is lost.
func (c *Counters) Reset(ctx context.Context, kind string, id int64, field string) error {
	if _, _, err := c.field(kind, field); err != nil {
		return err
	}
	if c.writeBehind && c.cacheUp() {
		// Deltas recorded before the reset must reach SQL before it.
		if err := c.Flush(ctx); err != nil {
			c.onError(fmt.Errorf("entity: reset: %w", err))
		}
	}
	if c.pool != nil {
		handled, err := c.whileDown(ctx, kind, id, func(tx *sql.Tx) error {
			_, err := tx.ExecContext(ctx, c.q.reset, kind, id, field)
			return err
		})
		if handled {
			if err != nil {
				return fmt.Errorf("entity: reset: %w", err)
			}
			return nil
		}
	}
	err := retry(ctx, func() error {
		_, err := c.db.ExecContext(ctx, c.q.reset, kind, id, field)
		return err
	})
	if err != nil {
		return fmt.Errorf("entity: reset: %w", err)
	}
	return c.invalidate(context.WithoutCancel(ctx), kind, []int64{id})
}

// Get returns every declared field of one entity.
func (c *Counters) Get(ctx context.Context, kind string, id int64) (Counts, error) {
	out, err := c.BatchGet(ctx, kind, []int64{id})
	if err != nil {
		return nil, err
	}
	return out[0], nil
}

// BatchGet returns the counts of several entities of one kind, in the
// order of ids (repeats allowed). Cached entities are read in one Redis
// round trip; the others are loaded from SQL in one query and cached in
// one more round trip. More than MaxBatchIDs ids is ErrTooManyIDs.
func (c *Counters) BatchGet(ctx context.Context, kind string, ids []int64) ([]Counts, error) {
	k, err := c.kind(kind)
	if err != nil {
		return nil, err
	}
	if len(ids) > MaxBatchIDs {
		return nil, fmt.Errorf("%w: %d, at most %d", ErrTooManyIDs, len(ids), MaxBatchIDs)
	}
	if len(ids) == 0 {
		return []Counts{}, nil
	}
	pos := make(map[int64]int, len(ids))
	uniq := make([]int64, 0, len(ids))
	for _, id := range ids {
		if _, ok := pos[id]; !ok {
			pos[id] = len(uniq)
			uniq = append(uniq, id)
		}
	}
	vals, err := c.read(ctx, k, uniq)
	if err != nil {
		return nil, err
	}
	nf := len(k.fields)
	out := make([]Counts, len(ids))
	for i, id := range ids {
		v := vals[pos[id]*nf:]
		m := make(Counts, nf)
		for j, f := range k.fields {
			m[f] = v[j]
		}
		out[i] = m
	}
	return out, nil
}

// read returns the values of distinct ids, field by field in declaration
// order, flattened.
func (c *Counters) read(ctx context.Context, k *kindSpec, ids []int64) ([]int64, error) {
	if c.cacheUp() {
		vals, ok, err := c.readCached(ctx, k, ids)
		if err != nil || ok {
			return vals, err
		}
	}
	vals := make([]int64, len(ids)*len(k.fields))
	if _, err := c.loadSQL(ctx, k, ids, "", vals); err != nil {
		return nil, err
	}
	return vals, nil
}

// readCached reads through the cache. ok is false when the cache failed
// and SQL alone should answer.
func (c *Counters) readCached(ctx context.Context, k *kindSpec, ids []int64) (vals []int64, ok bool, err error) {
	nf := len(k.fields)
	token := c.newToken()
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = c.entityKey(k.name, id)
	}
	vals = make([]int64, len(ids)*nf)
	for attempt := 0; attempt < 5; attempt++ {
		args := make([]any, 0, 6+2*len(ids)+nf)
		args = append(args, 2+2*len(ids), c.epochKey, c.flushingKey)
		for _, key := range keys {
			args = append(args, key)
		}
		for _, key := range keys {
			args = append(args, leaseKey(key))
		}
		args = append(args, token, leaseTTL.Milliseconds(), coldBelow)
		for _, f := range k.fields {
			args = append(args, f)
		}
		reply, err := redis.Values(c.runScript(ctx, readScript, args...))
		if err == nil && len(reply) != 2+len(ids) {
			err = fmt.Errorf("read script answered %d values for %d ids", len(reply), len(ids))
		}
		if err != nil {
			c.cacheError(ctx, "read", err)
			return nil, false, ctx.Err()
		}
		epoch, _ := redis.String(reply[0], nil)
		batch, _ := redis.String(reply[1], nil)
		var cold []int
		for i := range ids {
			fields, isWarm := reply[2+i].([]any)
			if !isWarm {
				cold = append(cold, i)
				continue
			}
			for j := 0; j < nf && j < len(fields); j++ {
				v, err := redis.Int64(fields[j], nil)
				if err != nil {
					c.cacheError(ctx, "read", err)
					return nil, false, nil
				}
				vals[i*nf+j] = v - countOffset
			}
		}
		if len(cold) == 0 {
			return vals, true, nil
		}

		coldIDs := make([]int64, len(cold))
		for x, i := range cold {
			coldIDs[x] = ids[i]
		}
		base := make([]int64, len(cold)*nf)
		applied, err := c.loadSQL(ctx, k, coldIDs, batch, base)
		if err != nil {
			return nil, false, err
		}
		if h := c.hooks.afterLoad; h != nil {
			h(k.name, coldIDs)
		}

		wargs := make([]any, 0, 10+4*len(cold)+nf*(1+len(cold)))
		wargs = append(wargs, 3+3*len(cold), c.epochKey, c.pendingKey, c.flushingKey)
		for _, i := range cold {
			wargs = append(wargs, keys[i], leaseKey(keys[i]), marksKey(keys[i]))
		}
		appliedArg := "0"
		if applied {
			appliedArg = "1"
		}
		wargs = append(wargs, token, int64(c.ttl/time.Second), epoch, appliedArg, nf)
		for _, f := range k.fields {
			wargs = append(wargs, f)
		}
		for x, i := range cold {
			wargs = append(wargs, pendingPrefix(k.name, ids[i]))
			for j := 0; j < nf; j++ {
				wargs = append(wargs, base[x*nf+j]+countOffset)
			}
		}
		wreply, err := redis.Values(c.runScript(ctx, warmScript, wargs...))
		if err == nil && len(wreply) != 1 && len(wreply) != 1+len(cold) {
			err = fmt.Errorf("warm script answered %d values for %d ids", len(wreply), len(cold))
		}
		if err != nil {
			c.cacheError(ctx, "warm", err)
			// SQL's values are the best answer left; write-behind deltas
			// not yet flushed are missing from them.
			for x, i := range cold {
				copy(vals[i*nf:(i+1)*nf], base[x*nf:(x+1)*nf])
			}
			return vals, true, nil
		}
		if moved, _ := redis.Int(wreply[0], nil); moved == 0 {
			continue // a flush moved deltas between the two scripts
		}
		for x, i := range cold {
			row, _ := wreply[1+x].([]any)
			for j := 0; j < nf; j++ {
				v := base[x*nf+j]
				if 1+j < len(row) {
					v += optInt(row[1+j])
				}
				if !applied && 1+nf+j < len(row) {
					v += optInt(row[1+nf+j])
				}
				vals[i*nf+j] = v
			}
		}
		return vals, true, nil
	}
	return nil, false, errEpochMoved
}

func optInt(v any) int64 {
	n, err := redis.Int64(v, nil)
	if err != nil {
		return 0
	}
	return n
}

// loadSQL reads ids' fields from SQL into out and, when batch is given,
// whether that write-behind batch is applied, in one statement.
func (c *Counters) loadSQL(ctx context.Context, k *kindSpec, ids []int64, batch string, out []int64) (applied bool, err error) {
	nf := len(k.fields)
	pos := make(map[int64]int, len(ids))
	args := make([]any, 0, 2+len(ids))
	args = append(args, k.name)
	for i, id := range ids {
		pos[id] = i
		args = append(args, id)
	}
	if batch != "" {
		args = append(args, batch)
	}
	query := c.q.load(len(ids), batch != "")
	err = retry(ctx, func() error {
		clear(out)
		applied = batch == ""
		rows, err := c.db.QueryContext(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id, sum int64
			var field string
			if err := rows.Scan(&id, &field, &sum); err != nil {
				return err
			}
			if field == "#applied" {
				applied = sum > 0
				continue
			}
			j, ok := k.index[field]
			i, known := pos[id]
			if ok && known {
				out[i*nf+j] = sum
			}
		}
		return rows.Err()
	})
	if err != nil {
		return false, fmt.Errorf("entity: read: %w", err)
	}
	return applied, nil
}

// Top returns the n entities of a kind with the highest value of field,
// highest first, ties by ascending id, read from SQL. Entities whose value
// is 0 are left out. In write-behind mode deltas not yet flushed are not
// counted.
func (c *Counters) Top(ctx context.Context, kind, field string, n int) ([]Ranked, error) {
	if _, _, err := c.field(kind, field); err != nil {
		return nil, err
	}
	if n < 1 || n > MaxTop {
		return nil, fmt.Errorf("%w: %d, want 1 to %d", ErrBadLimit, n, MaxTop)
	}
	out := []Ranked{}
	err := retry(ctx, func() error {
		out = out[:0]
		rows, err := c.db.QueryContext(ctx, c.q.top, kind, field, n)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var r Ranked
			if err := rows.Scan(&r.ID, &r.Count); err != nil {
				return err
			}
			out = append(out, r)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, fmt.Errorf("entity: top: %w", err)
	}
	return out, nil
}

// cacheError reports a failed cache call and takes the cache out of use,
// unless the caller's context ended, which says nothing about Redis.
func (c *Counters) cacheError(ctx context.Context, op string, err error) {
	if ctx.Err() != nil {
		return
	}
	c.cacheFailed(op, err)
}

func (c *Counters) loop(ctx context.Context) {
	defer close(c.done)
	flushes := time.NewTicker(c.flushInterval)
	defer flushes.Stop()
	folds := time.NewTicker(c.foldInterval)
	defer folds.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-flushes.C:
			c.tick(ctx)
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

// maintain is the slow background work: fold hot slots, prune old batch ids.
func (c *Counters) maintain(ctx context.Context) {
	if err := c.fold(ctx); err != nil && ctx.Err() == nil {
		c.onError(err)
	}
	cutoff := time.Now().Add(-batchRetention).Unix()
	if _, err := c.db.ExecContext(ctx, c.q.prune, cutoff); err != nil && ctx.Err() == nil {
		c.onError(fmt.Errorf("entity: prune batches: %w", err))
	}
}

// Close stops the background work and, in write-behind mode, flushes the
// deltas still pending, retrying until it succeeds or ctx ends.
func (c *Counters) Close(ctx context.Context) error {
	first := false
	c.closeOnce.Do(func() {
		first = true
		c.cancel()
		<-c.done
	})
	if !first || !c.writeBehind {
		return nil
	}
	var err error
	for attempt := 0; attempt < 50; attempt++ {
		if err = c.Flush(ctx); err == nil {
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
