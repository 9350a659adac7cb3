package forum_test

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/example/forum"
	"github.com/pulse-dev/pulse/internal/testenv/mariadbtest"
)

// faultTimeout is the forum's database deadline in the fault tests, and
// answerBound the time every request must be answered in while the
// database is locked or stopped.
const (
	faultTimeout = 1500 * time.Millisecond
	answerBound  = 2 * time.Second
)

// holdLockEnv makes the test binary a process that holds an SQLite
// database's write lock until its stdin closes.
const holdLockEnv = "FORUM_TEST_HOLD_SQLITE_LOCK"

func holdSQLiteLock(path string) {
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(1)
	}
	conn, err := db.Conn(context.Background())
	if err == nil {
		_, err = conn.ExecContext(context.Background(), "BEGIN IMMEDIATE")
	}
	if err != nil {
		fmt.Println("lock:", err)
		os.Exit(1)
	}
	fmt.Println("locked")
	_, _ = io.Copy(io.Discard, os.Stdin)
	os.Exit(0) // the lock goes with the process
}

// holdLock makes another process take the write lock of the SQLite file
// at path, and returns the function that lets it go.
func holdLock(t *testing.T, path string) (release func()) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), holdLockEnv+"="+path)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, _ := bufio.NewReader(stdout).ReadString('\n')
	if strings.TrimSpace(line) != "locked" {
		_ = cmd.Process.Kill()
		t.Fatalf("lock holder: %q", line)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			stdin.Close()
			_ = cmd.Wait()
		})
	}
	t.Cleanup(release)
	return release
}

// faultRequest is one request sent while the database is unavailable;
// stored, when set, counts what the request would have stored.
type faultRequest struct {
	method, path, body string
	stored             string
}

var faultRequests = []faultRequest{
	{"GET", "/api/posts/1", "", ""},
	{"GET", "/api/users/1", "", ""},
	{"GET", "/api/posts", "", ""},
	{"GET", "/", "", ""},
	{"GET", "/posts/1", "", ""},
	{"GET", "/api/users/2/unread", "", ""},
	{"POST", "/api/users", `{"name":"during the fault"}`, "SELECT COUNT(*) FROM forum_users WHERE name = 'during the fault'"},
	{"POST", "/api/posts", `{"author":1,"title":"during the fault"}`, "SELECT COUNT(*) FROM forum_posts WHERE title = 'during the fault'"},
	{"POST", "/api/posts/2/like", `{"user":3}`, "SELECT COUNT(*) FROM forum_likes WHERE post_id = 2 AND user_id = 3"},
	{"POST", "/api/users/4/follow/5", "", "SELECT COUNT(*) FROM forum_follows WHERE user_id = 4 AND target_id = 5"},
	{"POST", "/api/posts/3/replies", `{"user":2,"text":"during the fault"}`, "SELECT COUNT(*) FROM forum_replies WHERE body = 'during the fault'"},
	{"POST", "/api/users/2/unread/read", "", ""},
}

type faultResult struct {
	req     faultRequest
	code    int
	elapsed time.Duration
	body    string
}

