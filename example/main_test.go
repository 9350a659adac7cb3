package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// startExample runs the example against a private redis-server and a temp
// SQLite file, and returns its base URL and a stop function that cancels it
// the way SIGTERM does and returns run's result. The deadlines a request
// that must succeed meets, a request's database work, writing its answer
// and the keep-alive between two of a client's requests, are harness.Hang
// unless the test sets them: on a loaded machine the forum's 1.8 s
// answered 503, and a connection idle past 15 s was closed just as a
// client sent a POST on it, which the client cannot resend.
func startExample(t *testing.T, srv *redistest.Server, opts options) (string, func() error) {
	t.Helper()
	opts.Addr = "127.0.0.1:0"
	for _, d := range []*time.Duration{&opts.Timeouts.DB, &opts.Timeouts.Write, &opts.Timeouts.Idle} {
		if *d == 0 {
			*d = harness.Hang
		}
	}
	if opts.RedisURL == "" && srv != nil {
		opts.RedisURL = "redis://" + srv.Addr
	}
	if opts.DatabaseURL == "" {
		opts.DatabaseURL = "sqlite:" + filepath.Join(t.TempDir(), "forum.db")
	}
	if opts.SpillDir == "" {
		opts.SpillDir = filepath.Join(t.TempDir(), "spill")
	}
	ready := make(chan string, 1)
	opts.Ready = func(addr string) { ready <- addr }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var logOut io.Writer = io.Discard
	if opts.logTo != nil {
		logOut = opts.logTo
	}
	logger := slog.New(slog.NewTextHandler(logOut, nil))
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
	t.Parallel()
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
	t.Parallel()
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
	t.Parallel()
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

// With no REDIS_URL and REDIS_SERVER=embedded the example runs on the
// embedded Redis: nothing to start, and requests are counted there.
func TestEmbeddedDefaults(t *testing.T) {
	t.Parallel()
	opts := options{Addr: "127.0.0.1:0", RedisServer: embeddedRedis, DatabaseURL: "sqlite:" + filepath.Join(t.TempDir(), "forum.db")}
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

// The built binary, stopped by a real SIGTERM while one client trickles a
// body and another pipelines requests without reading the answers, exits
// 0 within 11 s having written every hit it counted to Redis.
func TestSIGTERM(t *testing.T) {
	t.Parallel()
	bin := buildExample(t)
	srv := redistest.Start(t)
	port := freePort(t)
	cmd := exec.Command(bin, "-addr", "127.0.0.1:"+port)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "REDIS_URL=redis://"+srv.Addr, "DATABASE_URL=sqlite:forum.db")
	var logs syncBuffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	addr := "127.0.0.1:" + port
	base := "http://" + addr
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

	// A body trickled a byte a second: the read timeout (10 s) is longer
	// than the grace period.
	trickler, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer trickler.Close()
	fmt.Fprintf(trickler, "POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n")
	go func() {
		for {
			if _, err := trickler.Write([]byte(" ")); err != nil {
				return
			}
			time.Sleep(time.Second)
		}
	}()
	// Pipelined requests whose answers are never read, until the server
	// blocks writing to a full socket.
	// A small receive buffer set before connecting keeps the window small.
	smallWindow := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) {
			_ = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10)
		})
	}}
	sink, err := smallWindow.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer sink.Close()
	go func() {
		req := []byte("GET /forum.css HTTP/1.1\r\nHost: x\r\n\r\n")
		for range 50000 {
			if _, err := sink.Write(req); err != nil {
				return
			}
		}
	}()
	time.Sleep(2 * time.Second)

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	signalled := time.Now()
	errc := make(chan error, 1)
	go func() { errc <- cmd.Wait() }()
	select {
	case err := <-errc:
		took := time.Since(signalled)
		if err != nil {
			t.Fatalf("example exited with %v %v after SIGTERM, want 0\n%s", err, took, logs.String())
		}
		if took > 11*time.Second {
			t.Errorf("example took %v to exit after SIGTERM, want at most 11 s", took)
		}
		t.Logf("exit 0 %v after SIGTERM with two stalled clients", took.Round(time.Millisecond))
	case <-time.After(30 * time.Second):
		t.Fatalf("example did not exit within 30 s of SIGTERM\n%s", logs.String())
	}
	if got := srv.HashSum("count:86400:GET /posts/:id"); got != n {
		t.Errorf("GET /posts/:id counted %d times, want %d", got, n)
	}
	// Every hit the process counted, the stalled clients' included, is in
	// Redis.
	m := regexp.MustCompile(`msg="recorder closed" hits=(\d+)`).FindStringSubmatch(logs.String())
	if m == nil {
		t.Fatalf("no recorder total in the log:\n%s", logs.String())
	}
	counted, _ := strconv.ParseInt(m[1], 10, 64)
	if got := srv.HashSum("count:86400:hits"); got != counted || counted <= n {
		t.Errorf("Redis holds %d hits, the process counted %d (want equal, above %d)", got, counted, n)
	}
	t.Logf("%d hits counted and flushed, %d of them pipelined by the client that never read", counted, srv.HashSum("count:86400:GET /forum.css"))
}

