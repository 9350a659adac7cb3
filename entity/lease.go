package entity

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/entity/internal/redisstore"
	"github.com/pulse-dev/pulse/internal/redisconn"
)

// Leases and write marks keep a warm-up from caching a wrong value.
//
// A reader that finds an entity cold takes a lease on it in the same
// script; a writer finding it cold deletes the lease with the key, and
// the warm-up caches only if its token still holds the lease: a write
// that overtook the reader is never missed.
//
// A write-through writer marks the entity before SQL has its delta and
// withdraws the mark in the script that adds the delta to the cache;
// warm-ups are refused while a mark stands: a value read from SQL that
// already holds the delta is never cached and then incremented again.

// coldEntity is an entity a cached read found cold: what its read script
// saw of the write-behind flush.
type coldEntity struct {
	i     int // index in ids
	epoch string
	batch string
}

// readCached reads through the cache. ok is false when the cache failed
// and SQL alone should answer.
func (c *cacheSide) readCached(ctx context.Context, k *kindSpec, ids []int64) (vals []int64, ok bool, err error) {
	nf := len(k.fields)
	token := c.newToken()
	keys := make([]entRef, len(ids))
	for i, id := range ids {
		keys[i] = c.ref(k.name, id)
	}
	vals = make([]int64, len(ids)*nf)
	for attempt := 0; attempt < 5; attempt++ {
		cold, err := c.readEntities(ctx, k, keys, token, vals)
		if err != nil {
			c.cacheError(ctx, "read", err)
			return nil, false, ctx.Err()
		}
		if len(cold) == 0 {
			return vals, true, nil
		}
		coldIDs := make([]int64, len(cold))
		var batches []string
		for x, ce := range cold {
			coldIDs[x] = ids[ce.i]
			if ce.batch != "" && !slices.Contains(batches, ce.batch) {
				batches = append(batches, ce.batch)
			}
		}
		base := make([]int64, len(cold)*nf)
		applied, err := c.loadSQL(ctx, k, coldIDs, batches, base)
		if err != nil {
			return nil, false, err
		}
		if h := c.hooks.afterLoad; h != nil {
			h(k.name, coldIDs)
		}
		moved, err := c.warmEntities(ctx, k, keys, ids, token, cold, base, applied, vals)
		if err != nil {
			c.cacheError(ctx, "warm", err)
			// SQL's values are the best answer left; write-behind deltas
			// not yet flushed are missing from them.
			for x, ce := range cold {
				copy(vals[ce.i*nf:(ce.i+1)*nf], base[x*nf:(x+1)*nf])
			}
			return vals, true, nil
		}
		if !moved {
			return vals, true, nil
		}
		// A flush moved deltas between the two round trips: start over.
	}
	return nil, false, errEpochMoved
}

// readEntities runs the read script on every entity in one round trip,
// fills vals for the warm ones and returns the cold ones, a lease taken
// on those nobody else is warming.
func (c *cacheSide) readEntities(ctx context.Context, k *kindSpec, keys []entRef, token string, vals []int64) ([]coldEntity, error) {
	nf := len(k.fields)
	calls := make([]redisconn.Cmd, len(keys))
	for i, r := range keys {
		calls[i] = c.readCmd(k, r, token)
	}
	replies, err := c.cache.RunAll(ctx, calls)
	if err != nil {
		return nil, err
	}
	var cold []coldEntity
	for i, r := range replies {
		parts, err := redis.Values(r, nil)
		if err == nil && len(parts) != 4 {
			err = fmt.Errorf("read script answered %d values", len(parts))
		}
		if err != nil {
			return nil, err
		}
		if state, _ := redis.Int(parts[0], nil); state != 2 {
			epoch, _ := redis.String(parts[2], nil)
			batch, _ := redis.String(parts[3], nil)
			cold = append(cold, coldEntity{i: i, epoch: epoch, batch: batch})
			continue
		}
		if err := c.warmValues(parts[1], vals[i*nf:(i+1)*nf]); err != nil {
			return nil, err
		}
	}
	return cold, nil
}

