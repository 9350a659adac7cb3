package fromstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// hourly is three weeks of a series' 1 h buckets at its rate, ending at
// end's hour.
func hourly(end time.Time) *forecast.Series {
	start := end.Truncate(time.Hour).Add(-21 * 24 * time.Hour)
	s := &forecast.Series{Name: "GET /", Step: time.Hour, Start: start}
	for t := start; t.Before(end.Truncate(time.Hour)); t = t.Add(time.Hour) {
		s.Values = append(s.Values, float64(int(60*rate(t.Add(30*time.Minute)))))
	}
	return s
}

// A series' Week is written beside its buckets as one key of at most
// 2 KB, read back equal by another instance, written again only when a
// new hour closes, and an unreadable key begins a new Week.
func TestWeeksInRedis(t *testing.T) {
	srv := redistest.Start(t)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{Prefix: "app:"}, timeseries.SystemClock{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ws := fromstore.Weeks{Store: store}
	h := hourly(time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC))
	weeks, err := ws.Load(ctx, []string{"GET /"})
	if err != nil || weeks["GET /"].Ready() {
		t.Fatalf("a new series: %v, %+v", err, weeks)
	}
	n, err := ws.Update(ctx, weeks, map[string]*forecast.Series{"GET /": h})
	if err != nil || n != 1 || !weeks["GET /"].Ready() {
		t.Fatalf("update: %d written, %v; ready %v", n, err, weeks["GET /"].Ready())
	}
	key := fromstore.WeekKey(store.Schema(), "GET /")
	size, _ := redis.Int(srv.Do("STRLEN", key), nil)
	ttl, _ := redis.Int64(srv.Do("PTTL", key), nil)
	t.Logf("%s: %d bytes, expires in %v", key, size, time.Duration(ttl)*time.Millisecond)
	if size == 0 || size > 2048 || ttl <= 0 {
		t.Errorf("%s: %d bytes, TTL %d ms; want at most 2 KB and an expiry", key, size, ttl)
	}
	other, err := (fromstore.Weeks{Store: store}).Load(ctx, []string{"GET /"})
	if err != nil || *other["GET /"] != *weeks["GET /"] {
		t.Fatalf("read back: %v, differs: %v", err, *other["GET /"] != *weeks["GET /"])
	}
	if n, err := ws.Update(ctx, other, map[string]*forecast.Series{"GET /": h}); err != nil || n != 0 {
		t.Errorf("the same hours again: %d written, %v; want none", n, err)
	}
	srv.Do("SET", key, "not a week")
	again, err := ws.Load(ctx, []string{"GET /"})
	if err != nil || *again["GET /"] != (forecast.Week{}) {
		t.Errorf("an unreadable key: %v, %+v; want an empty week", err, again["GET /"])
	}
	srv.Stop()
	if _, err := ws.Load(ctx, []string{"GET /"}); err == nil {
		t.Error("Redis down: no error")
	}
}
