package alert

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// hook is a webhook receiver that keeps what it is sent.
type hook struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  []webhookBody
	fail bool // answer 503 while set
}

func newHook(t *testing.T) *hook {
	h := &hook{}
	h.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.fail {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		var body webhookBody
		if err := json.Unmarshal(b, &body); err != nil {
			t.Errorf("webhook body %q: %v", b, err)
		}
		h.got = append(h.got, body)
	}))
	t.Cleanup(h.srv.Close)
	return h
}

func (h *hook) bodies() []webhookBody {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]webhookBody(nil), h.got...)
}

// count is how many notifications of status came for alertname/severity.
func (h *hook) count(status, alertname, severity string) int {
	n := 0
	for _, b := range h.bodies() {
		for _, a := range b.Alerts {
			if a.Status == status && a.Labels["alertname"] == alertname && a.Labels["severity"] == severity {
				n++
			}
		}
	}
	return n
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	waitWithin(t, what, 20*time.Second, cond)
}

func waitWithin(t *testing.T, what string, d time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// idle waits until e has nothing queued or being sent.
func idle(t *testing.T, e *Evaluator) {
	t.Helper()
	waitFor(t, "delivery to finish", func() bool {
		e.mu.Lock()
		defer e.mu.Unlock()
		return len(e.mem.inflight) == 0
	})
}

func sloEvaluator(t *testing.T, pool *redis.Pool, clock timeseries.Clock, name string, receivers ...Receiver) *Evaluator {
	t.Helper()
	e, err := New(Config{
		Pool: pool, Clock: clock, Instance: name, LeaseTTL: 10 * time.Second,
		Rules:     []Rule{{Name: "SLO", Kind: Availability, Series: App}},
		Receivers: receivers, MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
		DashboardURL: "http://app.example/dashboard/",
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close(context.Background()) })
	return e
}

// TestTwoEvaluatorsOneNotification: two instances on one Redis send one
// firing and one resolved notification per alert, across a handover.
func TestTwoEvaluatorsOneNotification(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	steadyTraffic(App, 10, 50).write(t, pool)
	clock := timeseries.NewManualClock(time.Unix(burnNow, 0))
	h := newHook(t)
	rcv := Receiver{Name: "team", Kind: ToWebhook, URL: h.srv.URL}
	a := sloEvaluator(t, pool, clock, "a", rcv)
	b := sloEvaluator(t, pool, clock, "b", rcv)
	ctx := context.Background()

	for range 3 {
		a.tick(ctx)
		b.tick(ctx)
		clock.Advance(30 * time.Second)
	}
	idle(t, a)
	idle(t, b)
	if !a.Health().Leader || b.Health().Leader {
		t.Fatalf("a leads %v, b leads %v: want a alone", a.Health().Leader, b.Health().Leader)
	}
	if n, m := h.count("firing", "SLO", "page"), h.count("firing", "SLO", "ticket"); n != 1 || m != 1 {
		t.Fatalf("%d page and %d ticket firing notifications, want one each", n, m)
	}
	// Each links to the window of the pair its value belongs to.
	for _, body := range h.bodies() {
		window := map[string]string{"page": "1h", "ticket": "3d"}[body.Alerts[0].Labels["severity"]]
		if body.Version != "4" || body.Alerts[0].StartsAt.Unix() != burnNow || body.Alerts[0].GeneratorURL != "http://app.example/dashboard/?series=hits&window="+window {
			t.Errorf("webhook body %+v", body)
		}
	}

	// a stops; b takes the lease at once (a gave it up) and sends nothing.
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		b.tick(ctx)
		clock.Advance(30 * time.Second)
	}
	idle(t, b)
	if !b.Health().Leader {
		t.Fatal("b did not take over")
	}
	if got := len(h.bodies()); got != 2 {
		t.Fatalf("%d notifications after the handover, want still 2", got)
	}
	if d := b.Health().Receivers[0].Delivered; d != 0 {
		t.Errorf("b delivered %d", d)
	}

	// Four days on, every window is empty: both resolve, once.
	clock.Advance(4 * 24 * time.Hour)
	for range 3 {
		b.tick(ctx)
		clock.Advance(30 * time.Second)
	}
	idle(t, b)
	if n, m := h.count("resolved", "SLO", "page"), h.count("resolved", "SLO", "ticket"); n != 1 || m != 1 {
		t.Fatalf("%d page and %d ticket resolved notifications, want one each", n, m)
	}
	if got := len(h.bodies()); got != 4 {
		t.Errorf("%d notifications in all, want 4", got)
	}
	_, tr, err := b.st.snapshot(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(tr) != 4 || tr[0].To != Resolved || tr[3].To != Firing {
		t.Errorf("transitions %+v: want two firings then two resolutions, newest first", tr)
	}
}

// TestFencedWrite: a write under a token older than the fence's is
// refused, and changes nothing.
func TestFencedWrite(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	st := &stateStore{r: newRouter(srv.Pool()), k: keysFor(""), history: 10}
	ctx := context.Background()
	t1, err := st.acquire(ctx, "a", 100*time.Millisecond)
	if err != nil || t1 == 0 {
		t.Fatalf("a: token %d %v", t1, err)
	}
	if tok, _ := st.acquire(ctx, "b", time.Minute); tok != 0 {
		t.Fatalf("b got token %d while a holds the lease", tok)
	}
	if tok, _ := st.acquire(ctx, "a", 100*time.Millisecond); tok != t1 {
		t.Fatalf("a renewing: token %d, want %d", tok, t1)
	}
	waitFor(t, "a's lease to lapse", func() bool {
		v, _ := redis.Int(srv.Pool().Get().Do("EXISTS", st.k.lease))
		return v == 0
	})
	t2, err := st.acquire(ctx, "b", time.Minute)
	if err != nil || t2 <= t1 {
		t.Fatalf("b: token %d %v, want above %d", t2, err, t1)
	}
	s := &Status{Key: "k", State: Firing}
	if err := st.write(ctx, t1, []*Status{s}, []Transition{{Key: "k", To: Firing}}); err != ErrFenced {
		t.Fatalf("write under the old token: %v, want ErrFenced", err)
	}
	if err := st.mark(ctx, t1, "r\x00k", Sent{State: Firing}); err != ErrFenced {
		t.Fatalf("mark under the old token: %v, want ErrFenced", err)
	}
	states, sent, err := st.load(ctx)
	if err != nil || len(states) != 0 || len(sent) != 0 {
		t.Fatalf("after fenced writes: %v %v %v", states, sent, err)
	}
	if err := st.write(ctx, t2, []*Status{s}, []Transition{{Key: "k", To: Firing}}); err != nil {
		t.Fatal(err)
	}
	if states, _, _ := st.load(ctx); states["k"] == nil || states["k"].State != Firing {
		t.Fatalf("b's write missing: %v", states)
	}
}

// TestRemovedRuleResolves: an instance whose rule is gone from the
// configuration (here, after a redeploy renamed it) resolves rather than
// firing, and being re-sent, forever.
func TestRemovedRuleResolves(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	steadyTraffic(App, 10, 50).write(t, pool)
	clock := timeseries.NewManualClock(time.Unix(burnNow, 0))
	h := newHook(t)
	rcv := Receiver{Name: "team", Kind: ToWebhook, URL: h.srv.URL}
	a := sloEvaluator(t, pool, clock, "a", rcv)
	ctx := context.Background()
	a.tick(ctx)
	idle(t, a)
	if err := a.Close(ctx); err != nil {
		t.Fatal(err)
	}
	b, err := New(Config{Pool: pool, Clock: clock, Instance: "b", Receivers: []Receiver{rcv},
		Rules: []Rule{{Name: "SLO2", Kind: Availability, Series: App, Windows: DefaultWindows()[:1]}}})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close(ctx)
	clock.Advance(time.Minute)
	b.tick(ctx)
	idle(t, b)
	if h.count("resolved", "SLO", "page") != 1 || h.count("resolved", "SLO", "ticket") != 1 || h.count("firing", "SLO2", "page") != 1 {
		t.Fatalf("notifications %+v: want the old rule's two resolved, the new one firing", h.bodies())
	}
}