// underFault sends every fault request, rounds times at once, while the
// database is unavailable, and checks each is answered within answerBound
// with its normal status or a JSON 503. It returns the results.
func underFault(t *testing.T, f *forumServer, rounds int) []faultResult {
	t.Helper()
	client := &http.Client{Timeout: 30 * time.Second}
	var mu sync.Mutex
	var results []faultResult
	var wg sync.WaitGroup
	for range rounds {
		for _, fr := range faultRequests {
			wg.Add(1)
			go func() {
				defer wg.Done()
				var body io.Reader
				if fr.body != "" {
					body = strings.NewReader(fr.body)
				}
				req, _ := http.NewRequest(fr.method, f.base+fr.path, body)
				if fr.body != "" {
					req.Header.Set("Content-Type", "application/json")
				}
				start := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					t.Errorf("%s %s: %v", fr.method, fr.path, err)
					return
				}
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				mu.Lock()
				results = append(results, faultResult{fr, resp.StatusCode, time.Since(start), string(data)})
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	sort.Slice(results, func(i, j int) bool { return results[i].elapsed < results[j].elapsed })
	var codes []string
	for _, r := range results {
		if r.elapsed > answerBound {
			t.Errorf("%s %s answered %d after %v, want within %v", r.req.method, r.req.path, r.code, r.elapsed, answerBound)
		}
		switch {
		case r.code == http.StatusServiceUnavailable:
			if !strings.Contains(r.body, `"error"`) {
				t.Errorf("%s %s: 503 body %q is not a JSON error", r.req.method, r.req.path, r.body)
			}
		case r.code >= 300:
			t.Errorf("%s %s = %d %s, want success or 503", r.req.method, r.req.path, r.code, r.body)
		}
		codes = append(codes, fmt.Sprintf("%d", r.code))
	}
	if len(results) > 0 {
		t.Logf("%d requests during the fault: fastest %v, median %v, slowest %v; statuses %s",
			len(results), results[0].elapsed.Round(time.Millisecond), results[len(results)/2].elapsed.Round(time.Millisecond),
			results[len(results)-1].elapsed.Round(time.Millisecond), strings.Join(codes, " "))
	}
	return results
}

// recovered waits for the forum to store again once the database is back,
// then checks that no write answered with an error was stored.
func recovered(t *testing.T, f *forumServer, results []faultResult) {
	t.Helper()
	start := time.Now()
	for {
		a := f.send("POST", "/api/users", "application/json", []byte(`{"name":"after the fault"}`), nil)
		if a.code == http.StatusCreated {
			break
		}
		if time.Since(start) > 20*time.Second {
			t.Fatalf("the forum did not recover within 20 s of the database: %d %s", a.code, a.body)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("writes work again %v after the database came back", time.Since(start).Round(time.Millisecond))
	// Anything still queued in the database has had time to land.
	time.Sleep(time.Second)
	for _, r := range results {
		if r.req.stored == "" || r.code < 300 {
			continue
		}
		var n int
		if err := f.app.DB().QueryRow(r.req.stored).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 0 {
			t.Errorf("%s %s answered %d but was stored", r.req.method, r.req.path, r.code)
		}
	}
	if a := f.send("GET", "/api/posts/1", "", nil, nil); a.code != http.StatusOK {
		t.Errorf("after recovery GET /api/posts/1 = %d %s", a.code, a.body)
	}
}

// warm reads what the fault requests read, so the Redis cache holds
// their counts.
func warm(f *forumServer) {
	for _, fr := range faultRequests {
		if fr.method == "GET" {
			f.send("GET", fr.path, "", nil, nil)
		}
	}
}

// Another process holding SQLite's write lock: every request is answered
// within the bound, writes with a JSON 503 that stored nothing, and the
// forum writes again as soon as the lock is gone.
func TestSQLiteWriteLockHeld(t *testing.T) {
	path := filepath.Join(t.TempDir(), "forum.db")
	f := startForumWith(t, forum.Config{DatabaseURL: "sqlite:" + path, QueryTimeout: faultTimeout})
	warm(f)
	release := holdLock(t, path)
	results := underFault(t, f, 2)
	unavailable := 0
	for _, r := range results {
		if r.code == http.StatusServiceUnavailable {
			unavailable++
		}
	}
	if unavailable == 0 {
		t.Error("no request was refused while the write lock was held: the lock was not in the way")
	}
	release()
	recovered(t, f, results)
}

// A MariaDB stopped with SIGSTOP, as on a hung host: the same, and the
// forum recovers by itself after SIGCONT.
func TestMariaDBStopped(t *testing.T) {
	d, srv, err := mariadbtest.StartPrivate(t, mariadbtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	f := startForumWith(t, forum.Config{DatabaseURL: mysqlURL(t, d.DSN), QueryTimeout: faultTimeout})
	warm(f)
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	results := underFault(t, f, 2)
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	recovered(t, f, results)
}
