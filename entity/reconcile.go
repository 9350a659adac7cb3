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
	stored, err := c.sql.Sums(ctx, kind, field)
	if err != nil {
		return nil, fmt.Errorf("entity: reconcile: stored values: %w", err)
	}
	drifted := driftedIDs(stored, want)
	fixes := []Fix{}
	for len(drifted) > 0 {
		n := min(len(drifted), reconcileChunk)
		made, err := c.fixChunk(ctx, kind, k.fields[fi], drifted[:n], want)
		if err != nil {
			return fixes, fmt.Errorf("entity: reconcile: %w", err)
		}
		fixes = append(fixes, made...)
		drifted = drifted[n:]
	}
	ids := make([]int64, len(fixes))
	for i, f := range fixes {
		ids[i] = f.ID
	}
	if err := c.cs.invalidate(context.WithoutCancel(ctx), kind, ids); err != nil {
		return fixes, err
	}
	return fixes, nil
}

// driftedIDs lists, sorted, the entities whose stored value differs from
// the true one; entities missing from want are taken to be 0.
func driftedIDs(stored, want map[int64]int64) []int64 {
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
	return drifted
}

// fixChunk corrects some entities in one transaction, under their rows'
// locks, each by an atomic add of the difference.
func (c *Counters) fixChunk(ctx context.Context, kind, field string, chunk []int64, want map[int64]int64) ([]Fix, error) {
	var made []Fix
	err := c.sql.InTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		made = made[:0]
		was, err := c.sql.LockedSums(ctx, tx, kind, field, chunk)
		if err != nil {
			return err
		}
		for _, id := range chunk {
			now := want[id]
			if was[id] == now {
				continue // repaired meanwhile
			}
			if err := c.sql.Incr(ctx, tx, kind, id, field, 0, now-was[id]); err != nil {
				return err
			}
			made = append(made, Fix{Kind: kind, ID: id, Field: field, Was: was[id], Now: now})
		}
		return nil
	})
	return made, err
}
