package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestReceiverDown: the receiver answers 503 for a while; the firing
// notification reaches it once after it recovers, and evaluations go on
// meanwhile.
func TestReceiverDown(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	steadyTraffic(App, 10, 50).write(t, pool)
	clock := timeseries.NewManualClock(time.Unix(burnNow, 0))
	h := newHook(t)
	h.mu.Lock()
	h.fail = true
	h.mu.Unlock()
	e := sloEvaluator(t, pool, clock, "a", Receiver{Name: "team", Kind: ToWebhook, URL: h.srv.URL})
	ctx := context.Background()
	for range 5 {
		e.tick(ctx) // never waits for the receiver
		clock.Advance(30 * time.Second)
	}
	waitFor(t, "retries", func() bool { return e.Health().Receivers[0].Retries >= 5 })
	if got := len(h.bodies()); got != 0 {
		t.Fatalf("%d notifications taken while failing", got)
	}
	if e.Health().Evaluations != 5 {
		t.Fatalf("%d evaluations, want 5", e.Health().Evaluations)
	}
	h.mu.Lock()
	h.fail = false
	h.mu.Unlock()
	idle(t, e)
	for range 3 {
		e.tick(ctx)
		clock.Advance(30 * time.Second)
	}
	idle(t, e)
	if n, m := h.count("firing", "SLO", "page"), h.count("firing", "SLO", "ticket"); n != 1 || m != 1 {
		t.Fatalf("%d page and %d ticket firing notifications after recovery, want one each", n, m)
	}
	if u := e.Health().Undelivered; u != 0 {
		t.Errorf("%d undelivered", u)
	}
}

// TestQueueBoundAndGiveUp: a receiver that never answers fills its
// queue; the surplus and the messages given up on are counted, and
// evaluation is not held up.
func TestQueueBoundAndGiveUp(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	tr := traffic{}
	for i := range 8 {
		for k := int64(1); k <= 60; k++ {
			tr.add("GET /r"+string(rune('a'+i)), burnNow-60*k, 100)
			tr.add("GET /r"+string(rune('a'+i))+" status:5xx", burnNow-60*k, 100)
		}
	}
	tr.write(t, pool)
	// A listener that accepts and never answers: each attempt times out.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	e, err := New(Config{
		Pool: pool, Clock: timeseries.NewManualClock(time.Unix(burnNow, 0)), Instance: "a",
		Rules:     []Rule{{Name: "RouteSLO", Kind: Availability, Series: EveryRoute}},
		Receivers: []Receiver{{Name: "slow", Kind: ToWebhook, URL: "http://" + ln.Addr().String() + "/hook", Timeout: 50 * time.Millisecond}},
		QueueSize: 2, MinBackoff: 10 * time.Millisecond, MaxBackoff: 10 * time.Millisecond, GiveUpAfter: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	start := time.Now()
	e.tick(context.Background())
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("an evaluation took %v behind a receiver that never answers", d)
	}
	// 8 routes × 2 severities firing, a queue of 2 (plus one in hand).
	waitFor(t, "the queue to be given up", func() bool {
		rh := e.Health().Receivers[0]
		return rh.Undelivered >= 16 && rh.Queued == 0
	})
	if h := e.Health(); h.Undelivered < 16 || !strings.Contains(h.Receivers[0].LastError, `receiver "slow"`) {
		t.Errorf("health %+v", h)
	}
}

// TestSecretsStayHidden: a token in receiver URLs appears in no log line,
// error, health or Handler answer, whatever the receiver does.
func TestSecretsStayHidden(t *testing.T) {
	t.Parallel()
	const token = "s3cr3t-T0KEN"
	srv := redistest.Start(t)
	pool := srv.Pool()
	steadyTraffic(App, 10, 50).write(t, pool)
	refused := httptest.NewServer(nil) // 404 for every path: refused for good
	defer refused.Close()
	down, _ := net.Listen("tcp", "127.0.0.1:0")
	downAddr := down.Addr().String()
	down.Close() // connection refused
	var logs bytes.Buffer
	e, err := New(Config{
		Pool: pool, Clock: timeseries.NewManualClock(time.Unix(burnNow, 0)), Instance: "a",
		Rules: []Rule{{Name: "SLO", Kind: Availability, Series: App}},
		Receivers: []Receiver{
			{Name: "refused", Kind: ToWebhook, URL: refused.URL + "/hooks/" + token + "?token=" + token},
			{Name: "down", Kind: ToSlack, URL: "http://user:" + token + "@" + downAddr + "/services/" + token},
			{Name: "am", Kind: ToAlertmanager, URL: "http://" + downAddr + "/" + token},
		},
		MinBackoff: 5 * time.Millisecond, MaxBackoff: 5 * time.Millisecond, GiveUpAfter: 50 * time.Millisecond,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	e.tick(context.Background())
	waitFor(t, "every receiver to fail", func() bool {
		for _, r := range e.Health().Receivers {
			if r.Undelivered == 0 {
				return false
			}
		}
		return true
	})
	rec := httptest.NewRecorder()
	e.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/?transitions=10", nil))
	hj, _ := json.Marshal(e.Health())
	// The outbox goes on retrying and logging: closed, it has written its
	// last line, and the log is the test's to read.
	if err := e.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	for what, text := range map[string]string{"logs": logs.String(), "health": string(hj), "handler": rec.Body.String()} {
		if strings.Contains(text, token) {
			t.Errorf("the token is in the %s: %s", what, text)
		}
	}
	if !strings.Contains(string(hj), "HTTP 404") || !strings.Contains(string(hj), "connection refused") {
		t.Errorf("health should still say what went wrong: %s", hj)
	}
	// A bad URL is an error at New that names the receiver, not the URL.
	_, err = New(Config{Pool: pool, Receivers: []Receiver{{Name: "bad", Kind: ToWebhook, URL: "ftp://x/" + token}}})
	if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), `"bad"`) {
		t.Errorf("bad URL: %v", err)
	}
}
