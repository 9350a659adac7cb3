package forum

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/entity"
)

// Entity kinds and fields the forum counts; each is moved by some action.
var Kinds = []entity.Kind{
	// following, followers: a follow; posts: a new post (and the feed's
	// source); replies: a reply written.
	{Name: "user", Fields: []string{"following", "followers", "posts", "replies"}},
	// Views are the hottest count, one per page view: buffered in the
	// process and written about once a second. replies and likes: a reply
	// or a first like.
	{Name: "post", Fields: []string{"views", "replies", "likes"}, Buffered: []string{"views"}},
	// A user's unread replies to their posts and new followers, cleared by
	// unread/read.
	{Name: "message", Fields: []string{"replies", "followers"}},
}

// feed is what a user's feed counts: their followees' posts.
var feed = entity.Feed{Kind: "user", Field: "posts"}

// DefaultStatementTimeout bounds each of the forum's SQL statements, as
// the counters' own.
const DefaultStatementTimeout = entity.DefaultStatementTimeout

// Config configures the forum.
type Config struct {
	// DatabaseURL is "sqlite:<path>" or "mysql://user:pass@host:3306/db";
	// empty means an SQLite file in the working directory.
	DatabaseURL string
	// Pool is the Redis that caches the counts (a *redis.Pool or a
	// *redisc.Cluster); nil means SQL only.
	Pool   entity.Pool
	Logger *slog.Logger
	// WriteBehind makes the counters write Redis first and SQL in batches.
	WriteBehind bool
	// QueryTimeout bounds the database work of one request, or of one
	// call of an App method, however many statements it takes; SQLite's
	// busy timeout is set to it. Default DefaultQueryTimeout.
	QueryTimeout time.Duration
	// MaxOpenConns caps the MySQL connection pool, so a stalled server
	// cannot pile up connections (SQLite always uses one). Default
	// DefaultMaxOpenConns.
	MaxOpenConns int
	// AdminAuth authenticates requests to /api/admin/*; nil turns those
	// routes off (403). See ProtectConfig.
	AdminAuth echo.MiddlewareFunc
	// StatementTimeout bounds each SQL statement of the entity counters
	// (default entity.DefaultStatementTimeout); the request's QueryTimeout
	// bounds them all together.
	StatementTimeout time.Duration
}

// Defaults of Config.
const (
	// DefaultQueryTimeout leaves room under 2 s for the rest of a
	// request, so one that meets a stalled database answers 503 within
	// 2 s in all.
	DefaultQueryTimeout = 1800 * time.Millisecond
	DefaultMaxOpenConns = 16
	// ReconcileTimeout bounds one Reconcile, which reads whole tables.
	ReconcileTimeout = 10 * time.Second
)

// App is the forum.
type App struct {
	store     store
	counters  *entity.Counters
	logger    *slog.Logger
	now       func() time.Time
	adminAuth echo.MiddlewareFunc
}

// Open connects to the database, creates the forum's tables and the
// counters.
func Open(ctx context.Context, cfg Config) (*App, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	db, dialect, err := OpenDB(ctx, cfg)
	if err != nil {
		return nil, err
	}
	counters, err := openCounters(ctx, db, dialect, cfg)
	if err != nil {
		db.Close()
		return nil, err
	}
	if cfg.DatabaseURL == "" {
		cfg.Logger.Warn("DATABASE_URL is not set: keeping the forum in an SQLite file", "path", DefaultSQLitePath)
	}
	return &App{
		store:    store{db: db, dialect: dialect, timeout: cfg.QueryTimeout},
		counters: counters, logger: cfg.Logger, now: time.Now, adminAuth: cfg.AdminAuth,
	}, nil
}

// withDefaults fills the zero fields of cfg that have a default.
func (cfg Config) withDefaults() (Config, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.QueryTimeout < 0 || cfg.MaxOpenConns < 0 {
		return cfg, errors.New("forum: QueryTimeout and MaxOpenConns must not be negative")
	}
	if cfg.QueryTimeout == 0 {
		cfg.QueryTimeout = DefaultQueryTimeout
	}
	if cfg.MaxOpenConns == 0 {
		cfg.MaxOpenConns = DefaultMaxOpenConns
	}
	return cfg, nil
}

// openCounters creates the forum's tables, if missing, and the entity
// counters on db, with their own tables.
func openCounters(ctx context.Context, db *sql.DB, dialect entity.Dialect, cfg Config) (*entity.Counters, error) {
	for _, stmt := range schema(dialect) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			return nil, fmt.Errorf("forum: create tables: %w", err)
		}
	}
	counters, err := entity.New(ctx, entity.Config{
		DB:               db,
		Dialect:          dialect,
		Pool:             cfg.Pool,
		Kinds:            Kinds,
		WriteBehind:      cfg.WriteBehind,
		StatementTimeout: cfg.StatementTimeout,
	})
	if err != nil {
		return nil, err
	}
	if err := counters.Migrate(ctx); err != nil {
		counters.Close(ctx)
		return nil, err
	}
	return counters, nil
}

// Counters are the forum's entity counters, for the dashboard.
func (a *App) Counters() *entity.Counters { return a.counters }

// DB is the forum's database.
func (a *App) DB() *sql.DB { return a.store.db }

// Close flushes the counters and closes the database.
func (a *App) Close(ctx context.Context) error {
	return errors.Join(a.counters.Close(ctx), a.store.db.Close())
}

// ErrNotFound is returned for a user or post that does not exist.
var ErrNotFound = errors.New("forum: not found")
