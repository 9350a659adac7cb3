package forum_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-sql-driver/mysql"
	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"

	"github.com/pulse-dev/pulse/example/forum"
	"github.com/pulse-dev/pulse/internal/testenv/mariadbtest"
	"github.com/pulse-dev/pulse/internal/testenv/pgtest"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

func TestMain(m *testing.M) {
	if path := os.Getenv(holdLockEnv); path != "" {
		holdSQLiteLock(path)
		return
	}
	mariadbtest.Main(m, pgtest.Setup)
}

// databases are the stores every forum test runs against.
var databases = []string{"sqlite", "mariadb", "postgres"}

// databaseURL returns a fresh database of the kind, as DATABASE_URL
// spells it.
func databaseURL(t *testing.T, kind string) string {
	t.Helper()
	switch kind {
	case "sqlite":
		return "sqlite:" + filepath.Join(t.TempDir(), "forum.db")
	case "postgres":
		d, err := pgtest.StartDatabase(t)
		if err != nil {
			t.Fatal(err)
		}
		d.DB.Close() // the forum opens its own
		return d.DSN
	}
	d, err := mariadbtest.StartDatabase(t)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := mysql.ParseDSN(d.DSN)
	if err != nil {
		t.Fatal(err)
	}
	u := url.URL{Scheme: "mysql", User: url.UserPassword(cfg.User, cfg.Passwd), Host: cfg.Addr, Path: "/" + cfg.DBName}
	return u.String()
}

type forumServer struct {
	t    *testing.T
	app  *forum.App
	e    *echo.Echo
	base string
	// header is added to every request call sends.
	header http.Header
}

// Admin login of the test servers.
const adminUser, adminPass = "ops", "s3cret"

func adminAuth() echo.MiddlewareFunc {
	return echomw.BasicAuth(func(u, p string, _ echo.Context) (bool, error) {
		return u == adminUser && p == adminPass, nil
	})
}

func startForum(t *testing.T, kind string) *forumServer {
	t.Helper()
	return startForumWith(t, forum.Config{DatabaseURL: databaseURL(t, kind), AdminAuth: adminAuth()})
}

// startForumTimeout is startForum with a longer bound on the database
// work (0: the default), for tests of exactness under many writers.
func startForumTimeout(t *testing.T, kind string, timeout time.Duration) *forumServer {
	t.Helper()
	return startForumWith(t, forum.Config{DatabaseURL: databaseURL(t, kind), AdminAuth: adminAuth(),
		QueryTimeout: timeout, StatementTimeout: timeout})
}

// startForumWith serves the forum of cfg (with a private Redis) over real
// HTTP, mounted the way the example mounts it.
func startForumWith(t *testing.T, cfg forum.Config) *forumServer {
	t.Helper()
	srv := redistest.Start(t)
	ctx := context.Background()
	cfg.Pool = srv.Pool()
	cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	app, err := forum.Open(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := app.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	if err := app.Seed(ctx); err != nil {
		t.Fatal(err)
	}
	e := echo.New()
	e.Logger.SetOutput(io.Discard)
	e.HTTPErrorHandler = forum.ErrorHandler
	app.Register(e, nil)
	hs := httptest.NewServer(e)
	t.Cleanup(hs.Close)
	return &forumServer{t: t, app: app, e: e, base: hs.URL, header: http.Header{}}
}

// call sends a request and decodes a JSON answer into out (when not nil).
func (f *forumServer) call(method, path, body string, out any) int {
	f.t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, f.base+path, r)
	if err != nil {
		f.t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range f.header {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			f.t.Fatalf("%s %s: %d %q is not JSON: %v", method, path, resp.StatusCode, data, err)
		}
	}
	return resp.StatusCode
}

func (f *forumServer) mustCall(method, path, body string, want int, out any) {
	f.t.Helper()
	if got := f.call(method, path, body, out); got != want {
		f.t.Fatalf("%s %s = %d, want %d", method, path, got, want)
	}
}

type countsReply struct {
	Counts map[string]int64 `json:"counts"`
}

