package main

import (
	"context"
	"database/sql"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/alert"
	"github.com/pulse-dev/pulse/internal/testenv/amtest"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestBrowseURL(t *testing.T) {
	t.Parallel()
	tests := []struct{ addr, url, dashboard string }{
		{":8080", "http://localhost:8080/", "http://localhost:8080/dashboard/"},
		{"[::]:8080", "http://localhost:8080/", "http://localhost:8080/dashboard/"},
		{"0.0.0.0:8080", "http://localhost:8080/", "http://localhost:8080/dashboard/"},
		{"127.0.0.1:8080", "http://127.0.0.1:8080/", "http://127.0.0.1:8080/dashboard/"},
		{"[::1]:9000", "http://[::1]:9000/", "http://[::1]:9000/dashboard/"},
		{"forum.internal:80", "http://forum.internal:80/", "http://forum.internal:80/dashboard/"},
		{"127.0.0.1:0", "http://127.0.0.1:0/", ""}, // the port is known once listening
	}
	for _, tt := range tests {
		if got := browseURL(tt.addr); got != tt.url {
			t.Errorf("browseURL(%q) = %q, want %q", tt.addr, got, tt.url)
		}
		if got := dashboardURL(tt.addr); got != tt.dashboard {
			t.Errorf("dashboardURL(%q) = %q, want %q", tt.addr, got, tt.dashboard)
		}
	}
}

// defaultRuleNames are the names of alert.DefaultRules.
func defaultRuleNames() []string {
	var names []string
	for _, r := range alert.DefaultRules() {
		names = append(names, r.Name)
	}
	return names
}

// `make run`'s configuration, with no environment at all: the embedded
// Redis, SQLite, the default alert rules. The log names a URL a person
// can open (localhost, not the wildcard address it listens on). A series
// of 200 buckets of 5 s, as 17 minutes of traffic leave it, holds only
// the newest 120 after the cleaner's next pass, a minute after the first:
// on the real clock, at the real interval. api/alerts lists the default
// rules. SIGINT stops it with exit 0.
//
// It runs on each local server `make run` may start: a private
// redis-server when one is installed (the default), and the embedded one
// (REDIS_SERVER=embedded, as on a machine without redis-server). The log
// says which; the private server stops with the example.
func TestMakeRunConfiguration(t *testing.T) {
	t.Parallel()
	bin := buildExample(t)
	for _, tc := range []struct{ name, env, msg string }{
		{"redis-server", "REDIS_SERVER=", "REDIS_URL is not set: using a private redis-server; counts vanish when the example stops"},
		{"embedded", "REDIS_SERVER=embedded", "REDIS_URL is not set: using an embedded in-process Redis; counts vanish when the example stops; docs/deployment.md lists where it differs from Redis"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			testMakeRun(t, bin, tc.env, tc.msg)
		})
	}
}

