package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/minimaltest"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/timeseries"
)

// start builds the program and runs it against redisURL on a free port.
// It returns the base URL, the program's output and a channel that gets
// its exit.
func start(t *testing.T, redisURL string) (*exec.Cmd, string, *minimaltest.LockedBuffer, <-chan error) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "minimalhttp")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	addr := minimaltest.FreeAddr(t)
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "REDIS_URL="+redisURL, "ADDR="+addr)
	logs := &minimaltest.LockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	return cmd, "http://" + addr, logs, exited
}

// get sends one request and returns its status and body.
func get(t *testing.T, method, url string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

// TestMinimalHTTP runs the program against a private redis-server, sends
// requests to its route, to no route and to the dashboard, stops it with
// SIGTERM, and checks that Redis holds every hit of the app exactly, at
// every precision, and none of the dashboard's.
func TestMinimalHTTP(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the program")
	}
	srv := redistest.Start(t)
	cmd, base, logs, exited := start(t, "redis://"+srv.Addr+"/0")

	// The dashboard answers once the program is up; its requests are not
	// counted, so waiting on it leaves nothing behind.
	for deadline := time.Now().Add(30 * time.Second); ; {
		resp, err := http.Get(base + "/dashboard/")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no dashboard within 30 s: %v\n%s", err, logs.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if code, page := get(t, "GET", base+"/dashboard/"); code != 200 || !strings.Contains(page, "<html") {
		t.Errorf("dashboard page: %d\n%.300s", code, page)
	}
	if code, body := get(t, "GET", base+"/dashboard/api/counters"); code != 200 || !strings.Contains(body, `"counters"`) {
		t.Errorf("dashboard API: %d %.300s", code, body)
	}
	get(t, "GET", base+"/dashboard/no/such/page") // the dashboard's own 404: not counted either

	for range 7 {
		if code, body := get(t, "GET", base+"/"); code != 200 || body != "Hello, counted.\n" {
			t.Fatalf("GET /: %d %q", code, body)
		}
	}
	for _, r := range [][2]string{{"GET", "/nowhere"}, {"GET", "/a/b"}, {"POST", "/"}} {
		if code, _ := get(t, r[0], base+r[1]); code != 404 && code != 405 {
			t.Errorf("%s %s: %d", r[0], r[1], code)
		}
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatalf("still running 20 s after SIGTERM\n%s", logs.String())
	}
	checkCounts(t, srv, map[string]int64{
		"hits": 10, "GET /{$}": 7, "unmatched": 3, "status:2xx": 7, "status:4xx": 3,
		"GET /{$} status:2xx": 7, "unmatched status:4xx": 3, // each route's own status classes
	})
}

// checkCounts checks that Redis holds exactly the series of want, each
// with its hits at every default precision, and no other series.
func checkCounts(t *testing.T, srv *redistest.Server, want map[string]int64) {
	t.Helper()
	var wantMembers []string
	for name, n := range want {
		for _, p := range tracktest.DefaultPrecisions() {
			wantMembers = append(wantMembers, timeseries.KnownMember(p, name))
			if got := srv.HashSum(fmt.Sprintf("count:%d:%s", p, name)); got != n {
				t.Errorf("%s at precision %d: %d hits, want %d", name, p, got, n)
			}
		}
	}
	members, err := redis.Strings(srv.Do("ZRANGE", "known:", 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(members)
	slices.Sort(wantMembers)
	if !slices.Equal(members, wantMembers) {
		t.Errorf("known: holds %q\nwant %q", members, wantMembers)
	}
}
