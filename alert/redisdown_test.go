package alert

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestRedisDownStaysVisible: with the default rules, Redis is stopped
// for two minutes of the injected clock, the evaluator ticking every
// second of it. The handler answers 200 at every tick, with the health
// alerts from memory and why the shared ones are missing;
// PulseRedisDown is pending from the first failed flush and firing once
// its For (1m) has passed, with its window and unit, its transitions
// listed; the webhook gets it. Once Redis is back it resolves, and the
// transitions say so too.
func TestRedisDownStaysVisible(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(time.Now())
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), Clock: clock, FlushTimeout: 500 * time.Millisecond, OnError: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer closeRecorder(rec)
	h := newHook(t)
	e, err := New(Config{Pool: srv.Pool(), Clock: clock, Instance: "web-1", Recorder: rec, Interval: time.Second,
		Receivers:  []Receiver{{Name: "team", Kind: ToWebhook, URL: h.srv.URL}},
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	ctx := context.Background()
	hits, _ := rec.Counter(App)
	rec.Record(hits)
	flushAgain(t, clock, rec)
	e.tick(ctx)

	srv.Stop()
	stopped := clock.Now()
	var firstFailed, firing time.Time
	for clock.Now().Sub(stopped) < 2*time.Minute {
		rec.Record(hits)
		clock.Advance(time.Second)
		if firstFailed.IsZero() {
			// The flush the clock's tick starts fails on its own goroutine.
			for deadline := time.Now().Add(2 * time.Second); rec.Health().RedisUp && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			if !rec.Health().RedisUp {
				firstFailed = clock.Now()
			}
		}
		e.tick(ctx)
		code, body := redisDownAnswer(t, e)
		if code != 200 || body.Unavailable == "" {
			t.Fatalf("%v into the outage: %d, unavailable %q; want 200 saying why the shared alerts are missing", clock.Now().Sub(stopped), code, body.Unavailable)
		}
		a, ok := healthAlert(body, "PulseRedisDown")
		if !ok {
			t.Fatalf("%v into the outage: no PulseRedisDown alert in %+v", clock.Now().Sub(stopped), body.Rules)
		}
		if a.State == Firing && firing.IsZero() {
			firing = clock.Now()
			if a.Window.Std() != time.Second || a.Unit != "s" || a.Value <= 0 {
				t.Errorf("firing PulseRedisDown measures %v %s over %v, want seconds since the last good flush over the 1s flush", a.Value, a.Unit, a.Window)
			}
			if !slices.ContainsFunc(body.Transitions, func(tr Transition) bool { return tr.Rule == "PulseRedisDown" && tr.To == Firing }) {
				t.Errorf("no transition to firing listed: %+v", body.Transitions)
			}
		}
	}
	if firstFailed.IsZero() || firing.IsZero() {
		t.Fatalf("first failed flush at %v, firing at %v: want both", firstFailed, firing)
	}
	t.Logf("PulseRedisDown fired %v after the first failed flush (For 1m)", firing.Sub(firstFailed))
	if d := firing.Sub(firstFailed); d < time.Minute || d > time.Minute+2*time.Second {
		t.Errorf("PulseRedisDown fired %v after the first failed flush, want at its For, 1m", d)
	}
	idle(t, e)
	if h.count("firing", "PulseRedisDown", "ticket") != 1 {
		t.Errorf("webhook: %d PulseRedisDown firings, want 1", h.count("firing", "PulseRedisDown", "ticket"))
	}

	srv.Restart()
	flushAgain(t, clock, rec)
	clock.Advance(time.Second)
	e.tick(ctx)
	idle(t, e)
	code, body := redisDownAnswer(t, e)
	a, _ := healthAlert(body, "PulseRedisDown")
	if code != 200 || body.Unavailable != "" || a.State != Resolved {
		t.Fatalf("Redis back: %d, unavailable %q, PulseRedisDown %s", code, body.Unavailable, a.State)
	}
	if !slices.ContainsFunc(body.Transitions, func(tr Transition) bool { return tr.Rule == "PulseRedisDown" && tr.To == Resolved }) {
		t.Errorf("no transition to resolved listed: %+v", body.Transitions)
	}
	if h.count("resolved", "PulseRedisDown", "ticket") != 1 {
		t.Errorf("webhook: %d PulseRedisDown resolves, want 1", h.count("resolved", "PulseRedisDown", "ticket"))
	}
}

func redisDownAnswer(t *testing.T, e *Evaluator) (int, handlerBody) {
	t.Helper()
	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	var body handlerBody
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("answer %d %q: %v", rec.Code, rec.Body, err)
	}
	return rec.Code, body
}

func healthAlert(body handlerBody, rule string) (Status, bool) {
	for _, r := range body.Rules {
		if r.Name == rule && len(r.Alerts) == 1 {
			return r.Alerts[0], true
		}
	}
	return Status{}, false
}
