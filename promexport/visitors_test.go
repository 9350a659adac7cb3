package promexport_test

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/promexport"
	"github.com/pulse-dev/pulse/timeseries"
)

// visitorsRecorder is a recorder at 1700000000 (the UTC day 1699920000)
// with series "hits", "GET /x", "quiet" and "a}b", whose server holds
// visitors as two app instances would have written them: today "hits"
// saw 0..199 on one and 100..299 on the other, 300 distinct, and "GET /x"
// five; yesterday "hits" saw 1000 others.
func visitorsRecorder(t *testing.T) (*redistest.Server, *timeseries.Recorder) {
	t.Helper()
	srv := redistest.Start(t)
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), Clock: timeseries.NewManualClock(time.Unix(1700000000, 0)),
		FlushInterval: time.Hour, OnError: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = rec.Close(ctx)
	})
	for _, name := range []string{"hits", "GET /x", "quiet", "a}b"} {
		c, err := rec.Counter(name)
		if err != nil {
			t.Fatal(err)
		}
		c.Inc()
	}
	schema := rec.Store().Schema()
	pfadd := func(name string, bucket int64, lo, hi int) {
		key, _ := schema.VisitorKey(86400, name, bucket)
		args := []any{key}
		for i := lo; i < hi; i++ {
			args = append(args, fmt.Sprint("visitor-", i))
		}
		srv.Do("PFADD", args...)
	}
	const today = 1699920000
	pfadd("hits", today, 0, 200)
	pfadd("hits", today, 100, 300)
	pfadd("GET /x", today, 0, 5)
	pfadd("hits", today-86400, 1000, 2000)
	return srv, rec
}

// visitorsOf is the pulse_unique_visitors gauge by series.
func visitorsOf(t *testing.T, fams map[string]*dto.MetricFamily) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	f := fams["pulse_unique_visitors"]
	if f == nil {
		return out
	}
	if f.GetType() != dto.MetricType_GAUGE {
		t.Errorf("pulse_unique_visitors is a %v, want a gauge", f.GetType())
	}
	for _, m := range f.Metric {
		out[m.Label[0].GetValue()] = m.Gauge.GetValue()
	}
	return out
}

func TestUniqueVisitorsGauge(t *testing.T) {
	srv, rec := visitorsRecorder(t)
	col := promexport.NewCollector(rec)
	got := visitorsOf(t, scrape(t, col))
	// HyperLogLog estimates: a few hundred are within a visitor or two.
	if len(got) != 2 || got["hits"] < 297 || got["hits"] > 303 || got["GET /x"] != 5 {
		t.Errorf("pulse_unique_visitors %v, want hits ≈ 300 (the union of both instances, today only) and GET /x 5, no others", got)
	}

	// Redis down: the scrape answers without the gauge.
	srv.Stop()
	defer srv.Restart()
	fams := scrape(t, col)
	if got := visitorsOf(t, fams); len(got) != 0 {
		t.Errorf("with Redis down: %v", got)
	}
	if fams["pulse_hits_total"] == nil {
		t.Error("with Redis down the other metrics went too")
	}
}

// promtool accepts the exposition with the gauge in it.
func TestPromtoolCheckVisitors(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found: install Debian's prometheus package (apt-get install prometheus), as scripts/setup.sh does")
	}
	_, rec := visitorsRecorder(t)
	text := scrapeText(t, promexport.NewCollector(rec))
	if !bytes.Contains(text, []byte(`pulse_unique_visitors{series="GET /x"} 5`)) {
		t.Fatalf("no gauge of GET /x in:\n%s", text)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s\nexposition:\n%s", err, out, text)
	}
}
