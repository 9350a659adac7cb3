package entity

import (
	"context"
	"database/sql"
	"fmt"
)

// Incr adds delta to one counter. In the default write-through mode it
// returns once SQL has the delta, and the cache has it too or has dropped
// the entity; with Redis down it still succeeds on SQL alone. In
// write-behind mode it returns once Redis has the delta. A buffered field
// only adds to the process's buffer (see Kind.Buffered).
//
// An error means the delta is not stored, with one exception spelled out
// in the package documentation (a commit whose reply was lost).
func (c *Counters) Incr(ctx context.Context, kind string, id int64, field string, delta int64) error {
	k, fi, err := c.incrField(kind, field, delta)
	if err != nil || delta == 0 {
		return err
	}
	if k.buffer[fi] {
		c.buf.add(kind, id, fi, delta)
		return nil
	}
	if c.writeBehind && c.cs.cacheUp() {
		done, err := c.fl.incrBehind(ctx, kind, id, field, delta)
		if done {
			return err
		}
	}
	return c.InTx(ctx, func(ctx context.Context, tx *Tx) error {
		return tx.Incr(kind, id, field, delta)
	})
}

func checkDelta(delta int64) error {
	if delta > MaxDelta || delta < -MaxDelta {
		return fmt.Errorf("entity: incr: delta %d beyond ±%d", delta, int64(MaxDelta))
	}
	return nil
}

// incrField checks an increment's kind, field and delta, and finds the
// field.
func (c *Counters) incrField(kind, field string, delta int64) (*kindSpec, int, error) {
	k, fi, err := c.field(kind, field)
	if err != nil {
		return nil, 0, err
	}
	return k, fi, checkDelta(delta)
}

// Tx is one SQL transaction in which an app writes its own rows and the
// counters that count them, so both commit or neither does.
type Tx struct {
	// Tx is the SQL transaction, for the app's own statements.
	*sql.Tx
	ctx     context.Context
	c       *Counters
	writes  []*entityWrite
	byKey   map[string]*entityWrite
	globals map[string]int64 // unread's global values raised, cached after commit
}

// entityWrite is what one transaction did to one entity, to be applied to
// its cache entry once the transaction commits.
type entityWrite struct {
	kind   string
	id     int64
	ref    entRef
	token  string // write mark held in Redis; "" if none (cache out of use)
	deltas []any  // field, delta pairs
}

// Incr adds delta to one counter inside the transaction. Buffered fields
// are written at once too: the transaction is their durable path.
func (t *Tx) Incr(kind string, id int64, field string, delta int64) error {
	c := t.c
	k, fi, err := c.incrField(kind, field, delta)
	if err != nil || delta == 0 {
		return err
	}
	r := c.cs.ref(kind, id)
	w := t.byKey[r.marks]
	if w == nil {
		w = &entityWrite{kind: kind, id: id, ref: r}
		t.byKey[r.marks] = w
		t.writes = append(t.writes, w)
		// Announce the write before SQL has it, so no reader caches a
		// value that holds it and then sees it added again.
		if w.token, err = c.cs.markWrite(t.ctx, r.marks); err != nil {
			return err
		}
		if w.token == "" && c.cache != nil {
			// The cache is out of use: record the entity as stale in this
			// transaction (the outage lock is held; see InTx).
			if err := c.sql.MarkStale(t.ctx, t.Tx, kind, id); err != nil {
				return err
			}
		}
	}
	if err := c.sql.Incr(t.ctx, t.Tx, kind, id, field, slot(k, fi), delta); err != nil {
		return err
	}
	w.deltas = append(w.deltas, field, delta)
	return nil
}

// InTx runs fn in one SQL transaction under StatementTimeout and commits
// it, then brings the cache entries of the entities it counted up to date.
// fn may run more than once (a deadlock retries the whole transaction), so
// it must do nothing but SQL through tx. An error means nothing of it was
// committed, except that a commit whose reply is lost may still have
// happened.
func (c *Counters) InTx(ctx context.Context, fn func(ctx context.Context, tx *Tx) error) error {
	var attempts [][]*entityWrite
	var last *Tx
	err := func() error {
		// Held for the whole transaction: the probe cannot put the cache
		// back in use between a stale record and its commit.
		if err := c.outage.share(ctx); err != nil {
			return err
		}
		defer c.outage.unshare()
		return c.sql.InTx(ctx, func(sctx context.Context, stx *sql.Tx) error {
			t := &Tx{Tx: stx, ctx: sctx, c: c, byKey: map[string]*entityWrite{}}
			last = t
			err := fn(sctx, t)
			attempts = append(attempts, t.writes)
			return err
		})
	}()
	// Marks of attempts that did not commit: withdrawn, entries dropped.
	for i, ws := range attempts {
		if err == nil && i == len(attempts)-1 {
			continue
		}
		for _, w := range ws {
			if w.token != "" {
				c.cs.abandonWrite(ctx, w)
			}
		}
	}
	if err != nil {
		return fmt.Errorf("entity: write: %w", err)
	}
	c.unread.storeGlobals(ctx, last.globals)
	for _, w := range last.writes {
		if h := c.hooks.afterSQLWrite; h != nil {
			h(w.kind, w.id)
		}
		if w.token != "" {
			c.cs.applyWrite(ctx, w)
		}
	}
	return nil
}

// Reset sets one counter to 0, e.g. an unread count the user just read.
// Increments racing it land either before it (and are reset) or after it
// (and count); none is lost.
func (c *Counters) Reset(ctx context.Context, kind string, id int64, field string) error {
	k, fi, err := c.field(kind, field)
	if err != nil {
		return err
	}
	if k.buffer[fi] {
		// Buffered deltas recorded before the reset go in before it.
		if err := c.fl.flushBuffered(ctx); err != nil {
			return fmt.Errorf("entity: reset: %w", err)
		}
	}
	if c.writeBehind && c.cs.cacheUp() {
		// Deltas recorded before the reset must reach SQL before it.
		if err := c.Flush(ctx); err != nil {
			c.onError(fmt.Errorf("entity: reset: %w", err))
		}
	}
	if c.cache != nil {
		handled, err := c.cs.whileDown(ctx, kind, id, func(ctx context.Context, tx *sql.Tx) error {
			return c.sql.Reset(ctx, tx, kind, id, field)
		})
		if handled {
			if err != nil {
				return fmt.Errorf("entity: reset: %w", err)
			}
			return nil
		}
	}
	if err := c.sql.Reset(ctx, nil, kind, id, field); err != nil {
		return fmt.Errorf("entity: reset: %w", err)
	}
	return c.cs.invalidate(context.WithoutCancel(ctx), kind, []int64{id})
}
