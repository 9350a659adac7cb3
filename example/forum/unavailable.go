package forum

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"net"

	"github.com/go-sql-driver/mysql"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/pulse-dev/pulse/entity"
)

// Unavailable reports whether err says the database could not answer in
// time or at all: a deadline, a lock another process holds, a lost or
// refused connection. Such errors are worth a retry and answer 503.
func Unavailable(err error) bool {
	if err == nil {
		return false
	}
	if errors.Is(err, entity.ErrUnavailable) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) ||
		errors.Is(err, driver.ErrBadConn) || errors.Is(err, sql.ErrConnDone) || errors.Is(err, mysql.ErrInvalidConn) {
		return true
	}
	var se *sqlite.Error
	if errors.As(err, &se) {
		switch se.Code() & 0xff {
		case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED, sqlite3.SQLITE_INTERRUPT:
			return true
		}
	}
	var me *mysql.MySQLError
	if errors.As(err, &me) {
		// Lock wait timeout, deadlock, query interrupted, too many connections.
		switch me.Number {
		case 1205, 1213, 1317, 1040, 3024:
			return true
		}
	}
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) && ne.Timeout() || errors.As(err, &oe)
}
