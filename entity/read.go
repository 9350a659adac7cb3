package entity

import (
	"context"
	"errors"
	"fmt"
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
		err = c.buf.stableRead(ctx, read)
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
// order, flattened: through the cache (see lease.go) while it is in use,
// else from SQL alone.
func (c *Counters) read(ctx context.Context, k *kindSpec, ids []int64) ([]int64, error) {
	if c.cs.cacheUp() {
		vals, ok, err := c.cs.readCached(ctx, k, ids)
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

// loadSQL reads ids' fields from SQL into out and, for the write-behind
// batches named, whether each is applied, in one statement.
func (c *state) loadSQL(ctx context.Context, k *kindSpec, ids []int64, batches []string, out []int64) (map[string]bool, error) {
	sums, applied, err := c.sql.Load(ctx, k.name, ids, batches)
	if err != nil {
		return nil, fmt.Errorf("entity: read: %w", err)
	}
	nf := len(k.fields)
	pos := make(map[int64]int, len(ids))
	for i, id := range ids {
		pos[id] = i
	}
	clear(out)
	for _, s := range sums {
		j, ok := k.index[s.Field]
		i, known := pos[s.ID]
		if ok && known {
			out[i*nf+j] = s.Value
		}
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
	rows, err := c.sql.Top(ctx, kind, field, n)
	if err != nil {
		return nil, fmt.Errorf("entity: top: %w", err)
	}
	out := make([]Ranked, len(rows))
	for i, r := range rows {
		out[i] = Ranked{ID: r.ID, Count: r.Value}
	}
	return out, nil
}

var errEpochMoved = errors.New("entity: read: a write-behind flush kept moving deltas during the read")
