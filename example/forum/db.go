package forum

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/go-sql-driver/mysql"
	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/pulse-dev/pulse/entity"
)

// DefaultSQLitePath is where the forum keeps its data when no database is
// configured.
const DefaultSQLitePath = "pulse-forum.db"

// OpenDB opens the database named by a URL: "sqlite:<path>" or
// "mysql://user:pass@host:3306/db" (MariaDB too). Empty means an SQLite
// file in the working directory. A MySQL database that does not exist yet
// is created.
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
	}
	return nil, "", fmt.Errorf("forum: DATABASE_URL must start with sqlite: or mysql://, got %q", redact(rawURL))
}

func openSQLite(ctx context.Context, path string) (*sql.DB, entity.Dialect, error) {
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
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
	cfg.Timeout = 5 * time.Second
	cfg.ParseTime = true

	// Create the database if it is missing, on a connection to none.
	admin, err := sql.Open("mysql", cfg.FormatDSN())
	if err != nil {
		return nil, "", fmt.Errorf("forum: open mysql: %w", err)
	}
	_, err = admin.ExecContext(ctx, "CREATE DATABASE IF NOT EXISTS `"+name+"`")
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

// redact hides a password in a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Redacted()
}

// schema creates the forum's tables; it is safe to run on every start.
func schema(d entity.Dialect) []string {
	id := "INTEGER PRIMARY KEY AUTOINCREMENT"
	text := "TEXT"
	if d == entity.MySQL {
		id = "BIGINT NOT NULL AUTO_INCREMENT PRIMARY KEY"
		text = "VARCHAR(2000)"
	}
	return []string{
		`CREATE TABLE IF NOT EXISTS forum_users (id ` + id + `, name VARCHAR(64) NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS forum_posts (id ` + id + `, author_id BIGINT NOT NULL,
			title VARCHAR(200) NOT NULL, created_at BIGINT NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS forum_likes (post_id BIGINT NOT NULL, user_id BIGINT NOT NULL,
			PRIMARY KEY (post_id, user_id))`,
		`CREATE TABLE IF NOT EXISTS forum_follows (user_id BIGINT NOT NULL, target_id BIGINT NOT NULL,
			PRIMARY KEY (user_id, target_id))`,
		`CREATE TABLE IF NOT EXISTS forum_replies (id ` + id + `, post_id BIGINT NOT NULL, user_id BIGINT NOT NULL,
			body ` + text + ` NOT NULL, created_at BIGINT NOT NULL)`,
	}
}

// insertOnce is the statement that inserts a pair unless it is there.
func insertOnce(d entity.Dialect, table, a, b string) string {
	verb := "INSERT OR IGNORE"
	if d == entity.MySQL {
		verb = "INSERT IGNORE"
	}
	return verb + " INTO " + table + " (" + a + ", " + b + ") VALUES (?, ?)"
}
