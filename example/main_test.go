package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/redistest"
)

// startExample runs the example against a private redis-server and a temp
// SQLite file, and returns its base URL and a stop function that cancels it
// the way SIGTERM does and returns run's result.
func startExample(t *testing.T, srv *redistest.Server, opts options) (string, func() error) {
	t.Helper()
	opts.Addr = "127.0.0.1:0"
	opts.RedisURL = "redis://" + srv.Addr
	opts.DatabaseURL = "sqlite:" + filepath.Join(t.TempDir(), "forum.db")
	ready := make(chan string, 1)
	opts.Ready = func(addr string) { ready <- addr }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() { done <- run(ctx, opts, logger) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("example exited at start: %v", err)
	case <-time.After(30 * time.Second):
		cancel()
		t.Fatal("example did not start listening within 30 s")
	}
	stopped := false
	stop := func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		select {
		case err := <-done:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("example did not stop within 20 s of the signal")
			return nil
		}
	}
	t.Cleanup(func() { _ = stop() })
	return "http://" + addr, stop
}

func get(t *testing.T, url string, user, pass string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if user != "" {
		req.SetBasicAuth(user, pass)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// TestShutdownFlushesEveryHit: hits recorded just before the signal reach
// Redis, and the dashboard's own requests are not counted.
func TestShutdownFlushesEveryHit(t *testing.T) {
	srv := redistest.Start(t)
	base, stop := startExample(t, srv, options{})

	const workers, each = 8, 50
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				if code := get(t, base+"/", "", ""); code != http.StatusOK {
					t.Errorf("GET / = %d", code)
					return
				}
			}
		}()
	}
	wg.Wait()
	for i := 0; i < 5; i++ {
		if code := get(t, base+"/dashboard/api/counters", "", ""); code != http.StatusOK {
			t.Fatalf("GET /dashboard/api/counters = %d", code)
		}
	}
	if err := stop(); err != nil {
		t.Fatalf("run returned %v after the signal, want nil", err)
	}

	want := int64(workers * each)
	for _, key := range []string{"count:5:hits", "count:86400:hits", "count:86400:GET /", "count:86400:status:2xx"} {
		if got := srv.HashSum(key); got != want {
			t.Errorf("%s sums to %d, want %d", key, got, want)
		}
	}
	if _, err := http.Get(base + "/"); err == nil {
		t.Error("server still accepts requests after shutdown")
	}
}

func TestDashboardBasicAuth(t *testing.T) {
	srv := redistest.Start(t)
	base, _ := startExample(t, srv, options{DashboardUser: "ops", DashboardPass: "s3cret"})
	cases := []struct {
		name, user, pass string
		want             int
	}{
		{"no login", "", "", http.StatusUnauthorized},
		{"wrong password", "ops", "nope", http.StatusUnauthorized},
		{"wrong user", "dev", "s3cret", http.StatusUnauthorized},
		{"right login", "ops", "s3cret", http.StatusOK},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, path := range []string{"/dashboard/", "/dashboard/api/counters", "/metrics"} {
				if got := get(t, base+path, tc.user, tc.pass); got != tc.want {
					t.Errorf("GET %s = %d, want %d", path, got, tc.want)
				}
			}
		})
	}
	if got := get(t, base+"/", "", ""); got != http.StatusOK {
		t.Errorf("forum home behind no login = %d, want 200", got)
	}
}

// TestMetrics: GET /metrics serves the recorder's Prometheus metrics, and
// scrapes are not counted as traffic.
func TestMetrics(t *testing.T) {
	srv := redistest.Start(t)
	base, stop := startExample(t, srv, options{})
	if got := get(t, base+"/posts", "", ""); got != http.StatusOK {
		t.Fatalf("GET /posts = %d", got)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics = %d", resp.StatusCode)
	}
	for _, want := range []string{`pulse_hits_total{series="GET /posts"} 1`, "pulse_redis_up 1", "pulse_pending_hits", "pulse_last_flush_timestamp_seconds", "pulse_dropped_hits_total 0"} {
		if !bytes.Contains(body, []byte(want)) {
			t.Errorf("/metrics lacks %q:\n%s", want, body)
		}
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	if got := srv.HashSum("count:86400:GET /metrics"); got != 0 {
		t.Errorf("scrapes counted: %d", got)
	}
}

// With no REDIS_URL the example runs on an embedded Redis: nothing to
// start, and requests are counted there.
func TestEmbeddedDefaults(t *testing.T) {
	opts := options{Addr: "127.0.0.1:0", DatabaseURL: "sqlite:" + filepath.Join(t.TempDir(), "forum.db")}
	ready := make(chan string, 1)
	opts.Ready = func(addr string) { ready <- addr }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- run(ctx, opts, slog.New(slog.NewTextHandler(io.Discard, nil))) }()
	var base string
	select {
	case addr := <-ready:
		base = "http://" + addr
	case err := <-done:
		t.Fatalf("example exited at start: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("example did not start within 30 s")
	}
	for _, path := range []string{"/", "/posts", "/posts/1", "/dashboard/", "/dashboard/api/counters"} {
		if code := get(t, base+path, "", ""); code != http.StatusOK {
			t.Errorf("GET %s = %d, want 200", path, code)
		}
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("run returned %v after shutdown", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("example did not stop within 20 s")
	}
}

// The built binary, stopped by a real SIGTERM, exits 0 having written
// every hit to Redis.
func TestSIGTERM(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the example binary")
	}
	srv := redistest.Start(t)
	bin := filepath.Join(t.TempDir(), "example")
	build := exec.Command("go", "build", "-o", bin, ".")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	port := freePort(t)
	cmd := exec.Command(bin, "-addr", "127.0.0.1:"+port)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "REDIS_URL=redis://"+srv.Addr, "DATABASE_URL=sqlite:forum.db")
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	base := "http://127.0.0.1:" + port
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(base + "/dashboard/api/counters")
		if err == nil {
			resp.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("example did not answer within 30 s:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	const n = 137
	for range n {
		if code := get(t, base+"/posts/2", "", ""); code != http.StatusOK {
			t.Fatalf("GET /posts/2 = %d", code)
		}
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("example exited with %v after SIGTERM, want 0\n%s", err, logs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("example did not exit within 20 s of SIGTERM\n%s", logs.String())
	}
	if got := srv.HashSum("count:86400:GET /posts/:id"); got != n {
		t.Errorf("GET /posts/:id counted %d times, want %d", got, n)
	}
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}
