package forum_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/example/forum"
	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/mariadbtest"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

type unreadReply struct {
	User   int64            `json:"user"`
	Unread map[string]int64 `json:"unread"`
	Dot    bool             `json:"dot"`
}

func (f *forumServer) unreadOf(user int64) unreadReply {
	f.t.Helper()
	var out unreadReply
	f.mustCall(http.MethodGet, fmt.Sprintf("/api/users/%d/unread", user), "", http.StatusOK, &out)
	return out
}

func TestUnreadNoticesFeedDot(t *testing.T) {
	for _, kind := range databases {
		t.Run(kind, func(t *testing.T) {
			f := startForum(t, kind)
			check := func(user int64, notices, feed int64, dot bool) {
				t.Helper()
				got := f.unreadOf(user)
				if got.User != user || got.Unread["notices"] != notices || got.Unread["feed"] != feed || got.Dot != dot {
					t.Errorf("user %d unread = %+v, want notices %d feed %d dot %v", user, got, notices, feed, dot)
				}
			}
			// The seed's posts came after the users: the dot is lit.
			check(1, 0, 0, true)
			f.mustCall(http.MethodPost, "/api/users/1/unread/read", "", http.StatusOK, nil)
			check(1, 0, 0, false)

			var notice struct{ ID int64 }
			f.header.Set("Authorization", basicLogin(adminUser, adminPass)) // an admin route
			f.mustCall(http.MethodPost, "/api/admin/notices", `{"text":"Maintenance tonight 🛠"}`, http.StatusCreated, &notice)
			if notice.ID != 1 {
				t.Errorf("notice id = %d, want 1", notice.ID)
			}
			check(1, 1, 0, false)
			check(2, 1, 0, true)

			// 1 follows 2: 2's earlier post is not news.
			f.mustCall(http.MethodPost, "/api/users/1/follow/2", "", http.StatusOK, nil)
			check(1, 1, 0, false)
			f.mustCall(http.MethodPost, "/api/posts", `{"author":2,"title":"New from bob"}`, http.StatusCreated, nil)
			check(1, 1, 1, true)
			check(3, 1, 0, true) // follows nobody

			f.mustCall(http.MethodPost, "/api/users/1/unread/read", "", http.StatusOK, nil)
			check(1, 0, 0, false)
			check(2, 1, 0, true) // only user 1 was cleared

			f.mustCall(http.MethodPost, "/api/posts", `{"author":2,"title":"And again"}`, http.StatusCreated, nil)
			check(1, 0, 1, true)
			var feed struct {
				Posts []struct {
					Title  string `json:"title"`
					Author int64  `json:"author"`
				} `json:"posts"`
			}
			f.mustCall(http.MethodGet, "/api/users/1/feed", "", http.StatusOK, &feed)
			if len(feed.Posts) != 3 || feed.Posts[0].Title != "And again" {
				t.Errorf("feed = %+v, want bob's 3 posts, newest first", feed.Posts)
			}
			for _, p := range feed.Posts {
				if p.Author != 2 {
					t.Errorf("feed holds a post by %d", p.Author)
				}
			}
			check(1, 0, 0, true) // the feed is read; the dot waits for unread/read

			for _, bad := range []struct {
				method, path, body string
				want               int
			}{
				{http.MethodPost, "/api/admin/notices", `{"text":""}`, http.StatusBadRequest},
				{http.MethodPost, "/api/admin/notices", `{"body":"x"}`, http.StatusBadRequest},
				{http.MethodPost, "/api/admin/notices", `[`, http.StatusBadRequest},
				{http.MethodGet, "/api/users/99/unread", "", http.StatusNotFound},
				{http.MethodGet, "/api/users/x/feed", "", http.StatusBadRequest},
				{http.MethodPost, "/api/users/99/unread/read", "", http.StatusNotFound},
			} {
				var e struct{ Error string }
				if got := f.call(bad.method, bad.path, bad.body, &e); got != bad.want || e.Error == "" {
					t.Errorf("%s %s %s = %d %q, want %d with an error", bad.method, bad.path, bad.body, got, e.Error, bad.want)
				}
			}
		})
	}
}

