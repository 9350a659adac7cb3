package sqlstore

import (
	"context"
	"database/sql"
	"time"
)

// Marks are the side tables the unread counts keep in a Store: global
// sequences and users' read marks.
type Marks struct{ s *Store }

// NewMarks returns the marks kept in s.
func NewMarks(s *Store) Marks { return Marks{s} }

// NextSeq adds 1 to a sequence in tx and returns it.
func (m Marks) NextSeq(ctx context.Context, tx *sql.Tx, name string) (int64, error) {
	if _, err := tx.ExecContext(ctx, m.s.q.seqNext, name); err != nil {
		return 0, err
	}
	var v int64
	err := tx.QueryRowContext(ctx, m.s.q.seqGet, name).Scan(&v)
	return v, err
}

// LockedSeq reads a sequence in tx, locking its row where the dialect can.
func (m Marks) LockedSeq(ctx context.Context, tx Querier, name string) (int64, error) {
	var v int64
	err := tx.QueryRowContext(ctx, m.s.q.seqLock, name).Scan(&v)
	return v, err
}

// RaiseSeq sets a sequence to v in tx unless it holds more already.
func (m Marks) RaiseSeq(ctx context.Context, ex Execer, name string, v int64) error {
	_, err := ex.ExecContext(ctx, m.s.q.seqSet, v, name, v)
	return err
}

// SeqPair reads two sequences.
func (m Marks) SeqPair(ctx context.Context, a, b string) (map[string]int64, error) {
	return m.nameValues(ctx, m.s.q.seqPair, a, b)
}

// ReadMarks reads a user's read marks.
func (m Marks) ReadMarks(ctx context.Context, user int64) (map[string]int64, error) {
	return m.nameValues(ctx, m.s.q.markList, user)
}

func (m Marks) nameValues(ctx context.Context, query string, args ...any) (map[string]int64, error) {
	vals := map[string]int64{}
	err := m.s.query(ctx, func() { clear(vals) }, func(rows *sql.Rows) error {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return err
		}
		vals[name] = v
		return nil
	}, query, args...)
	return vals, err
}

// AddMark adds delta to one of a user's marks in tx, if they have it.
func (m Marks) AddMark(ctx context.Context, ex Execer, user int64, name string, delta int64) error {
	_, err := ex.ExecContext(ctx, m.s.q.markAdd, delta, user, name)
	return err
}

// SetMarks writes a user's marks, in the order of names (those marks
// lacks are skipped), with the time they were seen.
func (m Marks) SetMarks(ctx context.Context, user int64, names []string, marks map[string]int64, seen time.Time) error {
	return m.s.InTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, name := range names {
			v, ok := marks[name]
			if !ok {
				continue
			}
			if _, err := tx.ExecContext(ctx, m.s.q.markSet, user, name, v, seen.Unix()); err != nil {
				return err
			}
		}
		return nil
	})
}

// PruneMarks drops the marks last seen before cutoff and says how many.
func (m Marks) PruneMarks(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := m.s.exec(ctx, m.s.q.markPrune, cutoff.Unix())
	if err != nil {
		return 0, err
	}
	n, _ := res.RowsAffected()
	return n, nil
}