// syncBuffer is a bytes.Buffer safe for a process's output and a test
// reading it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// freePort is a port free on every interface, so on the loopback too.
func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", ":0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	_, port, _ := net.SplitHostPort(l.Addr().String())
	return port
}

// A body trickled a byte every 2 s is cut off by the read timeout, not
// read for as long as the client cares to send.
func TestTrickledBodyCutOff(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const readTimeout = 2 * time.Second
	base, _ := startExample(t, srv, options{Timeouts: timeouts{Read: readTimeout}})
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	fmt.Fprintf(conn, "POST /api/users HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Second):
			}
		}
	}()
	// The server answers or hangs up, then closes; 100 bytes at this pace
	// would take 200 s.
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	answer, err := io.ReadAll(conn)
	elapsed := time.Since(start)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the connection was still open after %v of a trickled body", elapsed)
	}
	if elapsed > readTimeout+3*time.Second {
		t.Errorf("cut off after %v, want about the read timeout (%v)", elapsed, readTimeout)
	}
	t.Logf("trickled body cut off after %v: %q", elapsed.Round(time.Millisecond), firstLine(answer))
	if len(answer) > 0 && !bytes.HasPrefix(answer, []byte("HTTP/1.1 408")) {
		t.Errorf("answer %q, want 408 or none", firstLine(answer))
	}
}

// An idle keep-alive connection is closed after the idle timeout.
func TestIdleKeepAliveClosed(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	const idle = time.Second
	base, _ := startExample(t, srv, options{Timeouts: timeouts{Read: 30 * time.Second, Idle: idle}})
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "GET /forum.css HTTP/1.1\r\nHost: x\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Close {
		t.Fatalf("GET /forum.css = %d, close %v; want a kept-alive 200", resp.StatusCode, resp.Close)
	}
	idleFrom := time.Now()
	_ = conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	_, err = br.ReadByte()
	elapsed := time.Since(idleFrom)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("idle connection still open after %v", elapsed)
	}
	if err != io.EOF {
		t.Errorf("idle connection: %v, want EOF", err)
	}
	if elapsed > idle+3*time.Second {
		t.Errorf("idle connection closed after %v, want about %v", elapsed, idle)
	}
	t.Logf("idle keep-alive closed after %v", elapsed.Round(time.Millisecond))
}

func TestAdminRoutesBehindDashboardLogin(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	post := func(base, user, pass string) (int, string) {
		req, _ := http.NewRequest(http.MethodPost, base+"/api/admin/reconcile", nil)
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	t.Run("login set", func(t *testing.T) {
		base, _ := startExample(t, srv, options{DashboardUser: "ops", DashboardPass: "s3cret"})
		for _, tc := range []struct {
			user, pass string
			want       int
		}{{"", "", 401}, {"ops", "nope", 401}, {"ops", "s3cret", 200}} {
			if got, body := post(base, tc.user, tc.pass); got != tc.want {
				t.Errorf("login %q/%q: %d %s, want %d", tc.user, tc.pass, got, body, tc.want)
			}
		}
	})
	t.Run("no login set", func(t *testing.T) {
		base, _ := startExample(t, srv, options{})
		if got, body := post(base, "", ""); got != http.StatusForbidden || !strings.Contains(body, "DASHBOARD_USER") {
			t.Errorf("%d %s, want 403 saying how to turn admin routes on", got, body)
		}
	})
}

func firstLine(b []byte) string {
	line, _, _ := bytes.Cut(b, []byte("\r\n"))
	return string(line)
}
