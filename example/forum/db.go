package forum

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
	_ "modernc.org/sqlite"             // registers the "sqlite" driver

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
	cfg := mysqlConfig(u)

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
	if err := connect(ctx, db, maxConns, 5*time.Minute, rawURL); err != nil {
		return nil, "", err
	}
	return db, entity.MySQL, nil
}

// mysqlConfig is the driver's configuration for the server u names, with
// no database chosen: utf8mb4, and timeouts for a connection that stops
// answering.
func mysqlConfig(u *url.URL) *mysql.Config {
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
	return cfg
}

// connect bounds db's pool to maxConns connections, idle ones closed after
// maxIdle (zero: kept), and checks that the server at rawURL answers; if
// it does not, db is closed. A bounded pool: while the server stalls,
// requests wait for a connection under their deadline instead of opening
// more.
func connect(ctx context.Context, db *sql.DB, maxConns int, maxIdle time.Duration, rawURL string) error {
	db.SetMaxOpenConns(maxConns)
	db.SetMaxIdleConns(maxConns)
	db.SetConnMaxLifetime(time.Hour)
	db.SetConnMaxIdleTime(maxIdle)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return fmt.Errorf("forum: connect %s: %w", redact(rawURL), err)
	}
	return nil
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
	if err := connect(ctx, db, maxConns, 0, rawURL); err != nil {
		return nil, "", err
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
