package alert

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestHandler(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	steadyTraffic(App, 10, 50).write(t, pool)
	clock := timeseries.NewManualClock(time.Unix(burnNow, 0))
	e, err := New(Config{Pool: pool, Clock: clock, Instance: "a",
		Rules: []Rule{{Name: "SLO", Kind: Availability, Series: App, For: Duration(time.Minute)}, {Name: "Absent", Kind: Absence, Series: App}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	e.tick(context.Background())
	clock.Advance(time.Minute)
	e.tick(context.Background())
	// Another instance's handler serves the same state, from Redis.
	other, err := New(Config{Pool: pool, Clock: clock, Instance: "b",
		Rules: []Rule{{Name: "SLO", Kind: Availability, Series: App, For: Duration(time.Minute)}, {Name: "Absent", Kind: Absence, Series: App}}})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close(context.Background())

	get := func(h http.Handler, method, target string) (*httptest.ResponseRecorder, map[string]any) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(method, target, nil))
		var body map[string]any
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
			t.Fatalf("%s %s: not JSON: %q", method, target, rec.Body)
		}
		return rec, body
	}
	rec, _ := get(other.Handler(), "GET", "/?transitions=5")
	var body handlerBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 200 {
		t.Fatalf("%d %v", rec.Code, err)
	}
	if len(body.Rules) != 2 || body.Rules[0].Name != "SLO" || len(body.Rules[0].Alerts) != 2 {
		t.Fatalf("rules %+v", body.Rules)
	}
	page := body.Rules[0].Alerts[0]
	if page.State != Firing || page.Threshold != 14.4 || page.Value < 80 || !page.Since.Equal(time.Unix(burnNow+60, 0)) || page.Labels["severity"] != "page" {
		t.Errorf("page alert %+v", page)
	}
	// pending -> firing for both severities, newest first
	if len(body.Transitions) != 4 || body.Transitions[0].To != Firing || body.Transitions[3].To != Pending {
		t.Errorf("transitions %+v", body.Transitions)
	}
	if body.Health.Leader || body.Health.Instance != "b" {
		t.Errorf("health %+v", body.Health)
	}

	_, firing := get(e.Handler(), "GET", "/?state=firing&transitions=0")
	rules := firing["rules"].([]any)
	if n := len(rules[1].(map[string]any)["alerts"].([]any)); n != 0 {
		t.Errorf("absence alerts listed under state=firing: %d", n)
	}
	if n := len(firing["transitions"].([]any)); n != 0 {
		t.Errorf("%d transitions with transitions=0", n)
	}

	for _, c := range []struct {
		method, target string
		code           int
	}{
		{"GET", "/?transitions=-1", 400},
		{"GET", "/?transitions=1001", 400},
		{"GET", "/?transitions=ten", 400},
		{"GET", "/?transitions=99999999999999999999", 400},
		{"GET", "/?state=burning", 400},
		{"GET", "/?nope=1", 400},
		{"POST", "/", 405},
		{"DELETE", "/?state=firing", 405},
	} {
		rec, body := get(e.Handler(), c.method, c.target)
		if rec.Code != c.code || body["error"] == nil {
			t.Errorf("%s %s: %d %v, want %d with an error", c.method, c.target, rec.Code, body, c.code)
		}
	}

	srv.Stop()
	rec, body2 := get(e.Handler(), "GET", "/")
	if rec.Code != http.StatusOK || body2["unavailable"] == nil || body2["rules"] == nil {
		t.Errorf("Redis down: %d %v, want 200 with the rules and why the shared alerts are missing", rec.Code, body2)
	}
}

// An answer shows the states and the transitions as one write left
// them, while another instance writes: the newest transition's state is
// the state listed.
func TestHandlerSnapshot(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(time.Unix(burnNow, 0))
	e, err := New(Config{Pool: srv.Pool(), Clock: clock, Instance: "reader",
		Rules: []Rule{{Name: "SLO", Kind: Availability, Series: App}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	ctx, cancel := context.WithCancel(context.Background())
	token, err := e.st.acquire(ctx, "writer", time.Minute)
	if err != nil || token == 0 {
		t.Fatalf("lease: %d %v", token, err)
	}
	labels := map[string]string{"alertname": "SLO"}
	written := make(chan error, 1)
	go func() {
		from := Inactive
		for i := 0; ctx.Err() == nil; i++ {
			to := []State{Pending, Firing, Resolved}[i%3]
			st := &Status{Key: "SLO", Rule: "SLO", Labels: labels, State: to}
			if err := e.st.write(ctx, token, []*Status{st}, []Transition{{Rule: "SLO", Labels: labels, From: from, To: to}}); err != nil && ctx.Err() == nil {
				written <- err
				return
			}
			from = to
		}
		written <- nil
	}()
	for i := range 300 {
		rec := httptest.NewRecorder()
		e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/?transitions=1", nil))
		var body handlerBody
		if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil || rec.Code != 200 {
			t.Fatalf("answer %d: %d %s", i, rec.Code, rec.Body)
		}
		if len(body.Transitions) == 0 {
			continue // before the first write
		}
		if alerts := body.Rules[0].Alerts; len(alerts) != 1 || alerts[0].State != body.Transitions[0].To {
			t.Fatalf("answer %d lists %+v, its newest transition went to %s", i, alerts, body.Transitions[0].To)
		}
	}
	cancel()
	if err := <-written; err != nil {
		t.Fatal(err)
	}
}