// mysqlURL spells a MariaDB test database as DATABASE_URL does.
func mysqlURL(t *testing.T, dsn string) string {
	t.Helper()
	cfg, err := mysql.ParseDSN(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "mysql", User: url.UserPassword(cfg.User, cfg.Passwd), Host: cfg.Addr, Path: "/" + cfg.DBName}
	return u.String()
}

// serve mounts app on a test server.
func serve(t *testing.T, app *forum.App) *forumServer {
	e := echo.New()
	e.HTTPErrorHandler = forum.ErrorHandler
	app.Register(e, nil)
	hs := httptest.NewServer(e)
	t.Cleanup(hs.Close)
	return &forumServer{t: t, app: app, base: hs.URL}
}

// openForum opens the forum on dbURL with its database deadlines at
// timeout, 0 for the defaults.
func openForum(t *testing.T, dbURL string, srv *redistest.Server, timeout time.Duration) *forum.App {
	t.Helper()
	app, err := forum.Open(context.Background(), forum.Config{
		DatabaseURL:      dbURL,
		Pool:             srv.Pool(),
		Logger:           slog.New(slog.NewTextHandler(io.Discard, nil)),
		QueryTimeout:     timeout,
		StatementTimeout: timeout,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := app.Seed(context.Background()); err != nil {
		t.Fatal(err)
	}
	return app
}

// sqlWrites is MariaDB's count of INSERT and UPDATE statements run.
func sqlWrites(t *testing.T, db *sql.DB) int64 {
	t.Helper()
	var total int64
	rows, err := db.Query("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_insert', 'Com_update')")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			t.Fatal(err)
		}
		total += v
	}
	return total
}

func TestHotViewsOnMariaDB(t *testing.T) {
	const views, clients = 3000, 32
	d, _, err := mariadbtest.StartPrivate(t, mariadbtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	app := openForum(t, mysqlURL(t, d.DSN), redistest.Start(t), harness.Hang) // counts writes, not time: a loaded machine may slow a view, never fail it
	f := serve(t, app)
	before := sqlWrites(t, d.DB)
	var wg sync.WaitGroup
	work := make(chan struct{})
	for c := 0; c < clients; c++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work {
				resp, err := http.Get(f.base + "/api/posts/1")
				if err != nil {
					t.Error(err)
					return
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					t.Errorf("view: %d", resp.StatusCode)
				}
			}
		}()
	}
	for i := 0; i < views; i++ {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := app.Close(ctx); err != nil {
		t.Fatal(err)
	}
	writes := sqlWrites(t, d.DB) - before
	t.Logf("%d concurrent views: %d SQL writes (INSERT/UPDATE statements), ratio %.1f", views, writes, float64(views)/float64(max(writes, 1)))
	if writes*10 > views {
		t.Errorf("%d views cost %d SQL writes, want at most %d", views, writes, views/10)
	}
	var got int64
	if err := d.DB.QueryRow("SELECT SUM(value) FROM pulse_counters WHERE kind = 'post' AND entity_id = 1 AND field = 'views'").Scan(&got); err != nil {
		t.Fatal(err)
	}
	if got != views {
		t.Errorf("views in SQL after a clean stop = %d, want %d", got, views)
	}
}

