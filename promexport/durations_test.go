package promexport_test

import (
	"bytes"
	"context"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"

	"github.com/pulse-dev/pulse/internal/latency"
	"github.com/pulse-dev/pulse/internal/redistest"
	"github.com/pulse-dev/pulse/promexport"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// known are the durations the tests record: some well inside a bucket,
// some on or just around a bound, one below the mapping's Min and one
// above its Max. Their median is 24 ms, in the bucket (10 ms, 25 ms].
var known = []time.Duration{
	5 * time.Microsecond, 400 * time.Microsecond, 990 * time.Microsecond, time.Millisecond,
	1010 * time.Microsecond, 3 * time.Millisecond, 9900 * time.Microsecond, 10 * time.Millisecond,
	24 * time.Millisecond, 24 * time.Millisecond, 25 * time.Millisecond, 26 * time.Millisecond,
	60 * time.Millisecond, 99 * time.Millisecond, 300 * time.Millisecond, 1500 * time.Millisecond,
	4 * time.Second, 12 * time.Second, 20 * time.Minute,
}

// timedRecorder records known, n times over, in the series "api" as the
// middlewares do, and returns the recorder and the mapping it bins by.
func timedRecorder(t *testing.T, n int) (*timeseries.Recorder, *latency.Mapping) {
	t.Helper()
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(time.Unix(1700000000, 0))
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), Clock: clock, FlushInterval: time.Hour, OnError: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = rec.Close(ctx)
	})
	api, _ := rec.Counter("api")
	for range n {
		for _, d := range known {
			rec.RecordRequest(timeseries.Request{Duration: d, Timed: [timeseries.MaxTimed]*timeseries.Counter{api}})
		}
		clock.Advance(time.Second)
	}
	m, err := latency.NewMapping(latency.Config{}) // the recorder's: the defaults
	if err != nil {
		t.Fatal(err)
	}
	return rec, m
}

// scrapeText is the exposition of c in the text format.
func scrapeText(t *testing.T, c prometheus.Collector) []byte {
	t.Helper()
	srv := serve(t, c)
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("scrape: %d %s %v", resp.StatusCode, b, err)
	}
	return b
}

// serve serves c on a loopback test server, as /metrics would.
func serve(t *testing.T, c prometheus.Collector) *httptest.Server {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	t.Cleanup(srv.Close)
	return srv
}

// byRule is the count of ds a bucket of bound le holds by the documented
// rule: a duration counts in the first bucket at or above its bin's upper
// bound.
func byRule(m *latency.Mapping, ds []time.Duration, le float64) (n uint64) {
	for _, d := range ds {
		if m.Upper(m.Index(d)) <= le*1e9 {
			n++
		}
	}
	return n
}

// atMost is the exact count of ds at or below s seconds.
func atMost(ds []time.Duration, s float64) (n uint64) {
	for _, d := range ds {
		if d.Seconds() <= s {
			n++
		}
	}
	return n
}

// The histogram of known durations: each bucket holds exactly what the
// rule gives, which is the exact count at its bound less only durations
// within one bin width below it; the count is the requests and the hits
// total, the sum exact to the nanosecond.
func TestDurationHistogram(t *testing.T) {
	const rounds = 3
	rec, m := timedRecorder(t, rounds)
	var all []time.Duration
	for range rounds {
		all = append(all, known...)
	}
	fams := scrape(t, promexport.NewCollector(rec))
	f := fams["pulse_request_duration_seconds"]
	if f == nil || f.GetType() != dto.MetricType_HISTOGRAM || len(f.Metric) != 2 {
		t.Fatalf("pulse_request_duration_seconds: %v", f) // api and overflow
	}
	var h *dto.Histogram
	for _, mt := range f.Metric {
		if mt.Label[0].GetValue() == "api" {
			h = mt.Histogram
		} else if mt.Histogram.GetSampleCount() != 0 {
			t.Errorf("%s: %d durations", mt.Label[0].GetValue(), mt.Histogram.GetSampleCount())
		}
	}
	if h.GetSampleCount() != uint64(len(all)) {
		t.Errorf("_count %d, want %d", h.GetSampleCount(), len(all))
	}
	var sum time.Duration
	for _, d := range all {
		sum += d
	}
	if got := h.GetSampleSum(); math.Abs(got-sum.Seconds()) > 1e-9*sum.Seconds() {
		t.Errorf("_sum %v, want %v", got, sum.Seconds())
	}
	for _, tot := range rec.Totals() {
		if tot.Name == "api" && uint64(tot.Hits) != h.GetSampleCount() {
			t.Errorf("hits total %d, _count %d", tot.Hits, h.GetSampleCount())
		}
	}
	width := (1 + m.Accuracy()) / (1 - m.Accuracy()) // one bin, at most
	for _, b := range h.Bucket {
		le, got := b.GetUpperBound(), b.GetCumulativeCount()
		if want := byRule(m, all, le); got != want {
			t.Errorf("le=%g: %d, the rule gives %d", le, got, want)
		}
		exact := atMost(all, le)
		if got > exact || got < atMost(all, le/width) {
			t.Errorf("le=%g: %d, exact %d, more than a bin off", le, got, exact)
		}
		if got != exact {
			t.Logf("le=%g: %d, exact %d: durations within a bin of the bound counted above it", le, got, exact)
		}
	}
	if n := len(h.Bucket); n != 14 || !math.IsInf(h.Bucket[n-1].GetUpperBound(), 1) {
		t.Errorf("%d buckets, want 13 and +Inf", n)
	}
}

// promtool, Prometheus' own linter, accepts the exposition.
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatal("promtool not found: install Debian's prometheus package (apt-get install prometheus), as scripts/setup.sh does")
	}
	rec, _ := timedRecorder(t, 1)
	text := scrapeText(t, promexport.NewCollector(rec))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check metrics: %v\n%s\nexposition:\n%s", err, out, text)
	}
	t.Logf("promtool check metrics: ok %s", out)
	if !bytes.Contains(text, []byte(`pulse_request_duration_seconds_bucket{series="api",le="0.025"}`)) {
		t.Errorf("no le=0.025 bucket of api in:\n%s", text)
	}
}

// medianBucket is the bucket a median interpolated from h's buckets falls
// in: (lo, hi].
func medianBucket(h *dto.Histogram) (lo, hi float64) {
	rank := float64(h.GetSampleCount()) / 2
	for _, b := range h.Bucket {
		if float64(b.GetCumulativeCount()) >= rank {
			return lo, b.GetUpperBound()
		}
		lo = b.GetUpperBound()
	}
	return lo, math.Inf(1)
}
