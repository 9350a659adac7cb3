package sqlstore

import (
	"context"
	"database/sql"
	"time"
)

// The side tables: stale cache entries, global sequences, read marks.

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

// NextSeq adds 1 to a sequence in tx and returns it.
func (s *Store) NextSeq(ctx context.Context, tx *sql.Tx, name string) (int64, error) {
	if _, err := tx.ExecContext(ctx, s.q.seqNext, name); err != nil {
		return 0, err
	}
	var v int64
	err := tx.QueryRowContext(ctx, s.q.seqGet, name).Scan(&v)
	return v, err
}

// LockedSeq reads a sequence in tx, locking its row where the dialect can.
func (s *Store) LockedSeq(ctx context.Context, tx Querier, name string) (int64, error) {
	var v int64
	err := tx.QueryRowContext(ctx, s.q.seqLock, name).Scan(&v)
	return v, err
}

// RaiseSeq sets a sequence to v in tx unless it holds more already.
func (s *Store) RaiseSeq(ctx context.Context, ex Execer, name string, v int64) error {
	_, err := ex.ExecContext(ctx, s.q.seqSet, v, name, v)
	return err
}

// SeqPair reads two sequences.
func (s *Store) SeqPair(ctx context.Context, a, b string) (map[string]int64, error) {
	return s.nameValues(ctx, s.q.seqPair, a, b)
}

// ReadMarks reads a user's read marks.
func (s *Store) ReadMarks(ctx context.Context, user int64) (map[string]int64, error) {
	return s.nameValues(ctx, s.q.markList, user)
}

func (s *Store) nameValues(ctx context.Context, query string, args ...any) (map[string]int64, error) {
	m := map[string]int64{}
	err := s.query(ctx, func() { clear(m) }, func(rows *sql.Rows) error {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return err
		}
		m[name] = v
		return nil
	}, query, args...)
	return m, err
}

// AddMark adds delta to one of a user's marks in tx, if they have it.
func (s *Store) AddMark(ctx context.Context, ex Execer, user int64, name string, delta int64) error {
	_, err := ex.ExecContext(ctx, s.q.markAdd, delta, user, name)
	return err
}

// SetMarks writes a user's marks, in the order of names (those marks
// lacks are skipped), with the time they were seen.
func (s *Store) SetMarks(ctx context.Context, user int64, names []string, marks map[string]int64, seen time.Time) error {
	return s.InTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, name := range names {
			v, ok := marks[name]
			if !ok {
				continue
			}
			if _, err := tx.ExecContext(ctx, s.q.markSet, user, name, v, seen.Unix()); err != nil {
				return err
			}
		}
		return nil
	})
}

// PruneMarks drops the marks last seen before cutoff and says how many.
func (s *Store) PruneMarks(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := s.exec(ctx, s.q.markPrune, cutoff.Unix())
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return n, nil
}