func TestLatin1MariaDBKeepsText(t *testing.T) {
	d, _, err := mariadbtest.StartPrivate(t, mariadbtest.Options{ServerArgs: []string{"--character-set-server=latin1", "--collation-server=latin1_swedish_ci"}})
	if err != nil {
		t.Fatal(err)
	}
	app := openForum(t, mysqlURL(t, d.DSN), redistest.Start(t), harness.Hang)
	t.Cleanup(func() { app.Close(context.Background()) })
	f := serve(t, app)
	texts := []string{"数える", "カウンター 🙂", "Ελληνικά", "한국어 👍🏽", "emoji 🧮🔥", "混合 mixed Ω"}
	for _, s := range texts {
		var user, post struct{ ID int64 }
		f.mustCall(http.MethodPost, "/api/users", fmt.Sprintf(`{"name":%q}`, s), http.StatusCreated, &user)
		f.mustCall(http.MethodPost, "/api/posts", fmt.Sprintf(`{"author":%d,"title":%q}`, user.ID, s), http.StatusCreated, &post)
		f.mustCall(http.MethodPost, fmt.Sprintf("/api/posts/%d/replies", post.ID), fmt.Sprintf(`{"user":%d,"text":%q}`, user.ID, s), http.StatusCreated, nil)
		var got forum.Post
		f.mustCall(http.MethodGet, fmt.Sprintf("/api/posts/%d", post.ID), "", http.StatusOK, &got)
		if got.Title != s || got.Name != s || len(got.Replies) != 1 || got.Replies[0].Text != s {
			t.Errorf("%q came back as title %q, author %q, replies %+v", s, got.Title, got.Name, got.Replies)
		}
	}
}

// within calls and checks the answer came within the stall bound.
func (f *forumServer) within(method, path, body string, want int) time.Duration {
	f.t.Helper()
	start := time.Now()
	var e map[string]any
	got := f.call(method, path, body, &e)
	took := time.Since(start)
	f.t.Logf("%s %s during the stall: %d in %v", method, path, got, took.Round(time.Millisecond))
	if got != want || took > 3500*time.Millisecond {
		f.t.Errorf("%s %s = %d after %v, want %d within 3.5 s (%v)", method, path, got, took, want, e)
	}
	return took
}

func TestStalledDatabaseAnswers503(t *testing.T) {
	t.Run("sqlite write lock held", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "forum.db")
		app := openForum(t, "sqlite:"+path, redistest.Start(t), 0)
		t.Cleanup(func() { app.Close(context.Background()) })
		f := serve(t, app)
		f.counts("post", 1) // cached
		other, err := sql.Open("sqlite", "file:"+path)
		if err != nil {
			t.Fatal(err)
		}
		defer other.Close()
		conn, err := other.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
			t.Fatal(err)
		}
		f.within(http.MethodGet, "/api/posts/1", "", http.StatusOK) // WAL reads go on
		f.within(http.MethodPost, "/api/posts/1/like", `{"user":3}`, http.StatusServiceUnavailable)
		conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
		var liked struct{ Liked bool }
		f.mustCall(http.MethodPost, "/api/posts/1/like", `{"user":3}`, http.StatusOK, &liked)
		if !liked.Liked {
			t.Error("the like refused during the stall was stored anyway")
		}
	})
	t.Run("mariadb stopped", func(t *testing.T) {
		d, server, err := mariadbtest.StartPrivate(t, mariadbtest.Options{})
		if err != nil {
			t.Fatal(err)
		}
		app := openForum(t, mysqlURL(t, d.DSN), redistest.Start(t), 0)
		t.Cleanup(func() { app.Close(context.Background()) })
		f := serve(t, app)
		if err := server.Pause(); err != nil {
			t.Fatal(err)
		}
		f.within(http.MethodGet, "/api/posts/1", "", http.StatusServiceUnavailable)
		f.within(http.MethodPost, "/api/posts/1/like", `{"user":3}`, http.StatusServiceUnavailable)
		f.within(http.MethodGet, "/api/users/1/unread", "", http.StatusServiceUnavailable)
		if err := server.Resume(); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(time.Minute)
		for f.call(http.MethodGet, "/api/posts/1", "", nil) != http.StatusOK {
			if time.Now().After(deadline) {
				t.Fatal("no recovery within a minute of SIGCONT")
			}
			time.Sleep(50 * time.Millisecond)
		}
		var liked struct{ Liked bool }
		f.mustCall(http.MethodPost, "/api/posts/1/like", `{"user":3}`, http.StatusOK, &liked)
		if !liked.Liked {
			t.Error("the like refused during the stall was stored anyway")
		}
	})
}
