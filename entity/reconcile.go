package entity

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
)

// reconcileChunk is how many drifted entities one fix transaction locks.
const reconcileChunk = 200

// Reconcile recomputes one counter of every entity of a kind from the
// app's source of truth and corrects the entities that drifted: only their
// rows are written, their cache entries are dropped, and each correction
// is reported, sorted by id. Entities with a stored value that truth does
// not list are corrected to 0.
//
// Each correction is made under the rows' locks with an atomic add of the
// difference, so it never undoes another correction. An increment made
// while Reconcile runs may or may not be in truth's answer; run it when
// the counter is quiet, or accept that such an increment can be undone.
func (c *Counters) Reconcile(ctx context.Context, kind, field string, truth Source) ([]Fix, error) {
	k, fi, err := c.field(kind, field)
	if err != nil {
		return nil, err
	}
	if truth == nil {
		return nil, errors.New("entity: reconcile: nil Source")
	}
	if c.writeBehind {
		if err := c.Flush(ctx); err != nil {
			return nil, fmt.Errorf("entity: reconcile: %w", err)
		}
	}
	want, err := truth(ctx)
	if err != nil {
		return nil, fmt.Errorf("entity: reconcile: source of %s.%s: %w", kind, field, err)
	}
	stored, err := c.storedSums(ctx, kind, field)
	if err != nil {
		return nil, err
	}
	var drifted []int64
	for id, v := range stored {
		if want[id] != v {
			drifted = append(drifted, id)
		}
	}
	for id, v := range want {
		if _, ok := stored[id]; !ok && v != 0 {
			drifted = append(drifted, id)
		}
	}
	slices.Sort(drifted)

	fixes := []Fix{}
	for len(drifted) > 0 {
		n := min(len(drifted), reconcileChunk)
		chunk := drifted[:n]
		drifted = drifted[n:]
		var made []Fix
		err := c.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
			made = made[:0]
			was, err := c.lockedSums(ctx, tx, kind, field, chunk)
			if err != nil {
				return err
			}
			for _, id := range chunk {
				now := want[id]
				if was[id] == now {
					continue // repaired meanwhile
				}
				d := now - was[id]
				if _, err := tx.ExecContext(ctx, c.q.incr, kind, id, field, 0, d, d); err != nil {
					return err
				}
				made = append(made, Fix{Kind: kind, ID: id, Field: k.fields[fi], Was: was[id], Now: now})
			}
			return nil
		})
		if err != nil {
			return fixes, fmt.Errorf("entity: reconcile: %w", err)
		}
		fixes = append(fixes, made...)
	}
	ids := make([]int64, len(fixes))
	for i, f := range fixes {
		ids[i] = f.ID
	}
	if err := c.invalidate(context.WithoutCancel(ctx), kind, ids); err != nil {
		return fixes, err
	}
	return fixes, nil
}

// storedSums is every entity's stored value of one counter.
func (c *Counters) storedSums(ctx context.Context, kind, field string) (map[int64]int64, error) {
	var out map[int64]int64
	err := c.queryRows(ctx, c.db, func() { out = map[int64]int64{} }, func(rows *sql.Rows) error {
		var id, v int64
		if err := rows.Scan(&id, &v); err != nil {
			return err
		}
		out[id] = v
		return nil
	}, c.q.sums, kind, field)
	if err != nil {
		return nil, fmt.Errorf("entity: reconcile: stored values: %w", err)
	}
	return out, nil
}

// lockedSums reads ids' values of one counter, locking their rows.
func (c *Counters) lockedSums(ctx context.Context, tx *sql.Tx, kind, field string, ids []int64) (map[int64]int64, error) {
	args := make([]any, 0, 2+len(ids))
	args = append(args, kind, field)
	for _, id := range ids {
		args = append(args, id)
	}
	out := make(map[int64]int64, len(ids))
	err := scanRows(ctx, tx, nil, func(rows *sql.Rows) error {
		var id, v int64
		if err := rows.Scan(&id, &v); err != nil {
			return err
		}
		out[id] += v
		return nil
	}, c.q.lockRows(len(ids)), args...)
	return out, err
}

// foldChunk is how many slot rows one fold transaction moves.
const foldChunk = 500

// fold moves the values of hot fields' slots above 0 into slot 0, under
// the rows' locks, so the sum a reader sees never changes.
func (c *Counters) fold(ctx context.Context) error {
	for _, name := range c.order {
		k := c.kinds[name]
		for _, field := range k.hot {
			// Bounded: writers keep refilling slots while this runs.
			for i := 0; i < 100; i++ {
				n, err := c.foldOnce(ctx, k.name, field)
				if err != nil {
					return fmt.Errorf("entity: fold %s.%s: %w", k.name, field, err)
				}
				if n < foldChunk {
					break
				}
			}
		}
	}
	return nil
}

func (c *Counters) foldOnce(ctx context.Context, kind, field string) (int, error) {
	var n int
	err := c.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		type slotRow struct {
			id    int64
			slot  int
			value int64
		}
		var list []slotRow
		err := scanRows(ctx, tx, nil, func(rows *sql.Rows) error {
			var r slotRow
			if err := rows.Scan(&r.id, &r.slot, &r.value); err != nil {
				return err
			}
			list = append(list, r)
			return nil
		}, c.q.foldRows(), kind, field, foldChunk)
		if err != nil {
			return err
		}
		n = len(list)
		sums := map[int64]int64{}
		var order []int64
		for _, r := range list {
			if _, ok := sums[r.id]; !ok {
				order = append(order, r.id)
			}
			sums[r.id] += r.value
			if _, err := tx.ExecContext(ctx, c.q.subtract(), r.value, kind, r.id, field, r.slot); err != nil {
				return err
			}
		}
		for _, id := range order {
			s := sums[id]
			if _, err := tx.ExecContext(ctx, c.q.incr, kind, id, field, 0, s, s); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}
