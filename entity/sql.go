package entity

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// queries holds the SQL of one dialect and table, with ? placeholders
// already rewritten for dialects that number them.
type queries struct {
	dialect Dialect
	table   string
	batches string // applied write-behind batches
	stale   string // entities whose cache entry must be dropped
	marks   string // per-user read marks of the unread counts
	seqs    string // global sequences and times (notices, red dot)

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
	sum         string // SUM(value) as a BIGINT

	seqNext    string // name: add 1 to a sequence, returning nothing
	seqSet     string // name, value: set a value (the red dot's time)
	seqGet     string // name
	seqInit    string // name: insert a sequence at 0 if missing
	markGet    string // user, name
	markSet    string // user, name, value, seen
	markPrune  string // seen cutoff
	markDelete string // user
}

func newQueries(d Dialect, table string) queries {
	q := queries{dialect: d, table: table, batches: table + "_batches", stale: table + "_stale",
		marks: table + "_marks", seqs: table + "_seqs"}
	cols := "(kind, entity_id, field, slot, value)"
	q.sum = "SUM(value)"
	if d == Postgres {
		q.sum = "CAST(SUM(value) AS BIGINT)"
	}
	q.upsertHead = "INSERT INTO " + table + " " + cols + " VALUES "
	q.reset = "UPDATE " + table + " SET value = 0 WHERE kind = ? AND entity_id = ? AND field = ? AND value <> 0"
	q.top = "SELECT entity_id, " + q.sum + " AS total FROM " + table +
		" WHERE kind = ? AND field = ? GROUP BY entity_id HAVING SUM(value) <> 0 ORDER BY total DESC, entity_id ASC LIMIT ?"
	q.sums = "SELECT entity_id, " + q.sum + " FROM " + table + " WHERE kind = ? AND field = ? GROUP BY entity_id"
	q.prune = "DELETE FROM " + q.batches + " WHERE applied_at < ?"
	q.listStale = "SELECT kind, entity_id, seq FROM " + q.stale + " ORDER BY kind, entity_id LIMIT ?"
	q.dropStale = "DELETE FROM " + q.stale + " WHERE kind = ? AND entity_id = ? AND seq = ?"
	q.seqNext = "UPDATE " + q.seqs + " SET value = value + 1 WHERE name = ?"
	q.seqSet = "UPDATE " + q.seqs + " SET value = ? WHERE name = ? AND value < ?"
	q.seqGet = "SELECT value FROM " + q.seqs + " WHERE name = ?"
	q.markGet = "SELECT value FROM " + q.marks + " WHERE user_id = ? AND name = ?"
	q.markPrune = "DELETE FROM " + q.marks + " WHERE seen_at < ?"
	q.markDelete = "DELETE FROM " + q.marks + " WHERE user_id = ?"
	switch d {
	case MySQL:
		const ascii = "VARCHAR(64) CHARACTER SET ascii COLLATE ascii_bin NOT NULL"
		const tail = ") ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci"
		q.schema = []string{
			"CREATE TABLE IF NOT EXISTS " + table + ` (
  kind ` + ascii + `,
  entity_id BIGINT NOT NULL,
  field ` + ascii + `,
  slot SMALLINT NOT NULL DEFAULT 0,
  value BIGINT NOT NULL DEFAULT 0,
  PRIMARY KEY (kind, entity_id, field, slot),
  KEY by_field (kind, field, entity_id)
` + tail,
			"CREATE TABLE IF NOT EXISTS " + q.batches + ` (
  batch_id ` + ascii + ` PRIMARY KEY,
  applied_at BIGINT NOT NULL,
  KEY by_time (applied_at)
` + tail,
			"CREATE TABLE IF NOT EXISTS " + q.stale + ` (
  kind ` + ascii + `,
  entity_id BIGINT NOT NULL,
  seq BIGINT NOT NULL DEFAULT 1,
  PRIMARY KEY (kind, entity_id)
` + tail,
			"CREATE TABLE IF NOT EXISTS " + q.seqs + ` (
  name ` + ascii + ` PRIMARY KEY,
  value BIGINT NOT NULL DEFAULT 0
` + tail,
			"CREATE TABLE IF NOT EXISTS " + q.marks + ` (
  user_id BIGINT NOT NULL,
  name ` + ascii + `,
  value BIGINT NOT NULL,
  seen_at BIGINT NOT NULL,
  PRIMARY KEY (user_id, name),
  KEY by_seen (seen_at)
` + tail,
		}
		q.incr = q.upsertHead + "(?, ?, ?, ?, ?) ON DUPLICATE KEY UPDATE value = value + ?"
		q.upsertTail = " ON DUPLICATE KEY UPDATE value = value + VALUES(value)"
		q.lockSuffix = " FOR UPDATE"
		q.markApplied = "INSERT IGNORE INTO " + q.batches + " (batch_id, applied_at) VALUES (?, ?)"
		q.markStale = "INSERT INTO " + q.stale + " (kind, entity_id, seq) VALUES (?, ?, 1) ON DUPLICATE KEY UPDATE seq = seq + 1"
		q.seqInit = "INSERT IGNORE INTO " + q.seqs + " (name, value) VALUES (?, 0)"
		q.markSet = "INSERT INTO " + q.marks + " (user_id, name, value, seen_at) VALUES (?, ?, ?, ?) ON DUPLICATE KEY UPDATE value = VALUES(value), seen_at = VALUES(seen_at)"
	case SQLite, Postgres:
		text, id, suffix := "TEXT NOT NULL", "INTEGER NOT NULL", ") WITHOUT ROWID"
		if d == Postgres {
			text, id, suffix = `VARCHAR(64) COLLATE "C" NOT NULL`, "BIGINT NOT NULL", ")"
		}
		q.schema = []string{
			"CREATE TABLE IF NOT EXISTS " + table + ` (
  kind ` + text + `,
  entity_id ` + id + `,
  field ` + text + `,
  slot ` + id + ` DEFAULT 0,
  value ` + id + ` DEFAULT 0,
  PRIMARY KEY (kind, entity_id, field, slot)
` + suffix,
			"CREATE INDEX IF NOT EXISTS " + table + "_by_field ON " + table + " (kind, field, entity_id)",
			"CREATE TABLE IF NOT EXISTS " + q.batches + ` (
  batch_id ` + text + ` PRIMARY KEY,
  applied_at ` + id + `
)`,
			"CREATE INDEX IF NOT EXISTS " + q.batches + "_by_time ON " + q.batches + " (applied_at)",
			"CREATE TABLE IF NOT EXISTS " + q.stale + ` (
  kind ` + text + `,
  entity_id ` + id + `,
  seq ` + id + ` DEFAULT 1,
  PRIMARY KEY (kind, entity_id)
` + suffix,
			"CREATE TABLE IF NOT EXISTS " + q.seqs + ` (
  name ` + text + ` PRIMARY KEY,
  value ` + id + ` DEFAULT 0
)`,
			"CREATE TABLE IF NOT EXISTS " + q.marks + ` (
  user_id ` + id + `,
  name ` + text + `,
  value ` + id + `,
  seen_at ` + id + `,
  PRIMARY KEY (user_id, name)
` + suffix,
			"CREATE INDEX IF NOT EXISTS " + q.marks + "_by_seen ON " + q.marks + " (seen_at)",
		}
		// PostgreSQL resolves a bare column in DO UPDATE to the table, but
		// naming it is clearer and works in both.
		conflict := " ON CONFLICT (kind, entity_id, field, slot) DO UPDATE SET value = " + table + ".value + "
		q.incr = q.upsertHead + "(?, ?, ?, ?, ?)" + conflict + "?"
		q.upsertTail = conflict + "excluded.value"
		q.markApplied = "INSERT INTO " + q.batches + " (batch_id, applied_at) VALUES (?, ?) ON CONFLICT (batch_id) DO NOTHING"
		q.markStale = "INSERT INTO " + q.stale + " (kind, entity_id, seq) VALUES (?, ?, 1) ON CONFLICT (kind, entity_id) DO UPDATE SET seq = " + q.stale + ".seq + 1"
		q.seqInit = "INSERT INTO " + q.seqs + " (name, value) VALUES (?, 0) ON CONFLICT (name) DO NOTHING"
		q.markSet = "INSERT INTO " + q.marks + " (user_id, name, value, seen_at) VALUES (?, ?, ?, ?) ON CONFLICT (user_id, name) DO UPDATE SET value = excluded.value, seen_at = excluded.seen_at"
		if d == Postgres {
			q.lockSuffix = " FOR UPDATE"
		}
	}
	for _, p := range []*string{&q.incr, &q.reset, &q.top, &q.sums, &q.prune, &q.listStale, &q.dropStale,
		&q.markApplied, &q.markStale, &q.seqNext, &q.seqSet, &q.seqGet, &q.seqInit, &q.markGet, &q.markSet,
		&q.markPrune, &q.markDelete} {
		*p = q.bind(*p)
	}
	return q
}

