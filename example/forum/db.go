package forum

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	"modernc.org/sqlite"               // registers the "sqlite" driver
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/pulse-dev/pulse/entity"
)

// DefaultSQLitePath is where the forum keeps its data when no database is
// configured.
const DefaultSQLitePath = "pulse-forum.db"

// OpenDB opens the database cfg.DatabaseURL names: "sqlite:<path>",
// "mysql://user:pass@host:3306/db" (MariaDB too) or
// "postgres://user:pass@host:5432/db". Empty means an SQLite file in the
// working directory. A MySQL or PostgreSQL database that does not exist
// yet is created (utf8mb4 on MySQL, UTF8 on PostgreSQL). cfg.QueryTimeout
// and cfg.MaxOpenConns bound the handle (zero means the defaults), so a
// stalled database cannot pile up connections.
func OpenDB(ctx context.Context, cfg Config) (*sql.DB, entity.Dialect, error) {
	if cfg.QueryTimeout <= 0 {
		cfg.QueryTimeout = DefaultQueryTimeout
	}
	if cfg.MaxOpenConns <= 0 {
		cfg.MaxOpenConns = DefaultMaxOpenConns
	}
	rawURL := cfg.DatabaseURL
	switch {
	case rawURL == "":
		return openSQLite(ctx, DefaultSQLitePath, cfg.QueryTimeout)
	case strings.HasPrefix(rawURL, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(rawURL, "sqlite:"), "//")
		if path == "" {
			return nil, "", errors.New("forum: DATABASE_URL sqlite: names no file")
		}
		return openSQLite(ctx, path, cfg.QueryTimeout)
	case strings.HasPrefix(rawURL, "mysql://"):
		return openMySQL(ctx, rawURL, cfg.MaxOpenConns)
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		return openPostgres(ctx, rawURL, cfg.MaxOpenConns)
	}
	return nil, "", fmt.Errorf("forum: DATABASE_URL must start with sqlite:, mysql:// or postgres://, got %q", redact(rawURL))
}

func openSQLite(ctx context.Context, path string, timeout time.Duration) (*sql.DB, entity.Dialect, error) {
	// A lock held by another process makes a writer wait at most the
	// query deadline; the deadline also interrupts it.
	busy := strconv.FormatInt(timeout.Milliseconds(), 10)
	dsn := "file:" + path + "?_pragma=busy_timeout(" + busy + ")&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, "", fmt.Errorf("forum: open sqlite: %w", err)
	}
	// SQLite takes one writer at a time; one connection turns lock errors
	// under concurrent requests into a short queue.
	db.SetMaxOpenConns(1)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, "", fmt.Errorf("forum: open sqlite %s: %w", path, err)
	}
	return db, entity.SQLite, nil
}

func openMySQL(ctx context.Context, rawURL string, maxConns int) (*sql.DB, entity.Dialect, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, "", fmt.Errorf("forum: DATABASE_URL: %w", err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" || strings.ContainsAny(name, "`/") {
		return nil, "", fmt.Errorf("forum: DATABASE_URL %s: name a database, e.g. mysql://root@127.0.0.1:3306/pulse", redact(rawURL))
	}
	cfg := mysql.NewConfig()
	cfg.Net = "tcp"
	cfg.Addr = u.Host
	if u.Port() == "" {
		cfg.Addr = u.Host + ":3306"
	}
	cfg.User = u.User.Username()
	cfg.Passwd, _ = u.User.Password()
	cfg.Timeout = 5 * time.Second
	// Statements are bounded by their context; these only catch a
	// connection that stops answering outside of one.
	cfg.ReadTimeout = 30 * time.Second
	cfg.WriteTimeout = 30 * time.Second
	cfg.ParseTime = true
	cfg.Params = map[string]string{"charset": "utf8mb4"}
	cfg.Collation = "utf8mb4_unicode_ci"

	// Create the database if it is missing, on a connection to none.
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, "", fmt.Errorf("forum: open mysql: %w", err)
	}
	_, err = admin.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+name+"` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
	admin.Close()
	if err != nil {
		return nil, "", fmt.Errorf("forum: create database %s: %w", name, err)
	}
	cfg.DBName = name
	db, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, "", fmt.Errorf("forum: open mysql: %w", err)
	}
	// A bounded pool: while the server stalls, requests wait for a
	// connection under their deadline instead of opening more.
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxLifetime(time.Hour)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, "", fmt.Errorf("forum: connect %s: %w", redact(rawURL), err)
	}
	return db, entity.MySQL, nil
}

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

