package alert

import (
	"context"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/amtest"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// TestAlertmanager: Pulse posts to a real Alertmanager, re-sending the
// firing alerts often; Alertmanager's webhook gets one firing and one
// resolved notification per incident. The clock is the system's (so
// Alertmanager and Pulse agree on endsAt); the traffic is written
// relative to it in hashes that do not expire.
func TestAlertmanager(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	h := newHook(t)
	am := amtest.Start(t, h.srv.URL).URL()
	now := time.Now().Unix()
	tr := traffic{}
	for k := int64(1); k <= 4*24*60; k++ {
		tr.add(App, now-60*k, 100)
		if k <= 10 {
			tr.add(errorSeries(App), now-60*k, 50)
		}
	}
	tr.write(t, pool)

	e, err := New(Config{
		// A firing alert lapses in Alertmanager 4 re-sends after the last
		// (endsAt), then fires anew: 4 s leaves room for an evaluator a
		// loaded machine holds up for seconds.
		Pool: pool, Instance: "a", Interval: 100 * time.Millisecond, ResendEvery: time.Second,
		Rules:      []Rule{{Name: "SLO", Kind: Availability, Series: App}},
		Receivers:  []Receiver{{Name: "am", Kind: ToAlertmanager, URL: am}},
		MinBackoff: 10 * time.Millisecond, MaxBackoff: 100 * time.Millisecond,
		DashboardURL: "http://app.example/dashboard/",
	})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go e.Run(ctx)
	t.Cleanup(func() { e.Close(context.Background()) })

	waitFor(t, "firing notifications from Alertmanager", func() bool {
		return h.count("firing", "SLO", "page") >= 1 && h.count("firing", "SLO", "ticket") >= 1
	})
	// Several re-sends later, still one notification each.
	sent := e.Health().Receivers[0].Delivered
	waitFor(t, "re-sends", func() bool { return e.Health().Receivers[0].Delivered >= sent+3 })
	time.Sleep(2 * time.Second) // two group intervals
	if n, m := h.count("firing", "SLO", "page"), h.count("firing", "SLO", "ticket"); n != 1 || m != 1 {
		t.Fatalf("%d page and %d ticket firing notifications, want one each", n, m)
	}
	if n := h.count("resolved", "SLO", "page") + h.count("resolved", "SLO", "ticket"); n != 0 {
		t.Fatalf("%d resolved notifications while firing: the re-sends did not keep the alerts alive", n)
	}
	a := h.bodies()[0].Alerts[0]
	if a.GeneratorURL == "" || a.Labels["alertname"] != "SLO" || a.Annotations["burn_rate"] == "" {
		t.Errorf("alert as Alertmanager passed it on: %+v", a)
	}

	// A surge of good requests dilutes every window below its rate.
	good := traffic{}
	good.add(App, now, 2_000_000)
	c := pool.Get()
	for key, buckets := range good {
		for b, n := range buckets {
			c.Do("HINCRBY", key, b, n)
		}
	}
	c.Close()
	waitFor(t, "resolved notifications", func() bool {
		return h.count("resolved", "SLO", "page") >= 1 && h.count("resolved", "SLO", "ticket") >= 1
	})
	time.Sleep(2 * time.Second)
	if n, m := h.count("resolved", "SLO", "page"), h.count("resolved", "SLO", "ticket"); n != 1 || m != 1 {
		t.Fatalf("%d page and %d ticket resolved notifications, want one each", n, m)
	}
	if n, m := h.count("firing", "SLO", "page"), h.count("firing", "SLO", "ticket"); n != 1 || m != 1 {
		t.Fatalf("%d page and %d ticket firing notifications after resolving, want one each", n, m)
	}
}
