package alert

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestHealthRulesWhileRedisDown: the recorder's own health fires and
// notifies while Redis is unreachable, since its state is the
// instance's, in memory; it resolves once flushes succeed again.
func TestHealthRulesWhileRedisDown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	clock := timeseries.NewManualClock(time.Now())
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, Clock: clock})
	if err != nil {
		t.Fatal(err)
	}
	defer closeRecorder(rec)
	hits, _ := rec.Counter(App)
	h := newHook(t)
	e, err := New(Config{Pool: pool, Clock: clock, Instance: "web-1", Recorder: rec,
		Rules: []Rule{
			{Name: "RedisDown", Kind: Health, Check: RedisDown},
			{Name: "Stalled", Kind: Health, Check: FlushStalled, Quiet: Duration(10 * time.Second)},
		},
		Receivers:  []Receiver{{Name: "team", Kind: ToWebhook, URL: h.srv.URL}},
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	ctx := context.Background()
	rec.Record(hits)
	clock.Advance(time.Second)
	waitFor(t, "a flush", func() bool { return rec.Health().RedisUp })
	e.tick(ctx)
	if len(h.bodies()) != 0 {
		t.Fatal("health alerts with Redis up")
	}
	srv.Stop()
	for range 15 {
		rec.Record(hits)
		clock.Advance(time.Second)
	}
	waitFor(t, "a failed flush", func() bool { return !rec.Health().RedisUp })
	e.tick(ctx)
	idle(t, e)
	if h.count("firing", "RedisDown", "ticket") != 1 || h.count("firing", "Stalled", "ticket") != 1 {
		t.Fatalf("notifications %+v: want RedisDown and Stalled firing", h.bodies())
	}
	if got := h.bodies()[0].Alerts[0].Labels["instance"]; got != "web-1" {
		t.Errorf("instance label %q", got)
	}
	srv.Restart()
	flushAgain(t, clock, rec)
	e.tick(ctx)
	idle(t, e)
	if h.count("resolved", "RedisDown", "ticket") != 1 || h.count("resolved", "Stalled", "ticket") != 1 {
		e.mu.Lock()
		for _, s := range e.mem.local {
			t.Logf("%s: %s since %v, value %v", s.Rule, s.State, s.Since, s.Value)
		}
		e.mu.Unlock()
		t.Logf("recorder %+v, now %v, evaluator %+v", rec.Health(), clock.Now(), e.Health())
		t.Fatalf("notifications %+v: want both resolved", h.bodies())
	}
}

// lastMinuteBelow is a Detector over the series themselves: a series
// breaks when its last closed minute has fewer hits than min.
type lastMinuteBelow struct {
	pool *redis.Pool
	min  int64
}

func (d lastMinuteBelow) Detect(_ context.Context, series string, now time.Time) (Finding, error) {
	if series == "GET /broken" {
		return Finding{}, errors.New("no forecast for this series")
	}
	c := d.pool.Get()
	defer c.Close()
	bucket := now.Unix()/60*60 - 60
	n, err := redis.Int64(c.Do("HGET", "count:60:"+series, bucket))
	if err != nil && err != redis.ErrNil {
		return Finding{}, err
	}
	return Finding{Breached: n < d.min, Value: float64(n), Threshold: float64(d.min), What: "drop"}, nil
}

// TestAnomalyHook: an Anomaly rule asks Config.Detector per series; a
// Detector error holds the alert instead of resolving or firing it.
func TestAnomalyHook(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	tr := traffic{}
	tr.add("GET /ok", burnNow-60, 50)
	tr.add("GET /low", burnNow-60, 2)
	tr.add("GET /broken", burnNow-60, 2)
	tr.write(t, pool)
	rules := []Rule{{Name: "Drop", Kind: Anomaly, Series: EveryRoute}}
	if _, err := New(Config{Pool: pool, Rules: rules}); err == nil || !strings.Contains(err.Error(), "Detector") {
		t.Fatalf("an anomaly rule without a Detector: %v", err)
	}
	clock := timeseries.NewManualClock(time.Unix(burnNow, 0))
	e, err := New(Config{Pool: pool, Clock: clock, Instance: "a", Rules: rules, Detector: lastMinuteBelow{pool, 10}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	e.tick(context.Background())
	e.mu.Lock()
	defer e.mu.Unlock()
	for key, want := range map[string]State{
		"Drop\x00page\x00GET /ok": Inactive, "Drop\x00page\x00GET /low": Firing,
	} {
		if s := e.mem.states[key]; s == nil || s.State != want {
			t.Errorf("%q: %+v, want %s", key, s, want)
		}
	}
	if s := e.mem.states["Drop\x00page\x00GET /broken"]; s == nil || !s.Stale || s.State != "" {
		t.Errorf("the series the Detector failed on: %+v, want held (stale, no state)", s)
	}
	if s := e.mem.states["Drop\x00page\x00GET /low"]; s.Annotations["anomaly"] != "drop" || s.Value != 2 {
		t.Errorf("low: %+v", s)
	}
}

func TestNewRejects(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	for _, c := range []struct {
		cfg  Config
		want string
	}{
		{Config{}, "nil pool"},
		{Config{Pool: srv.Pool(), Rules: []Rule{{Name: "H", Kind: Health, Check: Dropped}}}, `"H": a health rule needs Config.Recorder`},
		{Config{Pool: srv.Pool(), Rules: []Rule{{Name: "T", Kind: Availability, Series: "hits", Target: 100}}}, `"T"`},
		{Config{Pool: srv.Pool(), Receivers: []Receiver{{Kind: ToWebhook, URL: "http://x"}}}, "no name"},
		{Config{Pool: srv.Pool(), Receivers: []Receiver{{Name: "p", Kind: "pager", URL: "http://x"}}}, `unknown kind "pager"`},
	} {
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.cfg.Rules, err, c.want)
		}
	}
}
