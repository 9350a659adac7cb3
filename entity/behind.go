package entity

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/entity/internal/redisstore"
	"github.com/pulse-dev/pulse/entity/internal/sqlstore"
)

// Write-behind: increments go to Redis only, into the cached entity and a
// pending hash; flushes move the pending hash to SQL in batches whose ids
// SQL records, so a batch is applied once whoever finishes it. The epoch
// moves whenever a flush starts or finishes a batch, which tells a cold
// read (lease.go) that the deltas it added may be counted twice or not at
// all.

// incrBehind is the write-behind increment. done is false if the command
// cannot have reached Redis, so SQL may take the delta instead.
func (c *flusher) incrBehind(ctx context.Context, kind string, id int64, field string, delta int64) (done bool, err error) {
	replies, err := c.cache.Send(ctx, c.cs.behindCmd(c.cs.ref(kind, id), c.kinds[kind].index[field], field, delta))
	if err != nil {
		c.cs.cacheError(ctx, "incr", err)
		return true, fmt.Errorf("entity: incr: %w", err)
	}
	if err := replies[0].Err; err != nil {
		c.cs.cacheError(ctx, "incr", err)
		if replies[0].Unsent || refused(err) {
			return false, nil // not taken: SQL may take the delta
		}
		// Redis may have taken the delta before failing: writing it to SQL
		// as well could count it twice.
		return true, fmt.Errorf("entity: incr: write-behind: outcome unknown: %w", err)
	}
	return true, nil
}

// refused reports a reply saying the server took nothing of the script:
// it ran no command (loading, busy with another script, a replica, a
// cluster slot away) or refused its first write for want of memory. The
// write-behind scripts' first write is the pending delta, and a script
// whose first write is refused stops there.
func refused(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	code, _, _ := strings.Cut(string(re), " ")
	switch code {
	case "OOM", "LOADING", "BUSY", "READONLY", "MASTERDOWN", "CLUSTERDOWN", "MOVED", "ASK", "TRYAGAIN":
		return true
	}
	return false
}

// flushStep names the points between the steps of a flush, where a crash
// must lose nothing and apply nothing twice.
type flushStep int

const (
	stepMoved     flushStep = iota + 1 // pending deltas renamed to the flushing hash
	stepRead                           // flushing hash read
	stepApplied                        // deltas applied in the open SQL transaction, not committed
	stepCommitted                      // SQL transaction committed with the batch id
	stepDone                           // flushing hash deleted
)

func (c *flusher) step(s flushStep) error {
	if h := c.hooks.flushStep; h != nil {
		return h(s)
	}
	return nil
}

// Flush persists the write-behind deltas recorded so far, after finishing
// a batch an earlier flush (of any process) left half done. Without
// write-behind it does nothing.
func (c *Counters) Flush(ctx context.Context) error {
	if !c.writeBehind {
		return nil
	}
	return c.fl.flush(ctx)
}

// flush is Flush in either mode: the background work also finishes
// batches left by write-behind processes that shared the Redis, e.g.
// before a switch to write-through.
func (c *flusher) flush(ctx context.Context) error {
	if c.cache == nil {
		return nil
	}
	if c.cache.Cluster() && !c.writeBehind {
		// Write-behind is refused on a cluster (its hashes span every
		// entity), so no batch can be left there to finish.
		return nil
	}
	c.flushMu.Lock()
	defer c.flushMu.Unlock()
	for i := 0; i < 3; i++ {
		batch, fresh, err := c.flushOnce(ctx)
		if err != nil {
			return fmt.Errorf("entity: flush: %w", err)
		}
		if batch == "" || fresh {
			return nil
		}
	}
	return nil
}