// bind rewrites ? placeholders as $1, $2... for PostgreSQL. The queries
// hold no other question marks.
func (q *queries) bind(s string) string {
	if q.dialect != Postgres || !strings.Contains(s, "?") {
		return s
	}
	var b strings.Builder
	n := 0
	for _, r := range s {
		if r == '?' {
			n++
			b.WriteByte('$')
			b.WriteString(strconv.Itoa(n))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}

// load is the read of cold entities: every field's sum over its slots, and
// for each write-behind batch named, in the same statement (one snapshot),
// a row (0, batch id, 1) if it has been applied.
func (q *queries) load(n, batches int) string {
	var b strings.Builder
	b.WriteString("SELECT entity_id, field, " + q.sum + " FROM ")
	b.WriteString(q.table)
	b.WriteString(" WHERE kind = ? AND entity_id IN (")
	placeholders(&b, n)
	b.WriteString(") GROUP BY entity_id, field")
	if batches > 0 {
		b.WriteString(" UNION ALL SELECT 0, batch_id, 1 FROM ")
		b.WriteString(q.batches)
		b.WriteString(" WHERE batch_id IN (")
		placeholders(&b, batches)
		b.WriteString(")")
	}
	return q.bind(b.String())
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
	return q.bind(b.String())
}

// foldRows selects nonzero rows of slots above 0, locking them.
func (q *queries) foldRows() string {
	return q.bind("SELECT entity_id, slot, value FROM " + q.table +
		" WHERE kind = ? AND field = ? AND slot > 0 AND value <> 0 ORDER BY entity_id, slot LIMIT ?" + q.lockSuffix)
}

func (q *queries) subtract() string {
	return q.bind("UPDATE " + q.table + " SET value = value - ? WHERE kind = ? AND entity_id = ? AND field = ? AND slot = ?")
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
func (q *queries) execUpserts(ctx context.Context, tx sqlExecer, rows []row) error {
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
		if _, err := tx.ExecContext(ctx, q.bind(b.String()), args...); err != nil {
			return err
		}
		rows = rows[n:]
	}
	return nil
}

// sqlExecer is a *sql.DB or *sql.Tx.
type sqlExecer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// sqlQueryer is a *sql.DB or *sql.Tx.
type sqlQueryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// retryable reports errors after which the whole statement or transaction
// can simply run again: deadlocks, lock waits, serialization failures,
// SQLite's busy database. Drivers are recognised by what their errors
// offer, not by importing them, so a program links only the driver it
// uses.
func retryable(err error) bool {
	if n, ok := mysqlErrorNumber(err); ok {
		return n == 1213 || n == 1205 // deadlock, lock wait timeout
	}
	// pgx's *pgconn.PgError.
	var pg interface{ SQLState() string }
	if errors.As(err, &pg) {
		switch pg.SQLState() {
		case "40001", "40P01": // serialization failure, deadlock
			return true
		}
		return false
	}
	// modernc.org/sqlite errors carry the (extended) result code.
	var coded interface{ Code() int }
	if errors.As(err, &coded) {
		switch coded.Code() & 0xff {
		case 5, 6: // SQLITE_BUSY, SQLITE_LOCKED
			return true
		}
	}
	return false
}

// mysqlErrorNumber finds a *mysql.MySQLError of github.com/go-sql-driver/mysql
// in err's chain and returns its Number. The type offers no method to
// check by interface, so it is recognised by its name and field.
func mysqlErrorNumber(err error) (uint16, bool) {
	var found uint16
	ok := false
	var walk func(error)
	walk = func(e error) {
		for e != nil && !ok {
			v := reflect.ValueOf(e)
			if v.Kind() == reflect.Pointer && !v.IsNil() {
				el := v.Elem()
				t := el.Type()
				if t.Kind() == reflect.Struct && t.Name() == "MySQLError" && strings.HasSuffix(t.PkgPath(), "go-sql-driver/mysql") {
					if f := el.FieldByName("Number"); f.IsValid() && f.Kind() == reflect.Uint16 {
						found, ok = uint16(f.Uint()), true
						return
					}
				}
			}
			switch u := e.(type) {
			case interface{ Unwrap() []error }:
				for _, inner := range u.Unwrap() {
					walk(inner)
				}
				return
			case interface{ Unwrap() error }:
				e = u.Unwrap()
			default:
				return
			}
		}
	}
	walk(err)
	return found, ok
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

// ErrUnavailable is returned when the database did not answer within
// Config.StatementTimeout, or the connection to it failed. Nothing of the
// call is stored: apps answer it as 503 and the client may retry.
var ErrUnavailable = errors.New("entity: database unavailable")

// unavailable marks errors of a stalled or unreachable database.
type unavailable struct{ err error }

func (u unavailable) Error() string   { return "entity: database unavailable: " + u.err.Error() }
func (u unavailable) Unwrap() []error { return []error{ErrUnavailable, u.err} }

// stmt runs fn, retried on transient errors, under StatementTimeout. A
// stall past the deadline, a lock still held at it or a broken connection
// comes back as ErrUnavailable, unless the caller's own context ended.
func (c *Counters) stmt(ctx context.Context, fn func(ctx context.Context) error) error {
	sctx, cancel := context.WithTimeout(ctx, c.statementTimeout)
	defer cancel()
	err := retry(sctx, func() error { return fn(sctx) })
	if err == nil || ctx.Err() != nil {
		return err
	}
	if sctx.Err() != nil || retryable(err) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) {
		return unavailable{err}
	}
	return err
}

// inTx runs fn in a transaction under StatementTimeout, retried as a whole
// on deadlocks. The commit is not sent once the deadline has passed, so a
// transaction answered with an error is not committed later by a server
// that was only stalled; the window left is the commit's own round trip.
func (c *Counters) inTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return c.stmt(ctx, func(ctx context.Context) error {
		tx, err := c.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if err := fn(ctx, tx); err != nil {
			_ = tx.Rollback()
			return err
		}
		if err := ctx.Err(); err != nil {
			_ = tx.Rollback()
			return err
		}
		return tx.Commit()
	})
}

// queryRows runs a query under StatementTimeout, retried as a whole, and
// hands each row to scan; reset runs before every attempt, so a retry
// starts from nothing.
func (c *Counters) queryRows(ctx context.Context, db sqlQueryer, reset func(), scan func(*sql.Rows) error, query string, args ...any) error {
	return c.stmt(ctx, func(ctx context.Context) error {
		return scanRows(ctx, db, reset, scan, query, args...)
	})
}

// scanRows is one attempt of queryRows, also used inside transactions.
func scanRows(ctx context.Context, db sqlQueryer, reset func(), scan func(*sql.Rows) error, query string, args ...any) error {
	if reset != nil {
		reset()
	}
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// exec runs one statement under StatementTimeout, retried on transient
// errors.
func (c *Counters) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := c.stmt(ctx, func(ctx context.Context) error {
		var err error
		res, err = c.db.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}

// createSchema makes the tables, doing nothing to those that exist.
func (c *Counters) createSchema(ctx context.Context) error {
	for _, stmt := range c.q.schema {
		if _, err := c.exec(ctx, stmt); err != nil {
			return fmt.Errorf("entity: create tables: %w", err)
		}
	}
	return nil
}

// Bind rewrites a query written with ? placeholders for d: PostgreSQL
// numbers them ($1, $2...), the others keep ?. The query must hold no
// other question marks.
func (d Dialect) Bind(query string) string {
	q := queries{dialect: d}
	return q.bind(query)
}