func (f *forumServer) counts(kind string, id int64) map[string]int64 {
	f.t.Helper()
	var out countsReply
	// GET /api/posts/:id counts a view; the user endpoint reads only.
	f.mustCall(http.MethodGet, fmt.Sprintf("/api/%ss/%d", kind, id), "", http.StatusOK, &out)
	return out.Counts
}

func (f *forumServer) unread(user int64) map[string]int64 {
	f.t.Helper()
	var out struct {
		Unread map[string]int64 `json:"unread"`
	}
	f.mustCall(http.MethodGet, fmt.Sprintf("/api/users/%d/unread", user), "", http.StatusOK, &out)
	return out.Unread
}

func TestForumCounts(t *testing.T) {
	for _, kind := range databases {
		t.Run(kind, func(t *testing.T) {
			f := startForum(t, kind)
			var created struct{ ID int64 }
			f.mustCall(http.MethodPost, "/api/posts", `{"author":2,"title":"Counting things"}`, http.StatusCreated, &created)
			post := created.ID
			if got := f.counts("user", 2)["posts"]; got != 2 { // one seeded, one now
				t.Errorf("author's posts = %d, want 2", got)
			}

			for i := 1; i <= 3; i++ {
				if got := f.counts("post", post)["views"]; got != int64(i) {
					t.Errorf("view %d: views = %d", i, got)
				}
			}

			var like struct {
				Liked bool  `json:"liked"`
				Likes int64 `json:"likes"`
			}
			steps := []struct {
				user      int
				wantLiked bool
				wantLikes int64
			}{{1, true, 1}, {1, false, 1}, {3, true, 2}, {3, false, 2}}
			for _, s := range steps {
				f.mustCall(http.MethodPost, fmt.Sprintf("/api/posts/%d/like", post), fmt.Sprintf(`{"user":%d}`, s.user), http.StatusOK, &like)
				if like.Liked != s.wantLiked || like.Likes != s.wantLikes {
					t.Errorf("like by %d = %+v, want liked=%v likes=%d", s.user, like, s.wantLiked, s.wantLikes)
				}
			}

			var followed struct{ Followed bool }
			f.mustCall(http.MethodPost, "/api/users/1/follow/2", "", http.StatusOK, &followed)
			f.mustCall(http.MethodPost, "/api/users/1/follow/2", "", http.StatusOK, &followed)
			if followed.Followed {
				t.Error("a repeated follow reported as new")
			}
			if got := f.counts("user", 1)["following"]; got != 1 {
				t.Errorf("following = %d, want 1", got)
			}
			if got := f.counts("user", 2)["followers"]; got != 1 {
				t.Errorf("followers = %d, want 1", got)
			}

			f.mustCall(http.MethodPost, fmt.Sprintf("/api/posts/%d/replies", post), `{"user":4,"text":"Agreed"}`, http.StatusCreated, nil)
			f.mustCall(http.MethodPost, fmt.Sprintf("/api/posts/%d/replies", post), `{"user":5,"text":"Same"}`, http.StatusCreated, nil)
			f.mustCall(http.MethodPost, fmt.Sprintf("/api/posts/%d/replies", post), `{"user":2,"text":"Thanks"}`, http.StatusCreated, nil)
			if got := f.counts("post", post)["replies"]; got != 3 {
				t.Errorf("post replies = %d, want 3", got)
			}
			if got := f.counts("user", 4)["replies"]; got != 1 {
				t.Errorf("replier's replies = %d, want 1", got)
			}
			// The author's own reply is not unread to them.
			if got := f.unread(2); got["replies"] != 2 || got["followers"] != 1 {
				t.Errorf("author's unread = %v, want 2 replies and 1 follower", got)
			}
			var cleared struct {
				Unread map[string]int64 `json:"unread"`
			}
			f.mustCall(http.MethodPost, "/api/users/2/unread/read", "", http.StatusOK, &cleared)
			for field, n := range cleared.Unread {
				if n != 0 {
					t.Errorf("after read, unread %s = %d", field, n)
				}
			}
			if got := f.unread(2); got["replies"] != 0 {
				t.Errorf("unread replies after read = %d, want 0", got["replies"])
			}
			f.mustCall(http.MethodPost, fmt.Sprintf("/api/posts/%d/replies", post), `{"user":3,"text":"Late"}`, http.StatusCreated, nil)
			if got := f.unread(2)["replies"]; got != 1 {
				t.Errorf("unread replies after a new reply = %d, want 1", got)
			}
		})
	}
}