// flushOnce persists one batch: the one found half done, or else a new one
// made of the pending deltas. The steps:
//
//  1. a script renames pending to flushing and tags it with a new batch
//     id, unless flushing exists (then that batch is finished instead);
//  2. the flushing hash is read;
//  3. one SQL transaction inserts the batch id into the batches table and
//     applies the deltas, or does nothing if the id is there already;
//  4. a script deletes flushing if it still holds this batch.
//
// A crash before 3 commits leaves flushing for the next flush to apply; a
// crash after leaves it for the next flush to find applied and delete.
func (c *flusher) flushOnce(ctx context.Context) (batch string, fresh bool, err error) {
	reply, err := redis.Values(c.cache.Run(ctx, redisstore.Move.Cmd([]string{c.keys.Pending, c.keys.Flushing, c.keys.Epoch}, c.newBatchID())))
	if err != nil {
		return "", false, err
	}
	if len(reply) != 2 {
		return "", false, fmt.Errorf("move script answered %d values", len(reply))
	}
	batch, _ = redis.String(reply[0], nil)
	isNew, _ := redis.Int(reply[1], nil)
	fresh = isNew == 1
	if batch == "" {
		return "", false, nil
	}
	if err := c.step(stepMoved); err != nil {
		return batch, fresh, err
	}
	deltas, err := redis.StringMap(c.cache.Do(ctx, "HGETALL", c.keys.Flushing))
	if err != nil {
		return batch, fresh, err
	}
	if deltas[redisstore.BatchField] != batch {
		return batch, fresh, nil // another process finished it meanwhile
	}
	rows := c.parseDeltas(deltas)
	if err := c.step(stepRead); err != nil {
		return batch, fresh, err
	}
	if err := c.applyBatch(ctx, batch, rows); err != nil {
		return batch, fresh, err
	}
	if err := c.step(stepCommitted); err != nil {
		return batch, fresh, err
	}
	if _, err := c.cache.Run(ctx, redisstore.Done.Cmd([]string{c.keys.Flushing, c.keys.Epoch}, batch)); err != nil {
		return batch, fresh, err
	}
	return batch, fresh, c.step(stepDone)
}

// parseDeltas turns the flushing hash into SQL rows, sorted so that
// concurrent transactions lock rows in one order.
func (c *flusher) parseDeltas(deltas map[string]string) []sqlstore.Row {
	rows := make([]sqlstore.Row, 0, len(deltas))
	for name, v := range deltas {
		if name == redisstore.BatchField {
			continue
		}
		kind, rest, ok1 := strings.Cut(name, ":")
		idText, field, ok2 := strings.Cut(rest, ":")
		id, err1 := strconv.ParseInt(idText, 10, 64)
		delta, err2 := strconv.ParseInt(v, 10, 64)
		if !ok1 || !ok2 || err1 != nil || err2 != nil {
			c.onError(fmt.Errorf("entity: flush: skipping malformed delta %q = %q", name, v))
			continue
		}
		if delta == 0 {
			continue
		}
		r := sqlstore.Row{Kind: kind, ID: id, Field: field, Delta: delta}
		// Kinds and fields no longer declared are still data: slot 0.
		if k, ok := c.kinds[kind]; ok {
			if fi, ok := k.index[field]; ok {
				r.Slot = slot(k, fi)
			}
		}
		rows = append(rows, r)
	}
	slices.SortFunc(rows, func(a, b sqlstore.Row) int {
		return cmp.Or(cmp.Compare(a.Kind, b.Kind), cmp.Compare(a.ID, b.ID),
			cmp.Compare(a.Field, b.Field), cmp.Compare(a.Slot, b.Slot))
	})
	return rows
}

// applyBatch applies rows and records batch as applied in one transaction;
// a batch recorded already is not applied again. The id goes in first, so
// a second process applying the same batch waits on its row lock and then
// finds it.
func (c *flusher) applyBatch(ctx context.Context, batch string, rows []sqlstore.Row) error {
	return c.sql.InTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		fresh, err := c.sql.MarkApplied(ctx, tx, batch, c.clock.Now())
		if err != nil || !fresh {
			return err // applied before: nothing to do
		}
		if err := c.sql.Upsert(ctx, tx, rows); err != nil {
			return err
		}
		return c.step(stepApplied)
	})
}
