package otelexport_test

import (
	"context"
	"io"
	"maps"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	collector "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	metricspb "go.opentelemetry.io/proto/otlp/metrics/v1"
	"google.golang.org/protobuf/proto"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/otelexport"
)

// receiver is an OTLP/HTTP metrics endpoint that decodes what it is sent.
// While down it answers 503 and keeps nothing; while slow it answers
// after delay, and keeps nothing if the exporter gave up meanwhile.
type receiver struct {
	mu       sync.Mutex
	down     bool
	delay    time.Duration
	requests []*collector.ExportMetricsServiceRequest
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil || req.URL.Path != "/v1/metrics" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	r.mu.Lock()
	delay := r.delay
	r.mu.Unlock()
	select {
	case <-time.After(delay):
	case <-req.Context().Done():
		return // the exporter hung up
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.down {
		http.Error(w, "down", http.StatusServiceUnavailable)
		return
	}
	var m collector.ExportMetricsServiceRequest
	if err := proto.Unmarshal(body, &m); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.requests = append(r.requests, &m)
	w.Header().Set("Content-Type", "application/x-protobuf")
	out, _ := proto.Marshal(&collector.ExportMetricsServiceResponse{})
	_, _ = w.Write(out)
}

func (r *receiver) set(down bool, delay time.Duration) {
	r.mu.Lock()
	r.down, r.delay = down, delay
	r.mu.Unlock()
}

// newest is the metric name as the newest export that had it sent it.
func (r *receiver) newest(t *testing.T, name string) *metricspb.Metric {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.requests) - 1; i >= 0; i-- {
		for _, rm := range r.requests[i].ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Name == name {
						return m
					}
				}
			}
		}
	}
	t.Fatalf("the receiver got no %s", name)
	return nil
}

// sums are the points of the newest sum of the metric name, by their
// attributes ("key=value" joined by commas, in the order sent).
func (r *receiver) sums(t *testing.T, name string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, dp := range r.newest(t, name).GetSum().GetDataPoints() {
		var kv []string
		for _, a := range dp.Attributes {
			kv = append(kv, a.Key+"="+a.Value.GetStringValue())
		}
		out[strings.Join(kv, ",")] = dp.GetAsInt()
	}
	return out
}

// last is the first point of the newest histogram of the metric name.
func (r *receiver) last(t *testing.T, name string) *metricspb.ExponentialHistogramDataPoint {
	t.Helper()
	points := r.newest(t, name).GetExponentialHistogram().GetDataPoints()
	if len(points) == 0 {
		t.Fatalf("%s has no point", name)
	}
	return points[0]
}

// The SDK's own OTLP/HTTP exporter sends the producer's metrics; the
// receiver decodes the protobuf and finds the recorder's bins bucket for
// bucket, the unmatched requests and a method outside the standard set
// under the conventions' "_OTHER", and no point for a series that never
// counted. While the receiver is down, or slower than the exporter's
// timeout, the export fails and nothing is lost: the next export carries
// every count, cumulative.
func TestOTLPExport(t *testing.T) {
	const rounds = 2
	srv := redistest.Start(t)
	rec := recorder(t, srv, rounds)
	recv := &receiver{}
	endpoint := httptest.NewServer(recv)
	defer endpoint.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exp, err := otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(endpoint.URL+"/v1/metrics"),
		otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}), otlpmetrichttp.WithTimeout(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	reader := metric.NewPeriodicReader(exp, metric.WithProducer(otelexport.NewProducer(rec)), metric.WithInterval(time.Hour))
	provider := metric.NewMeterProvider(metric.WithReader(reader))
	defer func() { _ = provider.Shutdown(context.Background()) }()

	states := []struct {
		name    string
		down    bool
		delay   time.Duration
		wantErr bool
	}{
		{"down (503)", true, 0, true},
		{"slower than the exporter's timeout", false, 2 * time.Second, true},
		{"up", false, 0, false},
	}
	for _, st := range states {
		recv.set(st.down, st.delay)
		err := provider.ForceFlush(ctx)
		if (err != nil) != st.wantErr {
			t.Errorf("receiver %s: export error %v, want an error: %v", st.name, err, st.wantErr)
		}
		t.Logf("receiver %s: %v", st.name, err)
	}
	got := recv.last(t, "http.server.request.duration")
	checkPoint(t, fromProto(got), rounds)
	n := int64(rounds * len(known))
	want := map[string]int64{
		"http.request.method=GET,http.route=/api,pulse.http.status_class=2xx":         n,
		"http.request.method=_OTHER,http.route=/api,pulse.http.status_class=2xx":      rounds,
		"http.request.method=_OTHER,http.route=unmatched,pulse.http.status_class=4xx": rounds,
	}
	if sums := recv.sums(t, "pulse.http.server.requests"); !maps.Equal(sums, want) {
		t.Errorf("pulse.http.server.requests received %v, want %v", sums, want)
	}
	hits := recv.sums(t, "pulse.series.hits")
	for _, name := range never {
		if v, ok := hits["pulse.series="+name]; ok {
			t.Errorf("pulse.series.hits has %s = %d, a series that never counted", name, v)
		}
	}
	if len(hits) != 5 {
		t.Errorf("pulse.series.hits received %v, want the 5 series that counted", hits)
	}
}

// fromProto is a decoded point in the SDK's form, for checkPoint.
func fromProto(p *metricspb.ExponentialHistogramDataPoint) metricdata.ExponentialHistogramDataPoint[float64] {
	return metricdata.ExponentialHistogramDataPoint[float64]{
		Count: p.Count, Sum: p.GetSum(), Scale: p.Scale, ZeroCount: p.ZeroCount, ZeroThreshold: p.ZeroThreshold,
		Min: metricdata.NewExtrema(p.GetMin()), Max: metricdata.NewExtrema(p.GetMax()),
		PositiveBucket: metricdata.ExponentialBucket{Offset: p.GetPositive().GetOffset(), Counts: p.GetPositive().GetBucketCounts()},
	}
}
