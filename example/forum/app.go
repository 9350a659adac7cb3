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
	db        *sql.DB
	dialect   entity.Dialect
	counters  *entity.Counters
	logger    *slog.Logger
	now       func() time.Time
	timeout   time.Duration // the database work of one request
	adminAuth echo.MiddlewareFunc
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
		DB:               db,
		Dialect:          dialect,
		Pool:             cfg.Pool,
		Kinds:            Kinds,
		WriteBehind:      cfg.WriteBehind,
		StatementTimeout: cfg.StatementTimeout,
	})
	if err != nil {
		db.Close()
		return nil, err
	}
	if err := counters.Migrate(ctx); err != nil {
		counters.Close(ctx)
		db.Close()
		return nil, err
	}
	if cfg.DatabaseURL == "" {
		cfg.Logger.Warn("DATABASE_URL is not set: keeping the forum in an SQLite file", "path", DefaultSQLitePath)
	}
	return &App{
		db: db, dialect: dialect, counters: counters, logger: cfg.Logger, now: time.Now,
		timeout: cfg.QueryTimeout, adminAuth: cfg.AdminAuth,
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

// deadline bounds the forum's own SQL, as the counters bound theirs.
func (a *App) deadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, a.timeout)
}

// bind adapts a query written with ? placeholders to the dialect.
func (a *App) bind(query string) string { return a.dialect.Bind(query) }

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

