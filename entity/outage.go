package entity

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// Outage handling: while Redis fails, SQL answers alone and writes record
// the entities whose cache entries they bypassed; a probe puts the cache
// back in use once those entries are gone.

// cacheUp reports whether the cache is in use: there is one, and it is not
// known to be down.
func (c *cacheSide) cacheUp() bool { return c.cache != nil && !c.cacheDown.Load() }

// cacheFailed takes the cache out of use until the background probe finds
// Redis answering again and every entry written around meanwhile has been
// dropped.
func (c *cacheSide) cacheFailed(op string, err error) {
	c.cacheDown.Store(true)
	c.onError(fmt.Errorf("entity: cache %s: %w", op, err))
}

// cacheError reports a failed cache call and takes the cache out of use,
// unless the caller's context ended, which says nothing about Redis.
func (c *cacheSide) cacheError(ctx context.Context, op string, err error) {
	if ctx.Err() != nil {
		return
	}
	c.cacheFailed(op, err)
}

// whileDown is how writes go while the cache is out of use: fn's SQL
// write and a record that the entity's cache entry is stale, in one
// transaction. It does nothing (handled is false) if the cache is in use.
// The probe holds the outage lock for its last sweep and while it puts the
// cache back in use, so no stale record can commit after the sweep that
// lets the cache be trusted again.
func (c *cacheSide) whileDown(ctx context.Context, kind string, id int64, fn func(ctx context.Context, tx *sql.Tx) error) (handled bool, err error) {
	if err := c.outage.share(ctx); err != nil {
		return true, err
	}
	defer c.outage.unshare()
	if c.cacheUp() {
		return false, nil
	}
	return true, c.sql.InTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		if err := fn(ctx, tx); err != nil {
			return err
		}
		return c.sql.MarkStale(ctx, tx, kind, id)
	})
}

// dropEntries deletes entities' cache entries and leases, one DEL per
// entity (its keys share a slot), in one round trip.
func (c *cacheSide) dropEntries(ctx context.Context, kinds []string, ids []int64) error {
	cmds := make([]redisconn.Cmd, 0, len(ids))
	for i, id := range ids {
		cmds = append(cmds, c.dropCmds(c.ref(kinds[i], id), "")...)
	}
	return c.cache.SendAll(ctx, cmds)
}

// invalidate drops entities' cache entries; when Redis cannot be reached
// it records them in SQL, so the entries are dropped once it is back.
func (c *cacheSide) invalidate(ctx context.Context, kind string, ids []int64) error {
	if c.cache == nil || len(ids) == 0 {
		return nil
	}
	kinds := make([]string, len(ids))
	for i := range kinds {
		kinds[i] = kind
	}
	for attempt := 0; attempt < 3; attempt++ {
		if c.cacheUp() {
			err := c.dropEntries(ctx, kinds, ids)
			if err == nil {
				return nil
			}
			c.cacheFailed("invalidate", err)
		}
		if done, err := c.recordStale(ctx, kind, ids); done {
			return err
		}
	}
	_, err := c.recordStale(ctx, kind, ids)
	return err
}

// recordStale records entities as stale while the cache is out of use
// (see whileDown); done is false if the cache is in use again.
func (c *cacheSide) recordStale(ctx context.Context, kind string, ids []int64) (done bool, err error) {
	if err := c.outage.share(ctx); err != nil {
		return true, err
	}
	defer c.outage.unshare()
	if c.cacheUp() {
		return false, nil
	}
	for _, id := range ids {
		if err := c.sql.MarkStale(ctx, nil, kind, id); err != nil {
			return true, fmt.Errorf("entity: record stale cache entry: %w", err)
		}
	}
	return true, nil
}

// sweepBatch is how many stale entries one sweep round handles.
const sweepBatch = 500

// sweep drops the cache entries recorded as stale, then their records. A
// record written again meanwhile (its seq moved) stays for the next sweep.
// It reports whether the table was found empty.
func (c *cacheSide) sweep(ctx context.Context) (bool, error) {
	for round := 0; round < 100; round++ {
		list, err := c.sql.ListStale(ctx, sweepBatch)
		if err != nil {
			return false, fmt.Errorf("entity: sweep: %w", err)
		}
		if len(list) == 0 {
			return true, nil
		}
		kinds := make([]string, len(list))
		ids := make([]int64, len(list))
		for i, s := range list {
			kinds[i], ids[i] = s.Kind, s.ID
		}
		if err := c.dropEntries(ctx, kinds, ids); err != nil {
			return false, fmt.Errorf("entity: sweep: %w", err)
		}
		if err := c.sql.DropStale(ctx, list); err != nil {
			return false, fmt.Errorf("entity: sweep: %w", err)
		}
		if len(list) < sweepBatch {
			return false, nil
		}
	}
	return false, nil
}

// probe checks whether Redis answers again after a failure. When it does,
// the entries recorded as stale are swept, the last sweep under the outage
// lock, and only then is the cache used again.
func (c *cacheSide) probe(ctx context.Context) {
	if _, err := c.cache.Do(ctx, "PING"); err != nil {
		return
	}
	c.cache.DiscardDeadConns(ctx)
	// The bulk of it while writes still go on.
	if _, err := c.sweep(ctx); err != nil {
		c.onError(err)
		return
	}
	if err := c.outage.take(ctx); err != nil {
		return // closing
	}
	defer c.outage.give()
	for {
		empty, err := c.sweep(ctx)
		if err != nil {
			c.onError(err)
			return
		}
		if empty {
			c.cacheDown.Store(false)
			return
		}
		if ctx.Err() != nil {
			return
		}
	}
}
