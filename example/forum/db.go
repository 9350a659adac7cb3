package forum

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"regexp"
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

// OpenDB opens the database named by a URL: "sqlite:<path>",
// "mysql://user:pass@host:3306/db" (MariaDB too) or
// "postgres://user:pass@host:5432/db". Empty means an SQLite file in the
// working directory. A MySQL or PostgreSQL database that does not exist
// yet is created (utf8mb4 on MySQL, UTF8 on PostgreSQL). Pools are
// bounded, so a stalled database cannot pile up connections.
func OpenDB(ctx context.Context, rawURL string) (*sql.DB, entity.Dialect, error) {
	switch {
	case rawURL == "":
		return openSQLite(ctx, DefaultSQLitePath)
	case strings.HasPrefix(rawURL, "sqlite:"):
		path := strings.TrimPrefix(strings.TrimPrefix(rawURL, "sqlite:"), "//")
		if path == "" {
			return nil, "", errors.New("forum: DATABASE_URL sqlite: names no file")
		}
		return openSQLite(ctx, path)
	case strings.HasPrefix(rawURL, "mysql://"):
		return openMySQL(ctx, rawURL)
	case strings.HasPrefix(rawURL, "postgres://"), strings.HasPrefix(rawURL, "postgresql://"):
		return openPostgres(ctx, rawURL)
	}
	return nil, "", fmt.Errorf("forum: DATABASE_URL must start with sqlite:, mysql:// or postgres://, got %q", redact(rawURL))
}

func openSQLite(ctx context.Context, path string) (*sql.DB, entity.Dialect, error) {
	// The busy timeout stays under the counters' statement timeout, so a
	// write lock held by another process ends in a 503, not a hang.
	dsn := "file:" + path + "?_pragma=busy_timeout(1000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
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

func openMySQL(ctx context.Context, rawURL string) (*sql.DB, entity.Dialect, error) {
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
	cfg.Timeout = 2 * time.Second
	cfg.ParseTime = true
	// Whatever the server's default, the connection speaks utf8mb4.
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
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(16)
	db.SetConnMaxLifetime(time.Hour)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, "", fmt.Errorf("forum: connect %s: %w", redact(rawURL), err)
	}
	return db, entity.MySQL, nil
}

func openPostgres(ctx context.Context, rawURL string) (*sql.DB, entity.Dialect, error) {
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
	db.SetMaxOpenConns(32)
	db.SetMaxIdleConns(16)
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
