package alert

import (
	"context"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// killLease is the lease of the evaluators in TestKillHolder.
const killLease = 2 * time.Second

// TestKillHolderHelper is the evaluating instance TestKillHolder starts
// as a subprocess; it does nothing as a test of its own.
func TestKillHolderHelper(t *testing.T) {
	addr, hookURL := os.Getenv("ALERT_KILL_REDIS"), os.Getenv("ALERT_KILL_HOOK")
	if addr == "" {
		t.Skip("run by TestKillHolder")
	}
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.Dial("tcp", addr) }}
	e := killEvaluator(t, pool, "child", hookURL)
	e.Run(context.Background()) // until killed
}

func killEvaluator(t *testing.T, pool *redis.Pool, name, hookURL string) *Evaluator {
	e, err := New(Config{
		Pool: pool, Instance: name, Interval: 100 * time.Millisecond, LeaseTTL: killLease,
		Rules:     []Rule{{Name: "SLO", Kind: Availability, Series: App}},
		Receivers: []Receiver{{Name: "team", Kind: ToWebhook, URL: hookURL}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// TestKillHolder: the instance holding the lease is killed with SIGKILL
// after it sent its notifications; the other takes over once the lease
// lapses and sends nothing again. The clock is the system's, shared by
// both processes; the traffic is written relative to it in hashes that
// never expire.
func TestKillHolder(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	now := time.Now().Unix()
	tr := traffic{}
	for k := int64(1); k <= 4*24*60; k++ {
		tr.add(App, now-60*k, 100)
		if k <= 10 {
			tr.add(errorSeries(App), now-60*k, 50)
		}
	}
	tr.write(t, pool)
	h := newHook(t)

	child := exec.Command(os.Args[0], "-test.run=^TestKillHolderHelper$", "-test.count=1")
	child.Env = append(os.Environ(), "ALERT_KILL_REDIS="+srv.Addr, "ALERT_KILL_HOOK="+h.srv.URL)
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	defer child.Process.Kill()
	keys := keysFor("")
	waitFor(t, "the child to send and record both firings", func() bool {
		n, _ := redis.Int(pool.Get().Do("HLEN", keys.sent))
		return n == 2
	})

	// The parent's evaluator runs beside it, waiting for the lease.
	e := killEvaluator(t, pool, "parent", h.srv.URL)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.Run(ctx)
	defer e.Close(context.Background())
	time.Sleep(300 * time.Millisecond)
	if e.Health().Leader {
		t.Fatal("the parent leads while the child holds the lease")
	}

	child.Process.Signal(syscall.SIGKILL)
	killed := time.Now()
	child.Wait()
	waitFor(t, "the parent to take over", func() bool { return e.Health().Leader })
	took := time.Since(killed)
	t.Logf("took over %v after the kill (lease %v)", took, killLease)
	if took > killLease+2*time.Second {
		t.Errorf("took over %v after the kill, lease %v", took, killLease)
	}
	// Some evaluations later, nothing was sent again.
	evals := e.Health().Evaluations
	waitFor(t, "more evaluations", func() bool { return e.Health().Evaluations >= evals+5 })
	idle(t, e)
	if n := len(h.bodies()); n != 2 {
		t.Fatalf("%d notifications, want the child's 2", n)
	}
	if d := e.Health().Receivers[0].Delivered; d != 0 {
		t.Fatalf("the parent delivered %d", d)
	}
}
