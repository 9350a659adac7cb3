package entity

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
)

// queries holds the SQL of one dialect and table.
type queries struct {
	dialect Dialect
	table   string
	batches string // applied write-behind batches
	stale   string // entities whose cache entry must be dropped

	schema      []string
	incr        string // kind, id, field, slot, delta, delta
	upsertHead  string // multi-row increment: head, then "(?, ?, ?, ?, ?)" per row, then upsertTail
	upsertTail  string
	reset       string // kind, id, field
	top         string // kind, field, n
	sums        string // kind, field: stored value per entity
	lockSuffix  string // " FOR UPDATE" where the dialect has it
	markApplied string // batch id, time; affects no row if the batch was applied
	prune       string // time
	markStale   string // kind, id
	listStale   string // limit
	dropStale   string // kind, id, seq
}

func newQueries(d Dialect, table string) queries {
	q := queries{dialect: d, table: table, batches: table + "_batches", stale: table + "_stale"}
	cols := "(kind, entity_id, field, slot, value)"
	q.upsertHead = "INSERT INTO " + table + " " + cols + " VALUES "
	q.reset = "UPDATE " + table + " SET value = 0 WHERE kind = ? AND entity_id = ? AND field = ? AND value <> 0"
	q.top = "SELECT entity_id, SUM(value) AS total FROM " + table +
		" WHERE kind = ? AND field = ? GROUP BY entity_id HAVING SUM(value) <> 0 ORDER BY total DESC, entity_id ASC LIMIT ?"
	q.sums = "SELECT entity_id, SUM(value) FROM " + table + " WHERE kind = ? AND field = ? GROUP BY entity_id"
	q.prune = "DELETE FROM " + q.batches + " WHERE applied_at < ?"
	q.listStale = "SELECT kind, entity_id, seq FROM " + q.stale + " ORDER BY kind, entity_id LIMIT ?"
	q.dropStale = "DELETE FROM " + q.stale + " WHERE kind = ? AND entity_id = ? AND seq = ?"
	switch d {
	case MySQL:
		q.schema = []string{
			"CREATE TABLE IF NOT EXISTS " + table + ` (
  kind VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  entity_id BIGINT NOT NULL,
  field VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  slot SMALLINT NOT NULL DEFAULT 0,
  value BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (kind, entity_id, field, slot),
  KEY by_field (kind, field, entity_id)
) ENGINE=InnoDB`,
			"CREATE TABLE IF NOT EXISTS " + q.batches + ` (
  batch_id VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL PRIMARY KEY,
  applied_at BIGINT NOT NULL,
  KEY by_time (applied_at)
) ENGINE=InnoDB`,
			"CREATE TABLE IF NOT EXISTS " + q.stale + ` (
  kind VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL,
  entity_id BIGINT NOT NULL,
  seq BIGINT NOT NULL DEFAULT 1,
  PRIMARY KEY (kind, entity_id)
) ENGINE=InnoDB`,
		}
		q.incr = q.upsertHead + "(?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE value = value + ?"
		q.upsertTail = " ON DUPLICATE KEY UPDATE value = value + VALUES(value)"
		q.lockSuffix = " FOR UPDATE"
		q.markApplied = "INSERT IGNORE INTO " + q.batches + " (batch_id, applied_at) VALUES (?, ?)"
		q.markStale = "INSERT INTO " + q.stale + " (kind, entity_id, seq) VALUES (?, ?, 1) ON DUPLICATE KEY UPDATE seq = seq + 1"
	case SQLite:
		q.schema = []string{
			"CREATE TABLE IF NOT EXISTS " + table + ` (
  kind TEXT NOT NULL,
  entity_id INTEGER NOT NULL,
  field TEXT NOT NULL,
  slot INTEGER NOT NULL DEFAULT 0,
  value INTEGER NOT NULL DEFAULT 0,
  PRIMARY KEY (kind, entity_id, field, slot)
) WITHOUT ROWID`,
			"CREATE INDEX IF NOT EXISTS " + table + "_by_field ON " + table + " (kind, field, entity_id)",
			"CREATE TABLE IF NOT EXISTS " + q.batches + ` (
  batch_id TEXT NOT NULL PRIMARY KEY,
  applied_at INTEGER NOT NULL
)`,
			"CREATE INDEX IF NOT EXISTS " + q.batches + "_by_time ON " + q.batches + " (applied_at)",
			"CREATE TABLE IF NOT EXISTS " + q.stale + ` (
  kind TEXT NOT NULL,
  entity_id INTEGER NOT NULL,
  seq INTEGER NOT NULL DEFAULT 1,
  PRIMARY KEY (kind, entity_id)
) WITHOUT ROWID`,
		}
		conflict := " ON CONFLICT (kind, entity_id, field, slot) DO UPDATE SET value = value + "
		q.incr = q.upsertHead + "(?, ?, ?, ?, ?)" + conflict + "?"
		q.upsertTail = conflict + "excluded.value"
		q.markApplied = "INSERT INTO " + q.batches + " (batch_id, applied_at) VALUES (?, ?) ON CONFLICT (batch_id) DO NOTHING"
		q.markStale = "INSERT INTO " + q.stale + " (kind, entity_id, seq) VALUES (?, ?, 1) ON CONFLICT (kind, entity_id) DO UPDATE SET seq = seq + 1"
	}
	return q
}

