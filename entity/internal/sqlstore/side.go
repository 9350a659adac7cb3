package sqlstore

import (
	"context"
	"database/sql"
)

// The stale table: cache entries to drop once Redis is back.

// MarkStale records an entity whose cache entry must be dropped; ex nil
// runs it on its own.
func (s *Store) MarkStale(ctx context.Context, ex Execer, kind string, id int64) error {
	var err error
	if ex == nil {
		_, err = s.exec(ctx, s.q.markStale, kind, id)
	} else {
		_, err = ex.ExecContext(ctx, s.q.markStale, kind, id)
	}
	return err
}

// Stale is one stale record; Seq moves each time it is recorded again.
type Stale struct {
	Kind string
	ID   int64
	Seq  int64
}

// ListStale returns up to limit stale records.
func (s *Store) ListStale(ctx context.Context, limit int) ([]Stale, error) {
	var list []Stale
	err := s.query(ctx, func() { list = list[:0] }, func(rows *sql.Rows) error {
		var r Stale
		if err := rows.Scan(&r.Kind, &r.ID, &r.Seq); err != nil {
			return err
		}
		list = append(list, r)
		return nil
	}, s.q.listStale, limit)
	return list, err
}

// DropStale deletes the records listed, except those recorded again
// since (their Seq moved).
func (s *Store) DropStale(ctx context.Context, list []Stale) error {
	return s.InTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, r := range list {
			if _, err := tx.ExecContext(ctx, s.q.dropStale, r.Kind, r.ID, r.Seq); err != nil {
				return err
			}
		}
		return nil
	})
}