// CreateUser adds a user and returns its id. A new user has read
// everything there is so far.
func (a *App) CreateUser(ctx context.Context, name string) (int64, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	var id int64
	err := a.counters.InTx(ctx, func(ctx context.Context, tx *entity.Tx) error {
		var err error
		id, err = insertID(ctx, tx.Tx, a.dialect, "INSERT INTO forum_users (name) VALUES (?)", name)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("forum: create user: %w", err)
	}
	if err := a.counters.MarkRead(ctx, id, feed, nil); err != nil {
		return 0, fmt.Errorf("forum: create user: %w", err)
	}
	return id, nil
}

// CreatePost adds a post by author and counts it, in one transaction; it
// also lights every user's red dot, with one global write.
func (a *App) CreatePost(ctx context.Context, author int64, title string) (int64, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	if err := a.userExists(ctx, author); err != nil {
		return 0, err
	}
	var id int64
	err := a.counters.InTx(ctx, func(ctx context.Context, tx *entity.Tx) error {
		var err error
		id, err = insertID(ctx, tx.Tx, a.dialect, "INSERT INTO forum_posts (author_id, title, created_at) VALUES (?, ?, ?)",
			author, title, a.now().Unix())
		if err != nil {
			return err
		}
		if err := tx.Incr("user", author, "posts", 1); err != nil {
			return err
		}
		return tx.Touch()
	})
	if err != nil {
		return 0, fmt.Errorf("forum: create post: %w", err)
	}
	return id, nil
}

// PublishNotice stores a system notice for every user: one row and one
// counter write, whatever the number of users.
func (a *App) PublishNotice(ctx context.Context, text string) (int64, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	var id int64
	err := a.counters.InTx(ctx, func(ctx context.Context, tx *entity.Tx) error {
		var err error
		if id, err = tx.PublishNotice(); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, a.bind("INSERT INTO forum_notices (id, body, created_at) VALUES (?, ?, ?)"), id, text, a.now().Unix())
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("forum: publish notice: %w", err)
	}
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
// replies. The view is buffered: no SQL or Redis write on this request,
// yet the counts returned include it.
func (a *App) ViewPost(ctx context.Context, id int64) (Post, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	p := Post{ID: id}
	qctx, cancel := a.deadline(ctx)
	defer cancel()
	err := a.db.QueryRowContext(qctx, a.bind(`SELECT p.author_id, u.name, p.title, p.created_at
		FROM forum_posts p JOIN forum_users u ON u.id = p.author_id WHERE p.id = ?`), id).
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
	rows, err := a.db.QueryContext(qctx, a.bind(`SELECT r.id, r.user_id, u.name, r.body, r.created_at
		FROM forum_replies r JOIN forum_users u ON u.id = r.user_id WHERE r.post_id = ? ORDER BY r.id`), id)
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
	return a.postsWhere(ctx, "", nil, limit)
}

// postsWhere lists the newest posts matching where (a condition on p with
// ? placeholders), with their counts read in one batch.
func (a *App) postsWhere(ctx context.Context, where string, args []any, limit int) ([]Post, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	qctx, cancel := a.deadline(ctx)
	defer cancel()
	query := `SELECT p.id, p.author_id, u.name, p.title, p.created_at
		FROM forum_posts p JOIN forum_users u ON u.id = p.author_id`
	if where != "" {
		query += " WHERE " + where
	}
	query += " ORDER BY p.id DESC LIMIT ?"
	rows, err := a.db.QueryContext(qctx, a.bind(query), append(args, limit)...)
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
	qctx, cancel := a.deadline(ctx)
	defer cancel()
	err := a.db.QueryRowContext(qctx, a.bind("SELECT name FROM forum_users WHERE id = ?"), id).Scan(&u.Name)
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
	qctx, cancel := a.deadline(ctx)
	defer cancel()
	var author int64
	err := a.db.QueryRowContext(qctx, a.bind("SELECT author_id FROM forum_posts WHERE id = ?"), id).Scan(&author)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	if err != nil {
		return 0, fmt.Errorf("forum: post %d: %w", id, err)
	}
	return author, nil
}

func (a *App) exists(ctx context.Context, query string, args ...any) error {
	qctx, cancel := a.deadline(ctx)
	defer cancel()
	var one int
	err := a.db.QueryRowContext(qctx, a.bind(query), args...).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("forum: %w", err)
	}
	return nil
}

// Like records that user likes post; only the first like counts, and it
// commits with its count or not at all. It reports whether this call was
// that first like.
func (a *App) Like(ctx context.Context, post, user int64) (bool, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	if _, err := a.postAuthor(ctx, post); err != nil {
		return false, err
	}
	if err := a.userExists(ctx, user); err != nil {
		return false, err
	}
	var first bool
	err := a.counters.InTx(ctx, func(ctx context.Context, tx *entity.Tx) error {
		res, err := tx.ExecContext(ctx, insertOnce(a.dialect, "forum_likes", "post_id", "user_id"), post, user)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		if first = n > 0; !first {
			return nil
		}
		return tx.Incr("post", post, "likes", 1)
	})
	if err != nil {
		return false, fmt.Errorf("forum: like: %w", err)
	}
	return first, nil
}

// Follow records that user follows target; only the first follow counts.
// Target's earlier posts are not news in user's feed.
func (a *App) Follow(ctx context.Context, user, target int64) (bool, error) {
	ctx, cancel := a.bound(ctx)
	defer cancel()
	if err := a.userExists(ctx, user); err != nil {
		return false, err
	}
	if err := a.userExists(ctx, target); err != nil {
		return false, err
	}
	var first bool
	err := a.counters.InTx(ctx, func(ctx context.Context, tx *entity.Tx) error {
		res, err := tx.ExecContext(ctx, insertOnce(a.dialect, "forum_follows", "user_id", "target_id"), user, target)
		if err != nil {
			return err
		}
		n, _ := res.RowsAffected()
		if first = n > 0; !first {
			return nil
		}
		return errors.Join(
			tx.Incr("user", user, "following", 1),
			tx.Incr("user", target, "followers", 1),
			tx.Incr("message", target, "followers", 1),
			tx.Followed(user, target, feed),
		)
	})
	if err != nil {
		return false, fmt.Errorf("forum: follow: %w", err)
	}
	return first, nil
}

// AddReply stores a reply and counts it for the post and the replier, and
// as an unread reply for the post's author (unless they replied themself),
// all in one transaction.
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
	var id int64
	err = a.counters.InTx(ctx, func(ctx context.Context, tx *entity.Tx) error {
		var err error
		id, err = insertID(ctx, tx.Tx, a.dialect, "INSERT INTO forum_replies (post_id, user_id, body, created_at) VALUES (?, ?, ?, ?)",
			post, user, text, a.now().Unix())
		if err != nil {
			return err
		}
		errs := []error{
			tx.Incr("post", post, "replies", 1),
			tx.Incr("user", user, "replies", 1),
		}
		if author != user {
			errs = append(errs, tx.Incr("message", author, "replies", 1))
		}
		return errors.Join(errs...)
	})
	if err != nil {
		return 0, fmt.Errorf("forum: reply: %w", err)
	}
	return id, nil
}
