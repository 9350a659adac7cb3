package forum

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/entity"
)

// Entity kinds and fields the forum counts.
var Kinds = []entity.Kind{
	{Name: "user", Fields: []string{"following", "followers", "posts", "replies", "coins", "groups"}},
	// Views are the hottest count: every page view adds one.
	{Name: "post", Fields: []string{"views", "replies", "likes", "favorites"}, Hot: map[string]int{"views": 8}},
	{Name: "group", Fields: []string{"subscribers", "posts", "featured"}},
	{Name: "message", Fields: []string{"replies", "mentions", "likes", "followers", "direct"}},
}

// Config configures the forum.
type Config struct {
	// DatabaseURL is "sqlite:<path>" or "mysql://user:pass@host:3306/db";
	// empty means an SQLite file in the working directory.
	DatabaseURL string
	// Pool is the Redis that caches the counts; nil means SQL only.
	Pool   *redis.Pool
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
	db        *sql.DB
	dialect   entity.Dialect
	counters  *entity.Counters
	logger    *slog.Logger
	now       func() time.Time
	timeout   time.Duration
	adminAuth echo.MiddlewareFunc
	// repair is signalled when a stored row's count could not be
	// updated; RunReconciler then repairs the counts soon.
	repair chan struct{}
}

// Open connects to the database, creates the forum's tables and the
// counters.
func Open(ctx context.Context, cfg Config) (*App, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.QueryTimeout < 0 || cfg.MaxOpenConns < 0 {
		return nil, errors.New("forum: QueryTimeout and MaxOpenConns must not be negative")
	}
	if cfg.QueryTimeout == 0 {
		cfg.QueryTimeout = DefaultQueryTimeout
	}
	if cfg.MaxOpenConns == 0 {
		cfg.MaxOpenConns = DefaultMaxOpenConns
	}
	db, dialect, err := OpenDB(ctx, cfg)
	if err != nil {
		return nil, err
	}
	for _, stmt := range schema(dialect) {
		if _, err := db.ExecContext(ctx, stmt); err != nil {
			db.Close()
			return nil, fmt.Errorf("forum: create tables: %w", err)
		}
	}
	counters, err := entity.New(ctx, entity.Config{
		DB:          db,
		Dialect:     dialect,
		Pool:        cfg.Pool,
		Kinds:       Kinds,
		WriteBehind: cfg.WriteBehind,
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	if cfg.DatabaseURL == "" {
		cfg.Logger.Warn("DATABASE_URL is not set: keeping the forum in an SQLite file", "path", DefaultSQLitePath)
	}
	return &App{
		db: db, dialect: dialect, counters: counters, logger: cfg.Logger, now: time.Now,
		timeout: cfg.QueryTimeout, adminAuth: cfg.AdminAuth, repair: make(chan struct{}, 1),
	}, nil
}

// Counters are the forum's entity counters, for the dashboard.
func (a *App) Counters() *entity.Counters { return a.counters }

// DB is the forum's database.
func (a *App) DB() *sql.DB { return a.db }

// Close flushes the counters and closes the database.
func (a *App) Close(ctx context.Context) error {
	return errors.Join(a.counters.Close(ctx), a.db.Close())
}

var seedUsers = []string{"alice", "bob", "carol", "dave", "erin"}

var seedPosts = []struct {
	author int64
	title  string
}{
	{1, "Welcome to the Pulse forum"},
	{2, "How do you count page views without a hot row?"},
	{3, "Redis as a cache, SQL as the truth"},
	{1, "Show us your dashboard"},
}

// Seed creates a few users and posts in an empty forum, through the same
// code the API uses, so their counts are right.
func (a *App) Seed(ctx context.Context) error {
	qctx, cancel := a.bound(ctx)
	defer cancel()
	var n int
	if err := a.db.QueryRowContext(qctx, "SELECT COUNT(*) FROM forum_users").Scan(&n); err != nil {
		return fmt.Errorf("forum: seed: %w", err)
	}
	if n > 0 {
		return nil
	}
	for _, name := range seedUsers {
		if _, err := a.CreateUser(ctx, name); err != nil {
			return err
		}
	}
	for _, p := range seedPosts {
		if _, err := a.CreatePost(ctx, p.author, p.title); err != nil {
			return err
		}
	}
	return nil
}

// ErrNotFound is returned for a user or post that does not exist.
var ErrNotFound = errors.New("forum: not found")

// bound gives ctx the App's deadline unless it already has a nearer one.
func (a *App) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= a.timeout {
		return ctx, func() {}
	}
	return context.WithTimeout(ctx, a.timeout)
}

// insert runs one INSERT in a transaction of its own. When the answer is
// an error the row is not stored, now or later: a statement cut off by
// the deadline is rolled back with the connection, whereas a lone INSERT
// already sent to a stalled MySQL would still commit once it resumed.
func (a *App) insert(ctx context.Context, query string, args ...any) (sql.Result, error) {
	tx, err := a.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, err
	}
	res, err := tx.ExecContext(ctx, query, args...)
	if err != nil {
		_ = tx.Rollback()
		return nil, err
	}
	return res, tx.Commit()
}

