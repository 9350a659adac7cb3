package otelexport_test

import (
	"context"
	"maps"
	"math"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/otelexport"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// known are durations well inside a bin, on powers of two of a second
// (bin bounds at every scale), one below DurationMin's bin and one above
// DurationMax's.
var known = []time.Duration{
	5 * time.Microsecond, 400 * time.Microsecond, time.Millisecond, 3 * time.Millisecond,
	15625 * time.Microsecond, 24 * time.Millisecond, 24 * time.Millisecond, 125 * time.Millisecond,
	125*time.Millisecond + 1, 300 * time.Millisecond, time.Second, 4 * time.Second, 20 * time.Minute,
}

// never are series a recorder holds that never count anything in these
// tests, as the middlewares make them at start: the app's status classes
// no answer falls in, a route's, and the recorder's own overflow series.
var never = []string{"status:1xx", "status:3xx", "status:other", "GET /api status:5xx", "overflow"}

// recorder records known, rounds times over, in "api" and "GET /api" as
// the middlewares do, and counts classes of GET /api, of a route of a
// method outside the standard set and of the unmatched; the series of
// never it makes and leaves at zero.
func recorder(t *testing.T, srv *redistest.Server, rounds int) *timeseries.Recorder {
	t.Helper()
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), FlushInterval: time.Hour, OnError: func(error) {}})
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
	ok, _ := rec.Counter("GET /api status:2xx")
	failed, _ := rec.Counter("unmatched status:4xx")
	other, _ := rec.Counter("OTHER /api status:2xx")
	for _, name := range never {
		if _, err := rec.Counter(name); err != nil {
			t.Fatal(err)
		}
	}
	for range rounds {
		for _, d := range known {
			rec.RecordRequest(timeseries.Request{Duration: d, Timed: [timeseries.MaxTimed]*timeseries.Counter{api, route}})
			ok.Inc()
		}
		failed.Inc()
		other.Inc()
	}
	return rec
}

// wantBuckets are known's OpenTelemetry buckets at scale 3, worked out
// from the durations: bucket i holds (2^(i/8), 2^((i+1)/8)] seconds, the
// zero bucket those at or below threshold, the one above DurationMax
// goes to the bucket of the longest.
func wantBuckets(rounds int, threshold float64) (zero uint64, buckets map[int]uint64) {
	buckets = map[int]uint64{}
	for _, d := range known {
		s := d.Seconds()
		if s <= threshold {
			zero += uint64(rounds)
			continue
		}
		buckets[int(math.Ceil(math.Log2(s)*8))-1] += uint64(rounds)
	}
	return zero, buckets
}

