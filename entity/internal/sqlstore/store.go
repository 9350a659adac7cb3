package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"time"
)

// Store runs the counters' SQL on one database and set of tables, every
// statement bounded by a timeout and retried on transient errors.
type Store struct {
	Tables
	dialect Dialect
	db      *sql.DB
	timeout time.Duration
	q       queries
}

// New prepares the statements; it does no I/O.
func New(db *sql.DB, d Dialect, table string, timeout time.Duration) *Store {
	t := tablesFor(table)
	return &Store{Tables: t, dialect: d, db: db, timeout: timeout, q: newQueries(d, t)}
}

// DB is the database the store runs on.
func (s *Store) DB() *sql.DB { return s.db }

// Bind rewrites a query's ? placeholders for the store's dialect.
func (s *Store) Bind(query string) string { return Bind(s.dialect, query) }

// Sum is the dialect's SUM(value) as a BIGINT.
func (s *Store) Sum() string { return s.q.sum }

// Migrate creates the tables that do not exist, and the sequences named.
func (s *Store) Migrate(ctx context.Context, seqs ...string) error {
	for _, stmt := range s.q.schema {
		if _, err := s.exec(ctx, stmt); err != nil {
			return err
		}
	}
	for _, name := range seqs {
		if _, err := s.exec(ctx, s.q.seqInit, name); err != nil {
			return err
		}
	}
	return nil
}

// Row is one increment of one SQL slot row.
type Row struct {
	Kind  string
	ID    int64
	Field string
	Slot  int
	Delta int64
}

// FieldSum is one entity's field summed over its slots.
type FieldSum struct {
	ID    int64
	Field string
	Value int64
}

// Incr adds delta to one slot row.
func (s *Store) Incr(ctx context.Context, ex Execer, kind string, id int64, field string, slot int, delta int64) error {
	_, err := ex.ExecContext(ctx, s.q.incr, kind, id, field, slot, delta, delta)
	return err
}

// maxRowsPerStatement keeps multi-row statements well under every
// dialect's placeholder limit.
const maxRowsPerStatement = 500

// Upsert adds rows with multi-row upserts.
func (s *Store) Upsert(ctx context.Context, ex Execer, rows []Row) error {
	for len(rows) > 0 {
		n := min(len(rows), maxRowsPerStatement)
		var b strings.Builder
		b.WriteString(s.q.upsertHead)
		args := make([]any, 0, 5*n)
		for i, r := range rows[:n] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?)")
			args = append(args, r.Kind, r.ID, r.Field, r.Slot, r.Delta)
		}
		b.WriteString(s.q.upsertTail)
		if _, err := ex.ExecContext(ctx, s.Bind(b.String()), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// Reset sets one counter's slot rows to 0; ex nil runs it on its own.
func (s *Store) Reset(ctx context.Context, ex Execer, kind string, id int64, field string) error {
	var err error
	if ex == nil {
		_, err = s.exec(ctx, s.q.reset, kind, id, field)
	} else {
		_, err = ex.ExecContext(ctx, s.q.reset, kind, id, field)
	}
	return err
}

// Load reads ids' fields of one kind and, for the write-behind batches
// named, which are applied, in one statement: one snapshot.
func (s *Store) Load(ctx context.Context, kind string, ids []int64, batches []string) ([]FieldSum, map[string]bool, error) {
	args := make([]any, 0, 1+len(ids)+len(batches))
	args = append(args, kind)
	for _, id := range ids {
		args = append(args, id)
	}
	isBatch := make(map[string]bool, len(batches))
	for _, b := range batches {
		args = append(args, b)
		isBatch[b] = true
	}
	var sums []FieldSum
	applied := map[string]bool{}
	err := s.query(ctx, func() { sums = sums[:0]; clear(applied) }, func(rows *sql.Rows) error {
		var r FieldSum
		if err := rows.Scan(&r.ID, &r.Field, &r.Value); err != nil {
			return err
		}
		if isBatch[r.Field] {
			applied[r.Field] = true
		} else {
			sums = append(sums, r)
		}
		return nil
	}, s.loadQuery(len(ids), len(batches)), args...)
	return sums, applied, err
}

// Value reads one counter in tx.
func (s *Store) Value(ctx context.Context, tx Querier, kind string, id int64, field string) (int64, error) {
	var n sql.NullInt64
	err := tx.QueryRowContext(ctx, s.q.value, kind, id, field).Scan(&n)
	return n.Int64, err
}

// IDValue is one entity's value of one counter.
type IDValue struct {
	ID    int64
	Value int64
}

// Top is the n entities with the highest nonzero value of field, highest
// first, ties by ascending id.
func (s *Store) Top(ctx context.Context, kind, field string, n int) ([]IDValue, error) {
	out := []IDValue{}
	err := s.query(ctx, func() { out = out[:0] }, func(rows *sql.Rows) error {
		var r IDValue
		if err := rows.Scan(&r.ID, &r.Value); err != nil {
			return err
		}
		out = append(out, r)
		return nil
	}, s.q.top, kind, field, n)
	return out, err
}

// Sums is every stored entity's value of one counter.
func (s *Store) Sums(ctx context.Context, kind, field string) (map[int64]int64, error) {
	var out map[int64]int64
	err := s.query(ctx, func() { out = map[int64]int64{} }, func(rows *sql.Rows) error {
		var id, v int64
		if err := rows.Scan(&id, &v); err != nil {
			return err
		}
		out[id] = v
		return nil
	}, s.q.sums, kind, field)
	return out, err
}

// LockedSums reads ids' values of one counter in tx, locking their rows.
func (s *Store) LockedSums(ctx context.Context, tx Querier, kind, field string, ids []int64) (map[int64]int64, error) {
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
	}, s.lockRowsQuery(len(ids)), args...)
	return out, err
}

// SlotRows selects up to limit nonzero rows of field's slots above 0 in
// tx, locking them.
func (s *Store) SlotRows(ctx context.Context, tx Querier, kind, field string, limit int) ([]Row, error) {
	var list []Row
	err := scanRows(ctx, tx, nil, func(rows *sql.Rows) error {
		r := Row{Kind: kind, Field: field}
		if err := rows.Scan(&r.ID, &r.Slot, &r.Delta); err != nil {
			return err
		}
		list = append(list, r)
		return nil
	}, s.q.foldRows, kind, field, limit)
	return list, err
}

// Subtract takes r.Delta from r's slot row.
func (s *Store) Subtract(ctx context.Context, ex Execer, r Row) error {
	_, err := ex.ExecContext(ctx, s.q.subtract, r.Delta, r.Kind, r.ID, r.Field, r.Slot)
	return err
}

// MarkApplied records a batch as applied in tx; fresh is false if it was
// recorded before.
func (s *Store) MarkApplied(ctx context.Context, ex Execer, batch string, at time.Time) (fresh bool, err error) {
	res, err := ex.ExecContext(ctx, s.q.markApplied, batch, at.Unix())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// PruneBatches forgets the batches applied before cutoff.
func (s *Store) PruneBatches(ctx context.Context, cutoff time.Time) error {
	if _, err := s.exec(ctx, s.q.prune, cutoff.Unix()); err != nil {
		return fmt.Errorf("entity: prune batches: %w", err)
	}
	return nil
}