// load is the read of cold entities: every field's sum over its slots, and
// when batch is not empty, in the same statement (one snapshot) whether
// that write-behind batch has been applied, as a row with field "#applied".
func (q *queries) load(n int, withBatch bool) string {
	var b strings.Builder
	b.WriteString("SELECT entity_id, field, SUM(value) FROM ")
	b.WriteString(q.table)
	b.WriteString(" WHERE kind = ? AND entity_id IN (")
	placeholders(&b, n)
	b.WriteString(") GROUP BY entity_id, field")
	if withBatch {
		b.WriteString(" UNION ALL SELECT 0, '#applied', COUNT(*) FROM ")
		b.WriteString(q.batches)
		b.WriteString(" WHERE batch_id = ?")
	}
	return b.String()
}

// lockRows selects the slot rows of some entities' field, locking them
// where the dialect can.
func (q *queries) lockRows(n int) string {
	var b strings.Builder
	b.WriteString("SELECT entity_id, value FROM ")
	b.WriteString(q.table)
	b.WriteString(" WHERE kind = ? AND field = ? AND entity_id IN (")
	placeholders(&b, n)
	b.WriteString(")")
	b.WriteString(q.lockSuffix)
	return b.String()
}

// foldRows selects nonzero rows of slots above 0, locking them.
func (q *queries) foldRows() string {
	return "SELECT entity_id, slot, value FROM " + q.table +
		" WHERE kind = ? AND field = ? AND slot > 0 AND value <> 0 ORDER BY entity_id, slot LIMIT ?" + q.lockSuffix
}

func (q *queries) subtract() string {
	return "UPDATE " + q.table + " SET value = value - ? WHERE kind = ? AND entity_id = ? AND field = ? AND slot = ?"
}

func placeholders(b *strings.Builder, n int) {
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('?')
	}
}

// row is one increment of one SQL slot row.
type row struct {
	kind  string
	id    int64
	field string
	slot  int
	delta int64
}

// maxRowsPerStatement keeps multi-row statements well under every
// dialect's placeholder limit.
const maxRowsPerStatement = 500

// execUpserts adds rows with multi-row upserts in tx.
func (q *queries) execUpserts(ctx context.Context, tx *sql.Tx, rows []row) error {
	for len(rows) > 0 {
		n := min(len(rows), maxRowsPerStatement)
		var b strings.Builder
		b.WriteString(q.upsertHead)
		args := make([]any, 0, 5*n)
		for i, r := range rows[:n] {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString("(?, ?, ?, ?, ?)")
			args = append(args, r.kind, r.id, r.field, r.slot, r.delta)
		}
		b.WriteString(q.upsertTail)
		if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// retryable reports errors after which the whole statement or transaction
// can simply run again: deadlocks and lock waits, SQLite's busy database.
func retryable(err error) bool {
	var my *mysql.MySQLError
	if errors.As(err, &my) {
		return my.Number == 1213 || my.Number == 1205 // deadlock, lock wait timeout
	}
	// modernc.org/sqlite errors carry the (extended) result code; imported
	// by interface so that MySQL-only programs need not link SQLite.
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		switch coded.Code() & 0xff {
		case 5, 6: // SQLITE_BUSY, SQLITE_LOCKED
			return true
		}
	}
	return false
}

const maxAttempts = 8

// retry runs fn until it succeeds, fails for a reason retrying cannot cure,
// or has been tried maxAttempts times.
func retry(ctx context.Context, fn func() error) error {
	var err error
	for attempt := 1; ; attempt++ {
		err = fn()
		if err == nil || !retryable(err) || attempt == maxAttempts {
			return err
		}
		wait := time.Duration(attempt)*5*time.Millisecond + rand.N(5*time.Millisecond)
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// inTx runs fn in a transaction, retried as a whole on deadlocks.
func inTx(ctx context.Context, db *sql.DB, fn func(tx *sql.Tx) error) error {
	return retry(ctx, func() error {
		tx, err := db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			_ = tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}

// createSchema makes the tables, doing nothing to those that exist.
func (q *queries) createSchema(ctx context.Context, db *sql.DB) error {
	for _, stmt := range q.schema {
		if err := retry(ctx, func() error { _, err := db.ExecContext(ctx, stmt); return err }); err != nil {
			return fmt.Errorf("entity: create tables: %w", err)
		}
	}
	return nil
}