func collect(t *testing.T, p *otelexport.Producer) map[string]metricdata.Metrics {
	t.Helper()
	reader := metric.NewManualReader(metric.WithProducer(p))
	provider := metric.NewMeterProvider(metric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := map[string]metricdata.Metrics{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// checkPoint compares a histogram point with known, rounds times over.
func checkPoint(t *testing.T, p metricdata.ExponentialHistogramDataPoint[float64], rounds int) {
	t.Helper()
	if p.Scale != 3 || p.Count != uint64(rounds*len(known)) {
		t.Errorf("scale %d, count %d; want 3, %d", p.Scale, p.Count, rounds*len(known))
	}
	var sum time.Duration
	for _, d := range known {
		sum += d
	}
	if want := float64(rounds) * sum.Seconds(); math.Abs(p.Sum-want) > 1e-9*want {
		t.Errorf("sum %g, want %g", p.Sum, want)
	}
	if lo, _ := p.Min.Value(); lo != known[0].Seconds() {
		t.Errorf("min %g, want %g", lo, known[0].Seconds())
	}
	if hi, _ := p.Max.Value(); hi != known[len(known)-1].Seconds() {
		t.Errorf("max %g, want %g", hi, known[len(known)-1].Seconds())
	}
	zero, want := wantBuckets(rounds, p.ZeroThreshold)
	if p.ZeroCount != zero || p.ZeroThreshold <= 5e-6 || p.ZeroThreshold >= 10e-6 {
		t.Errorf("zero bucket %d at threshold %g, want %d below DurationMin", p.ZeroCount, p.ZeroThreshold, zero)
	}
	got := map[int]uint64{}
	for k, n := range p.PositiveBucket.Counts {
		if n > 0 {
			got[int(p.PositiveBucket.Offset)+k] = n
		}
	}
	if len(got) != len(want) {
		t.Errorf("buckets %v, want %v", got, want)
	}
	for i, n := range want {
		if got[i] != n {
			t.Errorf("bucket %d (%g s, %g s]: %d, want %d", i, math.Exp2(float64(i)/8), math.Exp2(float64(i+1)/8), got[i], n)
		}
	}
}

// A ManualReader reads the recorder's durations bucket for bucket, the
// route under the conventions' name and attributes, and the requests by
// class.
func TestManualReader(t *testing.T) {
	const rounds = 3
	srv := redistest.Start(t)
	ms := collect(t, otelexport.NewProducer(recorder(t, srv, rounds)))
	route, ok := ms["http.server.request.duration"].Data.(metricdata.ExponentialHistogram[float64])
	if !ok || len(route.DataPoints) != 1 || route.Temporality != metricdata.CumulativeTemporality {
		t.Fatalf("http.server.request.duration: %+v", ms["http.server.request.duration"])
	}
	p := route.DataPoints[0]
	if m, _ := p.Attributes.Value("http.request.method"); m.AsString() != "GET" {
		t.Errorf("attributes %v", p.Attributes.ToSlice())
	}
	if r, _ := p.Attributes.Value("http.route"); r.AsString() != "/api" {
		t.Errorf("attributes %v", p.Attributes.ToSlice())
	}
	checkPoint(t, p, rounds)
	other := ms["pulse.series.duration"].Data.(metricdata.ExponentialHistogram[float64])
	if len(other.DataPoints) != 1 {
		t.Fatalf("pulse.series.duration: %+v", other)
	}
	checkPoint(t, other.DataPoints[0], rounds)

	reqs := ms["pulse.http.server.requests"].Data.(metricdata.Sum[int64])
	key := func(kvs ...attribute.KeyValue) attribute.Distinct {
		s := attribute.NewSet(kvs...)
		return s.Equivalent()
	}
	want := map[attribute.Distinct]int64{
		key(attribute.String("http.request.method", "GET"), attribute.String("http.route", "/api"),
			otelexport.StatusClassKey.String("2xx")): int64(rounds * len(known)),
		key(attribute.String("http.request.method", "_OTHER"), attribute.String("http.route", "unmatched"),
			otelexport.StatusClassKey.String("4xx")): rounds,
		key(attribute.String("http.request.method", "_OTHER"), attribute.String("http.route", "/api"),
			otelexport.StatusClassKey.String("2xx")): rounds,
	}
	if len(reqs.DataPoints) != len(want) || !reqs.IsMonotonic {
		t.Errorf("pulse.http.server.requests: %+v", reqs)
	}
	for _, dp := range reqs.DataPoints {
		if dp.Value != want[dp.Attributes.Equivalent()] {
			t.Errorf("%v: %d, want %d", dp.Attributes.ToSlice(), dp.Value, want[dp.Attributes.Equivalent()])
		}
	}
	hits := ms["pulse.series.hits"].Data.(metricdata.Sum[int64])
	counted := map[string]int64{}
	for _, dp := range hits.DataPoints {
		name, _ := dp.Attributes.Value(otelexport.SeriesKey)
		counted[name.AsString()] = dp.Value
	}
	wantHits := map[string]int64{"api": int64(rounds * len(known)), "GET /api": int64(rounds * len(known)),
		"GET /api status:2xx": int64(rounds * len(known)), "unmatched status:4xx": rounds, "OTHER /api status:2xx": rounds}
	if !maps.Equal(counted, wantHits) {
		t.Errorf("pulse.series.hits %v, want %v: no series that never counted", counted, wantHits)
	}
}