// increment is one count a stored row implies.
type increment struct {
	kind  string
	id    int64
	field string
}

// count applies the counts of a row already committed. The row is the
// truth and the request has succeeded, so a count that fails (the database
// stalled in between) is not an error for the caller: it is logged and the
// reconciler is asked to recompute the counts from the tables.
func (a *App) count(ctx context.Context, incs ...increment) {
	var errs []error
	for _, in := range incs {
		if err := a.counters.Incr(ctx, in.kind, in.id, in.field, 1); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		a.logger.Warn("counts of a stored row not updated; reconciling soon", "err", err)
		select {
		case a.repair <- struct{}{}:
		default:
		}
	}
}

// CreateUser adds a user and returns its id.
func (a *App) CreateUser(ctx context.Context, name string) (int64, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	res, err := a.insert(ctx, "INSERT INTO forum_users (name) VALUES (?)", name)
	if err != nil {
		return 0, fmt.Errorf("forum: create user: %w", err)
	}
	return res.LastInsertId()
}

// CreatePost adds a post by author and counts it.
func (a *App) CreatePost(ctx context.Context, author int64, title string) (int64, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	if err := a.userExists(ctx, author); err != nil {
		return 0, err
	}
	res, err := a.insert(ctx, "INSERT INTO forum_posts (author_id, title, created_at) VALUES (?, ?, ?)",
		author, title, a.now().Unix())
	if err != nil {
		return 0, fmt.Errorf("forum: create post: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("forum: create post: %w", err)
	}
	a.count(ctx, increment{"user", author, "posts"})
	return id, nil
}

// Post is a post as pages and the API show it.
type Post struct {
	ID      int64         `json:"id"`
	Author  int64         `json:"author"`
	Name    string        `json:"author_name"`
	Title   string        `json:"title"`
	Created int64         `json:"created"`
	Counts  entity.Counts `json:"counts"`
	Replies []Reply       `json:"replies,omitempty"`
}

// Reply is a reply to a post.
type Reply struct {
	ID      int64  `json:"id"`
	User    int64  `json:"user"`
	Name    string `json:"user_name"`
	Text    string `json:"text"`
	Created int64  `json:"created"`
}

// ViewPost counts a view of a post and returns it with its counts and
// replies.
func (a *App) ViewPost(ctx context.Context, id int64) (Post, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	p := Post{ID: id}
	err := a.db.QueryRowContext(ctx, `SELECT p.author_id, u.name, p.title, p.created_at
		FROM forum_posts p JOIN forum_users u ON u.id = p.author_id WHERE p.id = ?`, id).
		Scan(&p.Author, &p.Name, &p.Title, &p.Created)
	if errors.Is(err, sql.ErrNoRows) {
		return p, ErrNotFound
	}
	if err != nil {
		return p, fmt.Errorf("forum: post %d: %w", id, err)
	}
	if err := a.counters.Incr(ctx, "post", id, "views", 1); err != nil {
		return p, err
	}
	if p.Counts, err = a.counters.Get(ctx, "post", id); err != nil {
		return p, err
	}
	rows, err := a.db.QueryContext(ctx, `SELECT r.id, r.user_id, u.name, r.body, r.created_at
		FROM forum_replies r JOIN forum_users u ON u.id = r.user_id WHERE r.post_id = ? ORDER BY r.id`, id)
	if err != nil {
		return p, fmt.Errorf("forum: replies of %d: %w", id, err)
	}
	defer rows.Close()
	for rows.Next() {
		var r Reply
		if err := rows.Scan(&r.ID, &r.User, &r.Name, &r.Text, &r.Created); err != nil {
			return p, fmt.Errorf("forum: replies of %d: %w", id, err)
		}
		p.Replies = append(p.Replies, r)
	}
	if err := rows.Err(); err != nil {
		return p, fmt.Errorf("forum: replies of %d: %w", id, err)
	}
	return p, nil
}

// Posts lists the newest posts with their counts, read in one batch.
func (a *App) Posts(ctx context.Context, limit int) ([]Post, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	rows, err := a.db.QueryContext(ctx, `SELECT p.id, p.author_id, u.name, p.title, p.created_at
		FROM forum_posts p JOIN forum_users u ON u.id = p.author_id ORDER BY p.id DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("forum: posts: %w", err)
	}
	var posts []Post
	var ids []int64
	for rows.Next() {
		var p Post
		if err := rows.Scan(&p.ID, &p.Author, &p.Name, &p.Title, &p.Created); err != nil {
			rows.Close()
			return nil, fmt.Errorf("forum: posts: %w", err)
		}
		posts = append(posts, p)
		ids = append(ids, p.ID)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("forum: posts: %w", err)
	}
	counts, err := a.counters.BatchGet(ctx, "post", ids)
	if err != nil {
		return nil, err
	}
	for i := range posts {
		posts[i].Counts = counts[i]
	}
	return posts, nil
}

// User is a user with their counts.
type User struct {
	ID     int64         `json:"id"`
	Name   string        `json:"name"`
	Counts entity.Counts `json:"counts"`
}

// GetUser returns a user with their counts.
func (a *App) GetUser(ctx context.Context, id int64) (User, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	u := User{ID: id}
	err := a.db.QueryRowContext(ctx, "SELECT name FROM forum_users WHERE id = ?", id).Scan(&u.Name)
	if errors.Is(err, sql.ErrNoRows) {
		return u, ErrNotFound
	}
	if err != nil {
		return u, fmt.Errorf("forum: user %d: %w", id, err)
	}
	u.Counts, err = a.counters.Get(ctx, "user", id)
	return u, err
}

func (a *App) userExists(ctx context.Context, id int64) error {
	return a.exists(ctx, "SELECT 1 FROM forum_users WHERE id = ?", id)
}

func (a *App) postAuthor(ctx context.Context, id int64) (int64, error) {
	var author int64
	err := a.db.QueryRowContext(ctx, "SELECT author_id FROM forum_posts WHERE id = ?", id).Scan(&author)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("forum: post %d: %w", id, err)
	}
	return author, nil
}

func (a *App) exists(ctx context.Context, query string, args ...any) error {
	var one int
	err := a.db.QueryRowContext(ctx, query, args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("forum: %w", err)
	}
	return nil
}

// Like records that user likes post; only the first like counts. It
// reports whether this call was that first like.
func (a *App) Like(ctx context.Context, post, user int64) (bool, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	if _, err := a.postAuthor(ctx, post); err != nil {
		return false, err
	}
	if err := a.userExists(ctx, user); err != nil {
		return false, err
	}
	res, err := a.insert(ctx, insertOnce(a.dialect, "forum_likes", "post_id", "user_id"), post, user)
	if err != nil {
		return false, fmt.Errorf("forum: like: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	a.count(ctx, increment{"post", post, "likes"})
	return true, nil
}

// Follow records that user follows target; only the first follow counts.
func (a *App) Follow(ctx context.Context, user, target int64) (bool, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	if err := a.userExists(ctx, user); err != nil {
		return false, err
	}
	if err := a.userExists(ctx, target); err != nil {
		return false, err
	}
	res, err := a.insert(ctx, insertOnce(a.dialect, "forum_follows", "user_id", "target_id"), user, target)
	if err != nil {
		return false, fmt.Errorf("forum: follow: %w", err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return false, nil
	}
	a.count(ctx,
		increment{"user", user, "following"},
		increment{"user", target, "followers"},
		increment{"message", target, "followers"},
	)
	return true, nil
}

// AddReply stores a reply and counts it for the post and the replier, and
// as an unread reply for the post's author (unless they replied themself).
func (a *App) AddReply(ctx context.Context, post, user int64, text string) (int64, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	author, err := a.postAuthor(ctx, post)
	if err != nil {
		return 0, err
	}
	if err := a.userExists(ctx, user); err != nil {
		return 0, err
	}
	res, err := a.insert(ctx, "INSERT INTO forum_replies (post_id, user_id, body, created_at) VALUES (?, ?, ?, ?)",
		post, user, text, a.now().Unix())
	if err != nil {
		return 0, fmt.Errorf("forum: reply: %w", err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, fmt.Errorf("forum: reply: %w", err)
	}
	incs := []increment{{"post", post, "replies"}, {"user", user, "replies"}}
	if author != user {
		incs = append(incs, increment{"message", author, "replies"})
	}
	a.count(ctx, incs...)
	return id, nil
}

// Unread returns a user's unread counts.
func (a *App) Unread(ctx context.Context, user int64) (entity.Counts, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	if err := a.userExists(ctx, user); err != nil {
		return nil, err
	}
	return a.counters.Get(ctx, "message", user)
}

// MarkRead clears a user's unread counts.
func (a *App) MarkRead(ctx context.Context, user int64) (entity.Counts, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	if err := a.userExists(ctx, user); err != nil {
		return nil, err
	}
	for _, f := range Kinds[3].Fields {
		if err := a.counters.Reset(ctx, "message", user, f); err != nil {
			return nil, err
		}
	}
	return a.counters.Get(ctx, "message", user)
}
