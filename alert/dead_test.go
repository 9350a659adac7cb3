package alert

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/amtest"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// deadMaxPending is how long the child instance of TestDeadInstance
// keeps hits it cannot write: should its last heartbeat report some
// pending, the survivor holds the resolve back that long at most.
const deadMaxPending = 40 * time.Second

// TestDeadInstanceHelper is the app instance TestDeadInstance starts as
// a process of its own: a recorder serving traffic, half of it 5xx while
// the file ALERT_DEAD_ERRORS exists, and an evaluator beside it. It does
// nothing as a test of its own.
func TestDeadInstanceHelper(t *testing.T) {
	addr := os.Getenv("ALERT_DEAD_REDIS")
	if addr == "" {
		t.Skip("run by TestDeadInstance")
	}
	pool := &redis.Pool{MaxIdle: 4, Dial: func() (redis.Conn, error) { return redis.Dial("tcp", addr) }}
	in := startInstanceWith(t, context.Background(), pool, "child", os.Getenv("ALERT_DEAD_AM"), deadMaxPending)
	for { // until killed
		_, err := os.Stat(os.Getenv("ALERT_DEAD_ERRORS"))
		in.errors.Store(err == nil)
		time.Sleep(50 * time.Millisecond)
	}
}

// TestDeadInstance: two instances of an app on one Redis, one a process
// of its own (the child), with a real Alertmanager and its webhook. Both
// serve half their requests 5xx: the SLO fires. Then the child dies
// (kill -9) or stops (SIGSTOP), holding the lease or not, and once it
// is silent (past its stale bound) the data turns good. The survivor goes on evaluating, says in its handler why
// the resolve waits while the child may hold hits, and sends the resolve
// within 60 s of the data turning good: the grace a silent instance gets
// (its stale bound and 30 s), or the child's MaxPendingAge if its last
// heartbeat reported hits pending. A new incident then fires at once. A
// stopped child, resumed, sends nothing again. The webhook sees one
// firing and one resolve, then the new firing.
func TestDeadInstance(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		holder  bool // the child holds the lease
		stopped bool // SIGSTOP, not SIGKILL
	}{
		{"the holder killed", true, false},
		{"the other killed", false, false},
		{"the holder stopped", true, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			srv := redistest.Start(t)
			h := newHook(t)
			am := amtest.Start(t, h.srv.URL)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			errorsFile := filepath.Join(t.TempDir(), "errors")
			if err := os.WriteFile(errorsFile, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			startChild := func() *exec.Cmd {
				before := heartbeatIDs(t, srv)
				defer newHeartbeat(t, srv, before) // the child records: it may hold hits
				child := exec.Command(os.Args[0], "-test.run=^TestDeadInstanceHelper$", "-test.count=1")
				child.Env = append(os.Environ(), "ALERT_DEAD_REDIS="+srv.Addr, "ALERT_DEAD_AM="+am.URL(), "ALERT_DEAD_ERRORS="+errorsFile)
				if err := child.Start(); err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { child.Process.Kill(); child.Wait() })
				return child
			}
			lease := func() string { s, _ := redis.String(srv.Do("GET", keysFor("").lease), nil); return s }

			var child *exec.Cmd
			if c.holder {
				child = startChild()
				waitFor(t, "the child to take the lease", func() bool { return lease() == "child" })
			}
			p := startInstance(t, ctx, srv.Pool(), "parent", am.URL())
			if !c.holder {
				waitFor(t, "the parent to take the lease", func() bool { return p.ev.Health().Leader })
				// the parent's heartbeat first, or it would be taken for the child's
				waitFor(t, "the parent's heartbeat", func() bool { return len(heartbeatIDs(t, srv)) == 1 })
				child = startChild()
			}
			p.errors.Store(true)
			waitWithin(t, "the SLO firing at Alertmanager's webhook", 40*time.Second, func() bool { return h.count("firing", "SLO", "page") == 1 })

			sig := syscall.SIGKILL
			if c.stopped {
				sig = syscall.SIGSTOP
				os.Remove(errorsFile) // the child serves good traffic once resumed
			}
			if err := child.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			// The data turns good once the child is silent: before, its
			// last second of hits may still land, and a resolve is not held.
			for deadline := time.Now().Add(time.Minute); p.ev.Health().ResolvesHeld == ""; time.Sleep(10 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("the parent never saw the child silent: %+v", p.ev.Health())
				}
			}
			p.errors.Store(false)
			good := time.Now()
			evals := p.ev.Health().Evaluations
			held := ""
			waitWithin(t, "the resolve at the webhook", 90*time.Second, func() bool {
				if why := resolveHeld(t, p.ev); why != "" {
					held = why
				}
				return h.count("resolved", "SLO", "page") == 1
			})
			arrived := time.Since(good)
			resolvedAt := time.Time{}
			for _, r := range answer(t, p.ev).Rules {
				for _, a := range r.Alerts {
					if a.State == Resolved {
						resolvedAt = a.Since
					}
				}
			}
			t.Logf("resolved %v after the data turned good, at the webhook %v after; held meanwhile for %q",
				resolvedAt.Sub(good).Round(time.Second), arrived.Round(time.Second), held)
			if d := resolvedAt.Sub(good); resolvedAt.IsZero() || d > 60*time.Second {
				t.Errorf("resolved %v after the data turned good, want within 60 s", d)
			}
			if held == "" {
				t.Error("the handler never said why the resolve waited")
			}
			if n := p.ev.Health().Evaluations - evals; n < 10 {
				t.Errorf("the parent evaluated %d times while the child was silent", n)
			}
			if !p.ev.Health().Leader {
				t.Error("the parent does not hold the lease")
			}
			if c.stopped {
				child.Process.Signal(syscall.SIGCONT)
				time.Sleep(3 * time.Second) // the child flushes, finds its lease gone
			}

			p.errors.Store(true)
			bad := time.Now()
			waitWithin(t, "a new incident at the webhook", 40*time.Second, func() bool { return h.count("firing", "SLO", "page") == 2 })
			t.Logf("the new incident reached the webhook %v after the errors began", time.Since(bad).Round(time.Second))
			time.Sleep(2 * time.Second) // two of Alertmanager's group intervals
			if n, m := h.count("firing", "SLO", "page"), h.count("resolved", "SLO", "page"); n != 2 || m != 1 {
				t.Fatalf("%d firing and %d resolved notifications, want 2 and 1", n, m)
			}
		})
	}
}