// warmEntities finishes a cold read in one round trip: each cold entity is
// cached if its reader holds the lease and no write mark stands, and its
// write-behind deltas are added to what SQL said. moved reports a flush
// that moved deltas since the read began, which makes the caller start
// over.
func (c *cacheSide) warmEntities(ctx context.Context, k *kindSpec, keys []entRef, ids []int64, token string,
	cold []coldEntity, base []int64, applied map[string]bool, vals []int64) (moved bool, err error) {
	nf := len(k.fields)
	calls := make([]redisconn.Cmd, len(cold))
	for x, ce := range cold {
		calls[x] = c.warmCall(k, keys[ce.i], token, ce, base[x*nf:(x+1)*nf], applied)
	}
	replies, err := c.cache.RunAll(ctx, calls)
	if err != nil {
		return false, err
	}
	for x, r := range replies {
		row, err := redis.Values(r, nil)
		if err != nil {
			return false, err
		}
		if len(row) == 1 {
			moved = true
			continue
		}
		if len(row) != 2+2*nf {
			return false, fmt.Errorf("warm script answered %d values for %d fields", len(row), nf)
		}
		if cached, _ := redis.Int(row[1], nil); cached == 2 {
			c.reportCrowded(k)
		}
		ce := cold[x]
		for j := 0; j < nf; j++ {
			vals[ce.i*nf+j] = base[x*nf+j] + optInt(row[2+j]) + optInt(row[2+nf+j])
		}
	}
	return moved, nil
}

// warmCall is the warm script call of one cold entity, base its values in
// SQL.
func (c *cacheSide) warmCall(k *kindSpec, r entRef, token string, ce coldEntity, base []int64, applied map[string]bool) redisconn.Cmd {
	script, ks, args := c.warmScript(r)
	if c.writeBehind {
		ks = append(ks, c.keys.Epoch, c.keys.Pending, c.keys.Flushing)
	}
	appliedArg := "0"
	if ce.batch == "" || applied[ce.batch] {
		appliedArg = "1"
	}
	offset := int64(redisstore.CountOffset)
	if script == redisstore.CompactWarm {
		args = append(args, token, ce.epoch, appliedArg, len(k.fields))
		offset = 0 // a bucket tells cold from zero by the field's presence
	} else {
		args = append(args, int64(c.ttl/time.Second), token, ce.epoch, appliedArg, len(k.fields))
	}
	for _, f := range k.fields {
		args = append(args, f)
	}
	args = append(args, redisstore.PendingPrefix(k.name, r.id))
	for _, v := range base {
		args = append(args, v+offset)
	}
	return script.Cmd(ks, args...)
}

// reportCrowded tells OnError, once per kind, that a sparse bucket holds
// more entities than Redis keeps in a listpack.
func (c *cacheSide) reportCrowded(k *kindSpec) {
	if k.crowded.CompareAndSwap(false, true) {
		c.onError(fmt.Errorf("entity: kind %q: a cache bucket holds more than %d entities, past Redis's hash-max-listpack-entries, so it left the compact encoding; raise Kind.Population (%d buckets now) to about the entities cached at once",
			k.name, redisstore.BucketSize, k.buckets))
	}
}

func optInt(v any) int64 {
	n, err := redis.Int64(v, nil)
	if err != nil {
		return 0
	}
	return n
}

// markWrite announces a write-through write to one entity before SQL has
// it; the token is "" if the cache is out of use or the mark failed.
func (c *cacheSide) markWrite(ctx context.Context, marks string) (token string, err error) {
	if !c.cacheUp() {
		return "", nil
	}
	token = c.newToken()
	_, err = c.cache.Run(ctx, redisstore.MarkWrite.Cmd([]string{marks}, token, redisstore.WriteMarkTTL.Milliseconds()))
	if err == nil {
		return token, nil
	}
	c.cacheError(ctx, "incr", err)
	return "", ctx.Err()
}

// applyWrite adds a committed write's deltas to the entity's cache entry
// and withdraws its mark; a cold entry or an expired mark drops the entry
// instead.
func (c *cacheSide) applyWrite(ctx context.Context, w *entityWrite) {
	if _, err := c.cache.Run(ctx, c.throughCmd(w)); err != nil {
		c.cacheError(ctx, "incr", err)
		c.abandonWrite(ctx, w)
	}
}

// abandonWrite withdraws a write's mark and drops the entity's entry, when
// the write's outcome in SQL or in the cache is not known; if Redis cannot
// be reached the entity is recorded as stale.
func (c *cacheSide) abandonWrite(ctx context.Context, w *entityWrite) {
	ctx = context.WithoutCancel(ctx)
	if c.cacheUp() {
		err := c.cache.SendAll(ctx, c.dropCmds(w.ref, w.token))
		if err == nil {
			return
		}
		c.cacheError(ctx, "incr", err)
	}
	// The mark, if it stands, expires on its own.
	if err := c.invalidate(ctx, w.kind, []int64{w.id}); err != nil {
		c.onError(err)
	}
}
