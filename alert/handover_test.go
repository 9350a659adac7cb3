package alert

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// heldHook is a webhook receiver whose first post waits until the test
// lets it go and is then refused with 503, so that its sender retries
// later; every other post goes to a hook, which keeps it.
type heldHook struct {
	*hook
	srv     *httptest.Server // in front of the hook's
	arrived chan struct{}    // closed when the first post comes in
	release chan struct{}    // closed by the test to answer it
	posts   atomic.Int64
}

func newHeldHook(t *testing.T) *heldHook {
	h := &heldHook{hook: newHook(t), arrived: make(chan struct{}), release: make(chan struct{})}
	keep := h.hook.srv.Config.Handler
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h.posts.Add(1) == 1 {
			close(h.arrived)
			<-h.release
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		keep.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		select {
		case <-h.release:
		default:
			close(h.release)
		}
		h.srv.Close()
	})
	return h
}

func (h *heldHook) counts() (posts, accepted int) {
	return int(h.posts.Load()), len(h.bodies())
}

// TestNoSendAfterHandover: a's firing notification is still being
// retried when its lease lapses and b takes over. b finds no sent mark
// and sends it; a, deposed but not yet aware of it, checks the fence
// before its retry and drops the message unsent. The receiver gets the
// alert exactly once.
func TestNoSendAfterHandover(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	steadyTraffic(App, 10, 50).write(t, pool)
	clock := timeseries.NewManualClock(time.Unix(burnNow, 0))
	h := newHeldHook(t)
	// A timeout well past the hold, so that a's first post fails only when let go.
	rcv := Receiver{Name: "team", Kind: ToWebhook, URL: h.srv.URL, Timeout: time.Minute}
	rule := Rule{Name: "SLO", Kind: Availability, Series: App,
		Windows: []Window{{Long: Duration(time.Hour), Short: Duration(5 * time.Minute), Burn: 14.4, Severity: "page"}}}
	newEval := func(name string) *Evaluator {
		e, err := New(Config{Pool: pool, Clock: clock, Instance: name, LeaseTTL: 10 * time.Second,
			Rules: []Rule{rule}, Receivers: []Receiver{rcv},
			MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { e.Close(context.Background()) })
		return e
	}
	a, b := newEval("a"), newEval("b")
	ctx := context.Background()

	a.tick(ctx)
	if !a.Health().Leader {
		t.Fatalf("a does not lead: %+v", a.Health())
	}
	select {
	case <-h.arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("a's notification never reached the receiver")
	}

	// a's lease lapses while its post hangs (deleted here rather than
	// waited out); b takes over and sends what no mark says was sent.
	if _, err := pool.Get().Do("DEL", a.st.k.lease); err != nil {
		t.Fatal(err)
	}
	b.tick(ctx)
	if !b.Health().Leader {
		t.Fatalf("b did not take over: %+v", b.Health())
	}
	idle(t, b)
	if _, accepted := h.counts(); accepted != 1 {
		t.Fatalf("%d notifications accepted from b, want 1", accepted)
	}

	// a's post is refused; its retry finds the fence moved on.
	close(h.release)
	idle(t, a)
	posts, accepted := h.counts()
	if accepted != 1 || posts != 2 {
		t.Fatalf("%d posts, %d accepted: want a's refused one and b's, and no retry from a", posts, accepted)
	}
	if n := h.bodies()[0].Alerts; len(n) != 1 || n[0].Status != "firing" || n[0].Labels["alertname"] != "SLO" {
		t.Errorf("b's notification %+v", h.bodies()[0])
	}
	if rh := a.Health().Receivers[0]; rh.Delivered != 0 || rh.Undelivered != 0 {
		t.Errorf("a's receiver %+v: want nothing delivered and nothing counted undelivered", rh)
	}
}
