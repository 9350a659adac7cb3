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

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
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

// timedRecorder records known, n times over, in the series "api" and "GET /api" as the
// middlewares do, and returns the recorder and the mapping it bins by.
func timedRecorder(t *testing.T, n int) (*timeseries.Recorder, *timeseries.DurationMapping) {
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
	route, _ := rec.Counter("GET /api")
	for range n {
		for _, d := range known {
			rec.RecordRequest(timeseries.Request{Duration: d, Timed: [timeseries.MaxTimed]*timeseries.Counter{api, route}})
		}
		clock.Advance(time.Second)
	}
	m, err := timeseries.NewDurationMapping(0, 0, 0) // the recorder's: the defaults
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

// atMost is the exact count of ds at or below s seconds.
func atMost(ds []time.Duration, s float64) (n uint64) {
	for _, d := range ds {
		if d.Seconds() <= s {
			n++
		}
	}
	return n
}

// gather is c's families as a protobuf scrape has them, native
// histograms included.
func gather(t *testing.T, c prometheus.Collector) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*dto.MetricFamily{}
	for _, f := range fams {
		out[f.GetName()] = f
	}
	return out
}

// histogramOf is the histogram of the metric of f whose first label is
// value.
func histogramOf(t *testing.T, f *dto.MetricFamily, value string) *dto.Histogram {
	t.Helper()
	if f == nil || f.GetType() != dto.MetricType_HISTOGRAM {
		t.Fatalf("not a histogram family: %v", f)
	}
	for _, m := range f.Metric {
		if m.Label[0].GetValue() == value {
			return m.Histogram
		}
	}
	t.Fatalf("%s has no metric %q", f.GetName(), value)
	return nil
}

// nativeCounts decodes a native histogram's positive spans and deltas
// into counts by bucket index.
func nativeCounts(h *dto.Histogram) map[int]uint64 {
	out := map[int]uint64{}
	i, k := 0, 0
	var count int64
	for j, sp := range h.PositiveSpan {
		if j == 0 {
			i = int(sp.GetOffset())
		} else {
			i += int(sp.GetOffset())
		}
		for range sp.GetLength() {
			count += h.PositiveDelta[k]
			out[i] = uint64(count)
			i, k = i+1, k+1
		}
	}
	return out
}

// The classic buckets of the known durations hold exactly the durations
// at or below each bound, the count is the requests and the hits total,
// and the sum is exact to the nanosecond.
func TestDurationHistogram(t *testing.T) {
	const rounds = 3
	rec, _ := timedRecorder(t, rounds)
	var all []time.Duration
	for range rounds {
		all = append(all, known...)
	}
	h := histogramOf(t, scrape(t, promexport.NewCollector(rec))["pulse_request_duration_seconds"], "api")
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
	for k, b := range h.Bucket {
		le, got := b.GetUpperBound(), b.GetCumulativeCount()
		if k < len(h.Bucket)-1 && le != math.Ldexp(1, k-10) {
			t.Errorf("bucket %d: le=%g, want 2^%d", k, le, k-10)
		}
		if exact := atMost(all, le); got != exact {
			t.Errorf("le=%g: %d, exact %d", le, got, exact)
		}
	}
	if n := len(h.Bucket); n != 16 || !math.IsInf(h.Bucket[n-1].GetUpperBound(), 1) {
		t.Errorf("%d buckets, want 15 and +Inf", n)
	}
}

// The native histogram is the recorder's bins bucket for bucket: its
// schema is the scale, its zero bucket the durations at or below the
// threshold, and bucket i counts the durations in (2^((i-1)/8),
// 2^(i/8)] seconds, worked out here from the durations themselves; the
// one above DurationMax is in the bucket of the longest.
func TestNativeHistogram(t *testing.T) {
	const rounds = 3
	rec, m := timedRecorder(t, rounds)
	fams := gather(t, promexport.NewCollector(rec))
	h := histogramOf(t, fams["pulse_request_duration_seconds"], "api")
	if r := histogramOf(t, fams["pulse_http_request_duration_seconds"], "GET"); r.String() != h.String() {
		t.Errorf("route GET /api:\n%v\nwant the same as api's:\n%v", r, h)
	}
	if h.GetSchema() != 3 || h.GetZeroThreshold() != m.ZeroThreshold()/1e9 {
		t.Fatalf("schema %d, zero threshold %g; want 3 and %g", h.GetSchema(), h.GetZeroThreshold(), m.ZeroThreshold()/1e9)
	}
	want := map[int]uint64{}
	var zero uint64
	for _, d := range known {
		s := d.Seconds()
		if s <= h.GetZeroThreshold() {
			zero += rounds
			continue
		}
		want[int(math.Ceil(math.Log2(s)*8))] += rounds
	}
	if h.GetZeroCount() != zero {
		t.Errorf("zero bucket %d, want %d", h.GetZeroCount(), zero)
	}
	got := nativeCounts(h)
	if len(got) != len(want) {
		t.Errorf("%d buckets %v, want %d %v", len(got), got, len(want), want)
	}
	for i, n := range want {
		if got[i] != n {
			t.Errorf("bucket %d (%g s, %g s]: %d, want %d", i, math.Exp2(float64(i-1)/8), math.Exp2(float64(i)/8), got[i], n)
		}
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
	if !bytes.Contains(text, []byte(`pulse_request_duration_seconds_bucket{series="api",le="0.03125"}`)) {
		t.Errorf("no le=0.03125 bucket of api in:\n%s", text)
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
