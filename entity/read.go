package entity

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

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
// one more round trip. Buffered deltas this process has not written yet
// are included. More than MaxBatchIDs ids is ErrTooManyIDs.
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
	var vals []int64
	read := func() error {
		var err error
		if vals, err = c.read(ctx, k, uniq); err == nil {
			c.buf.addPending(k, uniq, vals)
		}
		return err
	}
	if k.anyBuffered() {
		err = c.buf.stableRead(read)
	} else {
		err = read()
	}
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
	if _, err := c.loadSQL(ctx, k, ids, nil, vals); err != nil {
		return nil, err
	}
	return vals, nil
}

// coldEntity is an entity a cached read found cold: what its read script
// saw of the write-behind flush.
type coldEntity struct {
	i     int // index in ids
	epoch string
	batch string
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
			if ce.batch != "" && !contains(batches, ce.batch) {
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

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// readEntities runs the read script on every entity in one round trip,
// fills vals for the warm ones and returns the cold ones.
func (c *Counters) readEntities(ctx context.Context, k *kindSpec, keys []string, token string, vals []int64) ([]coldEntity, error) {
	nf := len(k.fields)
	args := make([]any, 0, 3+nf)
	args = append(args, token, leaseTTL.Milliseconds(), coldBelow)
	for _, f := range k.fields {
		args = append(args, f)
	}
	calls := make([]redisconn.Cmd, len(keys))
	for i, key := range keys {
		ks := []string{key, leaseKey(key)}
		if c.writeBehind {
			ks = append(ks, c.epochKey, c.flushingKey)
		}
		calls[i] = readScript.Cmd(ks, args...)
	}
	replies, err := c.runScripts(ctx, calls)
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
		state, _ := redis.Int(parts[0], nil)
		if state != 2 {
			epoch, _ := redis.String(parts[2], nil)
			batch, _ := redis.String(parts[3], nil)
			cold = append(cold, coldEntity{i: i, epoch: epoch, batch: batch})
			continue
		}
		fields, _ := redis.Values(parts[1], nil)
		for j := 0; j < nf && j < len(fields); j++ {
			v, err := redis.Int64(fields[j], nil)
			if err != nil {
				return nil, err
			}
			vals[i*nf+j] = v - countOffset
		}
	}
	return cold, nil
}

// warmEntities finishes a cold read in one round trip: each cold entity is
// cached if its reader holds the lease, and its write-behind deltas are
// added to what SQL said. moved reports a flush that moved deltas since
// the read began, which makes the caller start over.
func (c *Counters) warmEntities(ctx context.Context, k *kindSpec, keys []string, ids []int64, token string,
	cold []coldEntity, base []int64, applied map[string]bool, vals []int64) (moved bool, err error) {
	nf := len(k.fields)
	calls := make([]redisconn.Cmd, len(cold))
	for x, ce := range cold {
		key := keys[ce.i]
		ks := []string{key, leaseKey(key), marksKey(key)}
		if c.writeBehind {
			ks = append(ks, c.epochKey, c.pendingKey, c.flushingKey)
		}
		appliedArg := "0"
		if ce.batch == "" || applied[ce.batch] {
			appliedArg = "1"
		}
		args := make([]any, 0, 7+2*nf)
		args = append(args, token, int64(c.ttl/time.Second), ce.epoch, appliedArg, nf)
		for _, f := range k.fields {
			args = append(args, f)
		}
		args = append(args, pendingPrefix(k.name, ids[ce.i]))
		for j := 0; j < nf; j++ {
			args = append(args, base[x*nf+j]+countOffset)
		}
		calls[x] = warmScript.Cmd(ks, args...)
	}
	replies, err := c.runScripts(ctx, calls)
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
		ce := cold[x]
		for j := 0; j < nf; j++ {
			vals[ce.i*nf+j] = base[x*nf+j] + optInt(row[2+j]) + optInt(row[2+nf+j])
		}
	}
	return moved, nil
}

func optInt(v any) int64 {
	n, err := redis.Int64(v, nil)
	if err != nil {
		return 0
	}
	return n
}

// loadSQL reads ids' fields from SQL into out and, for the write-behind
// batches named, whether each is applied, in one statement.
func (c *Counters) loadSQL(ctx context.Context, k *kindSpec, ids []int64, batches []string, out []int64) (map[string]bool, error) {
	nf := len(k.fields)
	pos := make(map[int64]int, len(ids))
	args := make([]any, 0, 1+len(ids)+len(batches))
	args = append(args, k.name)
	for i, id := range ids {
		pos[id] = i
		args = append(args, id)
	}
	for _, b := range batches {
		args = append(args, b)
	}
	applied := map[string]bool{}
	err := c.queryRows(ctx, c.db, func() { clear(out); clear(applied) }, func(rows *sql.Rows) error {
		var id, sum int64
		var field string
		if err := rows.Scan(&id, &field, &sum); err != nil {
			return err
		}
		if contains(batches, field) {
			applied[field] = true
			return nil
		}
		j, ok := k.index[field]
		i, known := pos[id]
		if ok && known {
			out[i*nf+j] = sum
		}
		return nil
	}, c.q.load(len(ids), len(batches)), args...)
	if err != nil {
		return nil, fmt.Errorf("entity: read: %w", err)
	}
	return applied, nil
}

// Top returns the n entities of a kind with the highest value of field,
// highest first, ties by ascending id, read from SQL. Entities whose value
// is 0 are left out. Deltas not yet in SQL (write-behind, buffered) are not
// counted.
func (c *Counters) Top(ctx context.Context, kind, field string, n int) ([]Ranked, error) {
	if _, _, err := c.field(kind, field); err != nil {
		return nil, err
	}
	if n < 1 || n > MaxTop {
		return nil, fmt.Errorf("%w: %d, want 1 to %d", ErrBadLimit, n, MaxTop)
	}
	out := []Ranked{}
	err := c.queryRows(ctx, c.db, func() { out = out[:0] }, func(rows *sql.Rows) error {
		var r Ranked
		if err := rows.Scan(&r.ID, &r.Count); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	}, c.q.top, kind, field, n)
	if err != nil {
		return nil, fmt.Errorf("entity: top: %w", err)
	}
	return out, nil
}

var errEpochMoved = errors.New("entity: read: a write-behind flush kept moving deltas during the read")
