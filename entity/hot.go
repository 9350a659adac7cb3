package entity

import (
	"context"
	"database/sql"
	"fmt"
)

// Hot slots: a field declared in Kind.Hot spreads its SQL value over N
// slot rows, so concurrent writers to one entity rarely wait on the same
// row lock. Reads sum the slots; the background work folds them back into
// slot 0 under their row locks, so no sum ever changes while it runs.

// slot picks the SQL row an increment goes to: a hot field's slots in
// turn, so writers in flight at once hold different row locks (random
// picks would put two of them on one slot far more often: with 32 writers
// over 64 slots, two in five would share one). Turns start at a random
// slot (newKindSpec), so processes do not all start on the same one.
func slot(k *kindSpec, fi int) int {
	if n := k.slots[fi]; n > 1 {
		return int(k.turn[fi].Add(1) % uint64(n))
	}
	return 0
}

// foldChunk is how many slot rows one fold transaction moves.
const foldChunk = 500

// fold moves the values of hot fields' slots above 0 into slot 0, under
// the rows' locks, so the sum a reader sees never changes.
func (c *flusher) fold(ctx context.Context) error {
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

// foldOnce folds up to foldChunk slot rows of one field in one
// transaction and says how many it found.
func (c *flusher) foldOnce(ctx context.Context, kind, field string) (int, error) {
	var n int
	err := c.sql.InTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		list, err := c.sql.SlotRows(ctx, tx, kind, field, foldChunk)
		if err != nil {
			return err
		}
		n = len(list)
		sums := map[int64]int64{}
		var order []int64
		for _, r := range list {
			if _, ok := sums[r.ID]; !ok {
				order = append(order, r.ID)
			}
			sums[r.ID] += r.Delta
			if err := c.sql.Subtract(ctx, tx, r); err != nil {
				return err
			}
		}
		for _, id := range order {
			if err := c.sql.Incr(ctx, tx, kind, id, field, 0, sums[id]); err != nil {
				return err
			}
		}
		return nil
	})
	return n, err
}
