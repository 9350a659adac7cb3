// Package minimaltest runs a minimal example program (example/minimalv5,
// minimalgin, minimalchi) as a user would: built, started against a
// private redis-server, loaded from many clients, stopped by SIGTERM,
// and its counts checked at every precision. The tests of example/minimal
// and example/minimalhttp, which check more of their own, run their
// programs with its LockedBuffer and FreeAddr.
package minimaltest

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/ports"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
)

// LockedBuffer collects a process's output while the test reads it.
type LockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *LockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *LockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// FreeAddr is a loopback address with a port free for a program to
// listen on, reserved (package ports) so that no server another test
// binary starts meanwhile takes it before the program binds it.
func FreeAddr(t *testing.T) string {
	t.Helper()
	port, err := ports.Free()
	if err != nil {
		t.Fatal(err)
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
}

// start builds the program in the test's directory and runs it against
// srv; it returns the base URL, the program's output and a channel of its
// exit.
func start(t *testing.T, srv *redistest.Server) (base string, logs *LockedBuffer, cmd *exec.Cmd, exited chan error) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "minimal")
	build := exec.Command("go", "build", "-o", bin, ".")
	build.Env = append(os.Environ(), "GOWORK=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	addr := FreeAddr(t)
	cmd = exec.Command(bin)
	cmd.Env = append(os.Environ(), "REDIS_URL=redis://"+srv.Addr+"/0", "ADDR="+addr)
	logs = &LockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited = make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Kill()
			<-exited
		}
	})
	return "http://" + addr, logs, cmd, exited
}

// get answers a GET's status and body.
func get(t *testing.T, client *http.Client, url string) (int, string) {
	resp, err := client.Get(url)
	if err != nil {
		t.Error(err)
		return 0, ""
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// waitReady waits for url to answer 200 while the program starts.
func waitReady(t *testing.T, client *http.Client, url string, logs *LockedBuffer) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if resp, err := client.Get(url); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no dashboard within 30 s\n%s", logs.String())
		}
	}
}

// waitHealthy waits for the health probe at url to answer 200. It asks
// again after a 503: the probe gives Redis's PING a second or two, which
// a loaded machine may take, and what is tested is that a program whose
// Redis runs reports healthy, not how fast.
func waitHealthy(t *testing.T, client *http.Client, url string) {
	t.Helper()
	var code int
	var body string
	for deadline := time.Now().Add(harness.Hang); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		if code, body = get(t, client, url); code != http.StatusServiceUnavailable {
			break
		}
	}
	if code != http.StatusOK {
		t.Errorf("api/health: %d %s", code, body)
	}
}

// sendLoad sends each GETs from each of clients at once, every third one
// to a path no route matches, and returns how many answered wrong.
func sendLoad(t *testing.T, client *http.Client, base string, clients, each int) int64 {
	var bad atomic.Int64
	var wg sync.WaitGroup
	for range clients {
		wg.Go(func() {
			for i := range each {
				path, want := "/", http.StatusOK
				if i%3 == 2 {
					path, want = fmt.Sprintf("/nowhere/%d", i), http.StatusNotFound
				}
				if code, _ := get(t, client, base+path); code != want {
					bad.Add(1)
				}
			}
		})
	}
	wg.Wait()
	return bad.Load()
}

// Run runs the program of the test's directory against a private
// redis-server: the dashboard is served and not counted, the app's
// requests, sent at once from many clients, are all counted at every
// precision, root being the series of its one route ("GET /"), and
// SIGTERM ends the program cleanly with every hit written.
func Run(t *testing.T, root string) {
	if testing.Short() {
		t.Skip("builds and runs the program")
	}
	srv := redistest.Start(t)
	base, logs, cmd, exited := start(t, srv)
	noRedirect := &http.Client{Timeout: harness.Hang, CheckRedirect: func(*http.Request, []*http.Request) error {
		return http.ErrUseLastResponse
	}}
	waitReady(t, noRedirect, base+"/dashboard/", logs)
	if code, page := get(t, noRedirect, base+"/dashboard/"); code != http.StatusOK || !strings.Contains(page, "<title>Pulse</title>") {
		t.Errorf("dashboard page: %d %.200s", code, page)
	}
	if code, _ := get(t, noRedirect, base+"/dashboard"); code != http.StatusFound {
		t.Errorf("/dashboard: %d, want a redirect to /dashboard/", code)
	}
	waitHealthy(t, noRedirect, base+"/dashboard/api/health")

	const clients, each = 8, 150 // each client's every third request misses
	if bad := sendLoad(t, noRedirect, base, clients, each); bad != 0 {
		t.Fatalf("%d requests answered wrong", bad)
	}

	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		if err != nil {
			t.Fatalf("exit after SIGTERM: %v\n%s", err, logs.String())
		}
	case <-time.After(harness.Hang):
		t.Fatalf("still running %v after SIGTERM\n%s", harness.Hang, logs.String())
	}
	// Written on the way out; the dashboard's requests are not among them.
	hits, misses := int64(clients*each), int64(clients*each/3)
	want := map[string]int64{
		"hits": hits, root: hits - misses, "status:2xx": hits - misses,
		"unmatched": misses, "status:4xx": misses,
		root + " status:2xx": hits - misses, "unmatched status:4xx": misses,
	}
	for name, n := range want {
		for _, p := range tracktest.DefaultPrecisions() {
			if got := srv.HashSum(fmt.Sprintf("count:%d:%s", p, name)); got != n {
				t.Errorf("%s at precision %d: %d, want %d", name, p, got, n)
			}
		}
	}
}