func testMakeRun(t *testing.T, bin, env, msg string) {
	addr := ":" + freePort(t) // the form of the default, ":8080"
	p := startBinary(t, bin, "ADDR="+addr, env)
	if want := "http://localhost" + addr + "/"; p.url != want {
		t.Errorf("the log says url=%s, want %s", p.url, want)
	}
	if got := p.logValue("forum listening", "dashboard"); got != p.url+"dashboard/" {
		t.Errorf("the log says dashboard=%s, want %sdashboard/", got, p.url)
	}
	local := p.logValue(msg, "addr")
	conn, err := redis.Dial("tcp", local)
	if err != nil {
		t.Fatalf("the local Redis at %q: %v\n%s", local, err, p.logs.String())
	}
	defer conn.Close()

	seeded := time.Now()
	newest := timeseries.BucketStart(seeded.Unix(), 5)
	args := []any{"count:5:hits"}
	for i := range 200 {
		args = append(args, newest-int64(5*i), 1)
	}
	if _, err := conn.Do("HSET", args...); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Do("ZADD", "known:", 0, "5:hits"); err != nil {
		t.Fatal(err)
	}
	if got, want := readAlerts(t, p.url).ruleNames(), defaultRuleNames(); !slices.Equal(got, want) {
		t.Errorf("api/alerts lists %v, want the defaults %v", got, want)
	}
	// The evaluator holds its lease there, which expires by itself.
	waitUntil(t, "the evaluator's lease", 10*time.Second, func() bool { return readAlerts(t, p.url).Health.Leader })
	if ttl, err := redis.Int64(conn.Do("PTTL", "{alerts}:lease")); err != nil || ttl <= 0 || ttl > 90_000 {
		t.Errorf("the lease's PTTL is %d (%v), want it to expire within 3 × 30 s", ttl, err)
	}

	// Traffic meanwhile, as a person browsing would make: the buckets
	// after the seeded ones fill as they come.
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(500 * time.Millisecond):
				answer(http.Get(p.url + "forum.css"))
			}
		}
	}()
	fields, last, seen := waitTrimmed(t, conn, "count:5:hits", 200, 80*time.Second)
	close(stop)
	// The pass ran between the last look that found 200 fields and the
	// first that found fewer: the oldest bucket left is the oldest of the
	// newest 120 at that moment, and nothing newer was deleted.
	oldest, lo, hi := fields[0], timeseries.BucketStart(last.Unix(), 5)-119*5, timeseries.BucketStart(seen.Unix(), 5)-119*5
	if oldest < lo || oldest > hi {
		t.Errorf("oldest bucket kept %d, want the oldest of the newest 120 at the pass, in [%d, %d]", oldest, lo, hi)
	}
	for i := 1; i < len(fields); i++ {
		if fields[i] != fields[i-1]+5 {
			t.Fatalf("bucket %d missing after the pass: %v", fields[i-1]+5, fields)
		}
	}
	read := seen
	t.Logf("HLEN count:5:hits 200 -> %d, %v after seeding", len(fields), read.Sub(seeded).Round(time.Second))
	if strings.Contains(p.logs.String(), "pulse: cleaner") {
		t.Errorf("the cleaner reported errors:\n%s", p.logs.String())
	}
	p.interrupt(t)
	if c, err := redis.Dial("tcp", local); err == nil {
		c.Close()
		t.Errorf("the local Redis at %s still accepts connections after the example exited", local)
	}
}

