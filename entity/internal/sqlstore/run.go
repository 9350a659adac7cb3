package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"math/rand/v2"
	"reflect"
	"strings"
	"time"
)

// ErrUnavailable is returned when the database did not answer within the
// statement timeout, or the connection to it failed. The entity package
// exports it under the same name.
var ErrUnavailable = errors.New("entity: database unavailable")

// unavailable marks errors of a stalled or unreachable database.
type unavailable struct{ err error }

func (u unavailable) Error() string   { return "entity: database unavailable: " + u.err.Error() }
func (u unavailable) Unwrap() []error { return []error{ErrUnavailable, u.err} }

// Execer is a *sql.DB or *sql.Tx.
type Execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// Querier is a *sql.DB or *sql.Tx.
type Querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
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
			if n, is := mysqlNumber(e); is {
				found, ok = n, true
				return
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

// mysqlNumber is the Number of e itself if it is a *mysql.MySQLError.
func mysqlNumber(e error) (uint16, bool) {
	v := reflect.ValueOf(e)
	if v.Kind() != reflect.Pointer || v.IsNil() {
		return 0, false
	}
	el := v.Elem()
	t := el.Type()
	if t.Kind() != reflect.Struct || t.Name() != "MySQLError" || !strings.HasSuffix(t.PkgPath(), "go-sql-driver/mysql") {
		return 0, false
	}
	if f := el.FieldByName("Number"); f.IsValid() && f.Kind() == reflect.Uint16 {
		return uint16(f.Uint()), true
	}
	return 0, false
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

// stmt runs fn, retried on transient errors, under the statement timeout.
// A stall past the deadline, a lock still held at it or a broken
// connection comes back as ErrUnavailable, unless the caller's own context
// ended.
func (s *Store) stmt(ctx context.Context, fn func(ctx context.Context) error) error {
	sctx, cancel := context.WithTimeout(ctx, s.timeout)
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

// InTx runs fn in a transaction under the statement timeout, retried as a
// whole on deadlocks. The commit is not sent once the deadline has passed,
// so a transaction answered with an error is not committed later by a
// server that was only stalled; the window left is the commit's own round
// trip.
func (s *Store) InTx(ctx context.Context, fn func(ctx context.Context, tx *sql.Tx) error) error {
	return s.stmt(ctx, func(ctx context.Context) error {
		tx, err := s.db.BeginTx(ctx, nil)
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

// query runs a query under the statement timeout, retried as a whole, and
// hands each row to scan; reset runs before every attempt, so a retry
// starts from nothing.
func (s *Store) query(ctx context.Context, reset func(), scan func(*sql.Rows) error, query string, args ...any) error {
	return s.stmt(ctx, func(ctx context.Context) error {
		return scanRows(ctx, s.db, reset, scan, query, args...)
	})
}

// scanRows is one attempt of query, also used inside transactions.
func scanRows(ctx context.Context, db Querier, reset func(), scan func(*sql.Rows) error, query string, args ...any) error {
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

// exec runs one statement under the statement timeout, retried on
// transient errors.
func (s *Store) exec(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := s.stmt(ctx, func(ctx context.Context) error {
		var err error
		res, err = s.db.ExecContext(ctx, query, args...)
		return err
	})
	return res, err
}