// Many users liking one post at once on a cold cache: every like counts
// once, in SQL and in the cache.
func TestConcurrentLikes(t *testing.T) {
	for _, kind := range databases {
		t.Run(kind, func(t *testing.T) {
			// 400 likes at once queue on SQLite's one connection longer
			// than the default 2 s on a loaded machine (they would get 503);
			// this test is about exactness.
			f := startForumTimeout(t, kind, time.Minute)
			const users = 200
			ids := make([]int64, users)
			for i := range ids {
				var u struct{ ID int64 }
				f.mustCall(http.MethodPost, "/api/users", fmt.Sprintf(`{"name":"u%d"}`, i), http.StatusCreated, &u)
				ids[i] = u.ID
			}
			var wg sync.WaitGroup
			for _, id := range ids {
				for range 2 { // each user likes twice; the second changes nothing
					wg.Add(1)
					go func() {
						defer wg.Done()
						if code := f.call(http.MethodPost, "/api/posts/1/like", fmt.Sprintf(`{"user":%d}`, id), nil); code != http.StatusOK {
							t.Errorf("like = %d", code)
						}
					}()
				}
			}
			wg.Wait()
			ctx := context.Background()
			got, err := f.app.Counters().Get(ctx, "post", 1)
			if err != nil {
				t.Fatal(err)
			}
			var rows int64
			if err := f.app.DB().QueryRowContext(ctx, "SELECT COUNT(*) FROM forum_likes WHERE post_id = 1").Scan(&rows); err != nil {
				t.Fatal(err)
			}
			if got["likes"] != users || rows != users {
				t.Errorf("likes = %d, like rows = %d, want %d", got["likes"], rows, users)
			}
			fixes, err := f.app.Reconcile(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(fixes) != 0 {
				t.Errorf("reconcile found drift after concurrent likes: %+v", fixes)
			}
		})
	}
}

// A count that drifted from the forum's tables (a like counted twice, a
// follow never counted) is repaired on demand and reported.
func TestReconcileRepairsDrift(t *testing.T) {
	for _, kind := range databases {
		t.Run(kind, func(t *testing.T) {
			f := startForum(t, kind)
			ctx := context.Background()
			f.mustCall(http.MethodPost, "/api/posts/1/like", `{"user":2}`, http.StatusOK, nil)
			c := f.app.Counters()
			if err := c.Incr(ctx, "post", 1, "likes", 4); err != nil { // drift: 5 counted, 1 true
				t.Fatal(err)
			}
			if _, err := f.app.DB().ExecContext(ctx, "INSERT INTO forum_follows (user_id, target_id) VALUES (3, 4)"); err != nil {
				t.Fatal(err) // drift: a follow stored but never counted
			}
			var out struct {
				Fixes []struct {
					Kind  string `json:"kind"`
					ID    string `json:"id"`
					Field string `json:"field"`
					Was   int64  `json:"was"`
					Now   int64  `json:"now"`
				} `json:"fixes"`
			}
			f.header.Set("Authorization", basicLogin(adminUser, adminPass))
			f.mustCall(http.MethodPost, "/api/admin/reconcile", "", http.StatusOK, &out)
			got := map[string]bool{}
			for _, fx := range out.Fixes {
				got[fmt.Sprintf("%s/%s/%s %d->%d", fx.Kind, fx.ID, fx.Field, fx.Was, fx.Now)] = true
			}
			for _, want := range []string{"post/1/likes 5->1", "user/3/following 0->1", "user/4/followers 0->1"} {
				if !got[want] {
					t.Errorf("fixes %v lack %s", got, want)
				}
			}
			if len(out.Fixes) != 3 {
				t.Errorf("%d fixes, want 3: %+v", len(out.Fixes), out.Fixes)
			}
			if n := f.counts("user", 4)["followers"]; n != 1 {
				t.Errorf("followers after reconcile = %d, want 1", n)
			}
			if n := f.counts("post", 1)["likes"]; n != 1 {
				t.Errorf("likes after reconcile = %d, want 1", n)
			}
			f.mustCall(http.MethodPost, "/api/admin/reconcile", "", http.StatusOK, &out)
			if len(out.Fixes) != 0 {
				t.Errorf("a second reconcile fixed %+v", out.Fixes)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	f := startForum(t, "sqlite")
	tests := []struct {
		method, path, body string
		want               int
	}{
		{"POST", "/api/posts", `{"author":1,`, http.StatusBadRequest},
		{"POST", "/api/posts", `{"author":1,"title":"x","extra":1}`, http.StatusBadRequest},
		{"POST", "/api/posts", `{"author":0,"title":"x"}`, http.StatusBadRequest},
		{"POST", "/api/posts", `{"author":1,"title":"   "}`, http.StatusBadRequest},
		{"POST", "/api/posts", `{"author":1,"title":"` + strings.Repeat("x", 201) + `"}`, http.StatusBadRequest},
		{"POST", "/api/posts", `{"author":999,"title":"x"}`, http.StatusNotFound},
		{"GET", "/api/posts/abc", "", http.StatusBadRequest},
		{"GET", "/api/posts/-1", "", http.StatusBadRequest},
		{"GET", "/api/posts/99999999999999999999", "", http.StatusBadRequest},
		{"GET", "/api/posts/999", "", http.StatusNotFound},
		{"POST", "/api/posts/1/like", `{"user":"bob"}`, http.StatusBadRequest},
		{"POST", "/api/posts/1/like", `{"user":999}`, http.StatusNotFound},
		{"POST", "/api/posts/999/like", `{"user":1}`, http.StatusNotFound},
		{"POST", "/api/users/1/follow/1", "", http.StatusBadRequest},
		{"POST", "/api/users/1/follow/999", "", http.StatusNotFound},
		{"POST", "/api/posts/1/replies", `{"user":1}`, http.StatusBadRequest},
		{"POST", "/api/posts/1/replies", `{"user":1,"text":"` + strings.Repeat("x", 2001) + `"}`, http.StatusBadRequest},
		{"GET", "/api/users/999/unread", "", http.StatusNotFound},
		{"POST", "/api/users/x/unread/read", "", http.StatusBadRequest},
		{"GET", "/posts/999", "", http.StatusNotFound},
		{"GET", "/no/such/page", "", http.StatusNotFound},
		{"DELETE", "/api/posts/1", "", http.StatusMethodNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path+" "+tt.body[:min(len(tt.body), 30)], func(t *testing.T) {
			var out map[string]any
			if got := f.call(tt.method, tt.path, tt.body, &out); got != tt.want {
				t.Errorf("status %d, want %d (%v)", got, tt.want, out)
			}
			if msg, _ := out["error"].(string); msg == "" {
				t.Errorf("body %v has no error message", out)
			}
		})
	}
	// Nothing above changed a count.
	if got := f.counts("user", 1)["posts"]; got != 2 {
		t.Errorf("user 1 posts = %d after bad requests, want 2", got)
	}
}

func TestPagesEscapeUserText(t *testing.T) {
	f := startForum(t, "sqlite")
	f.mustCall(http.MethodPost, "/api/posts", `{"author":1,"title":"<script>alert(1)</script>"}`, http.StatusCreated, nil)
	for _, path := range []string{"/", "/posts", "/posts/5"} {
		resp, err := http.Get(f.base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("GET %s = %d", path, resp.StatusCode)
		}
		if bytes.Contains(body, []byte("<script>alert")) || !bytes.Contains(body, []byte("&lt;script&gt;alert(1)&lt;/script&gt;")) {
			t.Errorf("GET %s does not escape the title", path)
		}
	}
}