// waitTrimmed looks at the hash key every 200 ms until it has fewer than
// before fields, and returns them sorted, with when it last found it
// untouched and when it found it trimmed.
func waitTrimmed(t *testing.T, conn redis.Conn, key string, before int, limit time.Duration) (fields []int64, last, seen time.Time) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		at := time.Now()
		fs, err := redis.Int64s(conn.Do("HKEYS", key))
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) < before {
			slices.Sort(fs)
			return fs, last, at
		}
		last = at
		if time.Now().After(deadline) {
			t.Fatalf("%s still has %d fields after %v", key, len(fs), limit)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// `make run` stopped by Ctrl-C, which the terminal sends to make's whole
// process group: the example shuts down in order and exits 0, so make
// reports no error for its recipe. (make itself then ends by the same
// SIGINT, as GNU make does whenever it is interrupted.)
func TestMakeRunInterrupted(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the example through make")
	}
	dir := t.TempDir()
	cmd := exec.Command("make", "--no-print-directory", "-C", "..", "run", "RUN_BIN="+filepath.Join(dir, "example"))
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(exampleVars, name) && name != "MAKEFLAGS" && name != "MAKELEVEL" && name != "MFLAGS" {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "ADDR=127.0.0.1:0", "DATABASE_URL=sqlite:"+filepath.Join(dir, "forum.db"), "SPILL_DIR="+filepath.Join(dir, "spill"))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out syncBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	deadline := time.Now().Add(3 * time.Minute)
	for !strings.Contains(out.String(), `msg="forum listening"`) {
		if time.Now().After(deadline) {
			t.Fatalf("make run did not serve within 3 min:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatalf("make run did not end within 30 s of SIGINT:\n%s", out.String())
	}
	if err != nil && !exitedBySignal(err, syscall.SIGINT) {
		t.Errorf("make run ended with %v, want 0 or make's own SIGINT", err)
	}
	for _, bad := range []string{"Error", "exit status"} {
		if strings.Contains(out.String(), bad) {
			t.Errorf("make run's output says %q:\n%s", bad, out.String())
		}
	}
	if !strings.Contains(out.String(), `msg="recorder closed"`) {
		t.Errorf("the example did not shut down in order:\n%s", out.String())
	}
	t.Logf("make run after SIGINT: %v", err)
}

// ALERTMANAGER_URL alone, on `make run`'s configuration otherwise: the
// default rules reach a real Alertmanager. It is down when the app's
// availability breaks (the SQLite file locked by another writer, so every
// write answers 503 while reads answer 200); the alert fires all the
// same and is delivered once Alertmanager is back.
func TestAlertmanagerURLAlone(t *testing.T) {
	t.Parallel()
	bin := buildExample(t)
	am := amtest.Start(t, "")
	am.Stop()
	p := startBinary(t, bin, "ADDR=127.0.0.1:0", "ALERTMANAGER_URL="+am.URL())
	if got := p.logValue("alerts sent to Alertmanager", "url"); got != am.URL() {
		t.Errorf("the log names Alertmanager %q, want %q", got, am.URL())
	}
	if got, want := readAlerts(t, p.url).ruleNames(), defaultRuleNames(); !slices.Equal(got, want) {
		t.Errorf("api/alerts lists %v, want the defaults %v", got, want)
	}

	release := lockSQLite(t, filepath.Join(p.cmd.Dir, "pulse-forum.db"))
	answers := make(chan string, 40)
	for i := range 20 {
		go func() {
			answers <- answer(http.Post(p.url+"api/users", "application/json", strings.NewReader(`{"name":"user`+strconv.Itoa(i)+`"}`)))
			answers <- answer(http.Get(p.url + "posts"))
		}()
	}
	count := map[string]int{}
	for range 40 {
		count[<-answers]++
	}
	release()
	broke := time.Now()
	if count["503"] != 20 || count["200"] != 20 {
		t.Fatalf("answers %v, want 20 × 503 (writes to the locked database) and 20 × 200", count)
	}

	waitUntil(t, "PulseAppAvailability firing in api/alerts", 75*time.Second, func() bool {
		return readAlerts(t, p.url).state("PulseAppAvailability", "page") == "firing"
	})
	if r := readAlerts(t, p.url).Health.Receivers; len(r) != 1 || r[0].Delivered != 0 {
		t.Fatalf("receivers %+v, want alertmanager with nothing delivered while it is down", r)
	}
	fired := time.Now()
	am.Restart()
	waitUntil(t, "the page alert in Alertmanager", 75*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		alerts, err := am.Alerts(ctx)
		for _, a := range alerts {
			if err == nil && a.Labels["alertname"] == "PulseAppAvailability" && a.Labels["severity"] == "page" && a.Status.State == "active" {
				return true
			}
		}
		return false
	})
	t.Logf("firing %v after the 503s; in Alertmanager %v after it came back",
		fired.Sub(broke).Round(time.Second), time.Since(fired).Round(time.Second))
	p.interrupt(t)
}

// waitUntil polls cond every 250 ms and fails t if it is not true
// within limit.
func waitUntil(t *testing.T, what string, limit time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within %v", what, limit)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// lockSQLite takes the write lock of the SQLite file at path, as another
// writer would, and returns the function that lets it go.
func lockSQLite(t *testing.T, path string) (release func()) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(5000)")
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.Conn(context.Background())
	if err == nil {
		_, err = conn.ExecContext(context.Background(), "BEGIN IMMEDIATE")
	}
	if err != nil {
		t.Fatal(err)
	}
	return func() {
		_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
		conn.Close()
		db.Close()
	}
}

// answer is a response's status code, or the error that stood in for
// it; the body is discarded. Safe to call from any goroutine.
func answer(resp *http.Response, err error) string {
	if err != nil {
		return err.Error()
	}
	resp.Body.Close()
	return strconv.Itoa(resp.StatusCode)
}