func openPostgres(ctx context.Context, rawURL string, maxConns int) (*sql.DB, entity.Dialect, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, "", fmt.Errorf("forum: DATABASE_URL: %w", err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	if name == "" || !pgName.MatchString(name) {
		return nil, "", fmt.Errorf("forum: DATABASE_URL %s: name a database of letters, digits and _, e.g. postgres://postgres@127.0.0.1:5432/pulse", redact(rawURL))
	}
	// Create the database if it is missing, from the postgres database.
	adminURL := *u
	adminURL.Path = "/postgres"
	admin, err := sql.Open("pgx", adminURL.String())
	if err != nil {
		return nil, "", fmt.Errorf("forum: open postgres: %w", err)
	}
	var exists bool
	err = admin.QueryRowContext(ctx, "SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)", name).Scan(&exists)
	if err == nil && !exists {
		_, err = admin.ExecContext(ctx, "CREATE DATABASE "+name+" ENCODING 'UTF8' TEMPLATE template0")
	}
	admin.Close()
	if err != nil {
		return nil, "", fmt.Errorf("forum: create database %s: %w", name, err)
	}
	db, err := sql.Open("pgx", rawURL)
	if err != nil {
		return nil, "", fmt.Errorf("forum: open postgres: %w", err)
	}
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxLifetime(time.Hour)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, "", fmt.Errorf("forum: connect %s: %w", redact(rawURL), err)
	}
	return db, entity.Postgres, nil
}

var pgName = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// redact hides a password in a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// schema creates the forum's tables; it is safe to run on every start.
// On MySQL every table is utf8mb4, whatever the server's default.
func schema(d entity.Dialect) []string {
	id := "INTEGER PRIMARY KEY AUTOINCREMENT"
	text, tail := "TEXT", ""
	switch d {
	case entity.MySQL:
		id = "BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY"
		text = "VARCHAR(2000)"
		tail = " DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_ci"
	case entity.Postgres:
		id = "BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY"
	}
	return []string{
		`CREATE TABLE IF NOT EXISTS forum_users (id ` + id + `, name VARCHAR(64) NOT NULL)` + tail,
		`CREATE TABLE IF NOT EXISTS forum_posts (id ` + id + `, author_id BIGINT NOT NULL,
			title VARCHAR(200) NOT NULL, created_at BIGINT NOT NULL)` + tail,
		`CREATE TABLE IF NOT EXISTS forum_likes (post_id BIGINT NOT NULL, user_id BIGINT NOT NULL,
			PRIMARY KEY (post_id, user_id))` + tail,
		`CREATE TABLE IF NOT EXISTS forum_follows (user_id BIGINT NOT NULL, target_id BIGINT NOT NULL,
			PRIMARY KEY (user_id, target_id))` + tail,
		`CREATE TABLE IF NOT EXISTS forum_replies (id ` + id + `, post_id BIGINT NOT NULL, user_id BIGINT NOT NULL,
			body ` + text + ` NOT NULL, created_at BIGINT NOT NULL)` + tail,
		// Notice ids come from the counters' notice sequence.
		`CREATE TABLE IF NOT EXISTS forum_notices (id BIGINT NOT NULL PRIMARY KEY, body ` + text + ` NOT NULL,
			created_at BIGINT NOT NULL)` + tail,
	}
}

// insertOnce is the statement that inserts a pair unless it is there.
func insertOnce(d entity.Dialect, table, a, b string) string {
	switch d {
	case entity.MySQL:
		return "INSERT IGNORE INTO " + table + " (" + a + ", " + b + ") VALUES (?, ?)"
	case entity.Postgres:
		return "INSERT INTO " + table + " (" + a + ", " + b + ") VALUES ($1, $2) ON CONFLICT DO NOTHING"
	}
	return "INSERT OR IGNORE INTO " + table + " (" + a + ", " + b + ") VALUES (?, ?)"
}

// insertID inserts a row and returns its id: PostgreSQL's driver has no
// LastInsertId, so there the statement returns it.
func insertID(ctx context.Context, tx *sql.Tx, d entity.Dialect, query string, args ...any) (int64, error) {
	if d == entity.Postgres {
		var id int64
		err := tx.QueryRowContext(ctx, d.Bind(query)+" RETURNING id", args...).Scan(&id)
		return id, err
	}
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}
