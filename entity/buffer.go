package entity

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Buffered fields. An increment is a compare-and-swap on an in-process
// cell: no Redis, no SQL. About once a BufferInterval the cells are taken
// (swapped to 0) into a batch that goes through the durable write path in
// one transaction tagged with a batch id, so a batch whose commit reply was
// lost is retried under the same id and applied once. A crash loses at
// most one interval; Close flushes.

// retired marks a cell the flusher removed from the map: a writer that
// finds it starts over on a fresh cell, so no add lands on a cell nobody
// reads any more.
const retired = math.MinInt64

type bufKey struct {
	kind  string
	id    int64
	field int
}

type bufCell struct{ n atomic.Int64 }

// add adds delta unless the cell is retired.
func (cell *bufCell) add(delta int64) bool {
	for {
		old := cell.n.Load()
		if old == retired {
			return false
		}
		if cell.n.CompareAndSwap(old, old+delta) {
			return true
		}
	}
}

type bufBatch struct {
	id   string
	rows []bufRow
}

type bufRow struct {
	key   bufKey
	delta int64
}

type buffer struct {
	cells sync.Map // bufKey -> *bufCell

	// lock lets one flush run at a time, and a read that must wait for
	// one waits no longer than its context allows.
	lock     chan struct{}
	inflight atomic.Pointer[bufBatch]
	// gen is odd while a flush moves deltas between the cells, the batch
	// in flight and SQL and the cache; a read that saw it odd, or saw it
	// change, may have counted a delta twice or not at all.
	gen atomic.Uint64
}

func newBuffer() *buffer { return &buffer{lock: make(chan struct{}, 1)} }

// acquire takes the flush lock, or fails when ctx ends first.
func (b *buffer) acquire(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case b.lock <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (b *buffer) release() { <-b.lock }

func (b *buffer) add(kind string, id int64, field int, delta int64) {
	k := bufKey{kind, id, field}
	for {
		v, ok := b.cells.Load(k)
		if !ok {
			v, _ = b.cells.LoadOrStore(k, &bufCell{})
		}
		if v.(*bufCell).add(delta) {
			return
		}
		b.cells.CompareAndDelete(k, v)
	}
}

// take swaps every cell to 0 and returns the deltas, sorted so concurrent
// transactions lock rows in one order. Cells already 0 are retired.
func (b *buffer) take() []bufRow {
	var rows []bufRow
	b.cells.Range(func(key, v any) bool {
		cell := v.(*bufCell)
		if cell.n.CompareAndSwap(0, retired) {
			b.cells.CompareAndDelete(key, v)
			return true
		}
		if d := cell.n.Swap(0); d != 0 && d != retired {
			rows = append(rows, bufRow{key: key.(bufKey), delta: d})
		}
		return true
	})
	slices.SortFunc(rows, func(x, y bufRow) int {
		return cmp.Or(cmp.Compare(x.key.kind, y.key.kind), cmp.Compare(x.key.id, y.key.id), cmp.Compare(x.key.field, y.key.field))
	})
	return rows
}

// addPending adds to vals (ids' fields of kind k, flattened) the deltas
// this process holds and has not written yet.
func (b *buffer) addPending(k *kindSpec, ids []int64, vals []int64) {
	nf := len(k.fields)
	hasBuffered := false
	for _, isBuf := range k.buffer {
		hasBuffered = hasBuffered || isBuf
	}
	if !hasBuffered {
		return
	}
	fl := b.inflight.Load()
	for i, id := range ids {
		for j, isBuf := range k.buffer {
			if !isBuf {
				continue
			}
			key := bufKey{k.name, id, j}
			if v, ok := b.cells.Load(key); ok {
				if n := v.(*bufCell).n.Load(); n != retired {
					vals[i*nf+j] += n
				}
			}
			if fl != nil {
				for _, r := range fl.rows {
					if r.key == key {
						vals[i*nf+j] += r.delta
					}
				}
			}
		}
	}
}

// anyBuffered reports whether reads of k must add buffered deltas.
func (k *kindSpec) anyBuffered() bool {
	for _, b := range k.buffer {
		if b {
			return true
		}
	}
	return false
}

// FlushBuffered writes the buffered deltas now; the background work does
// it every BufferInterval and Close does it last.
func (c *Counters) FlushBuffered(ctx context.Context) error { return c.fl.flushBuffered(ctx) }

func (c *flusher) flushBuffered(ctx context.Context) error {
	b := c.buf
	if err := b.acquire(ctx); err != nil {
		return fmt.Errorf("entity: flush buffered: %w", err)
	}
	defer b.release()
	b.gen.Add(1)
	defer b.gen.Add(1)
	batch := b.inflight.Load()
	if batch == nil {
		rows := b.take()
		if len(rows) == 0 {
			return nil
		}
		batch = &bufBatch{id: c.newBatchID(), rows: rows}
		b.inflight.Store(batch)
	}
	if err := c.applyBuffered(ctx, batch); err != nil {
		// Kept in flight: the next flush retries it under the same id.
		return fmt.Errorf("entity: flush buffered: %w", err)
	}
	b.inflight.Store(nil)
	return nil
}

// readRetries bounds how often a read of buffered fields starts over
// because a flush was moving deltas, about 50 ms; after that it waits for
// the flush to end and reads with no flush under it, as an answer taken
// while deltas move could count one twice or not at all.
const readRetries = 25

// stableRead runs read (which must read the cache or SQL and add the
// pending deltas) when no flush moves deltas under it. A flush stuck on a
// stalled database holds the lock for up to its statement timeout, so the
// wait for it ends with ctx, as ErrUnavailable.
func (b *buffer) stableRead(ctx context.Context, read func() error) error {
	for range readRetries {
		g := b.gen.Load()
		if g%2 == 1 {
			time.Sleep(2 * time.Millisecond)
			continue
		}
		if err := read(); err != nil {
			return err
		}
		if b.gen.Load() == g {
			return nil
		}
	}
	if err := b.acquire(ctx); err != nil {
		return fmt.Errorf("%w: waiting for a flush of buffered counts: %w", ErrUnavailable, err)
	}
	defer b.release()
	return read()
}

// applyBuffered writes one batch through InTx, so the cache follows, with
// its id recorded in the same transaction: a batch applied before is not
// applied again.
func (c *flusher) applyBuffered(ctx context.Context, batch *bufBatch) error {
	if h := c.hooks.bufferedApply; h != nil {
		if err := h(batch.id); err != nil {
			return err
		}
	}
	err := c.inTx(ctx, func(ctx context.Context, tx *Tx) error {
		fresh, err := c.sql.MarkApplied(ctx, tx.Tx, batch.id, c.clock.Now())
		if err != nil || !fresh {
			return err // applied before
		}
		for _, r := range batch.rows {
			k := c.kinds[r.key.kind]
			if err := tx.Incr(r.key.kind, r.key.id, k.fields[r.key.field], r.delta); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if h := c.hooks.bufferedCommitted; h != nil {
		return h(batch.id)
	}
	return nil
}
