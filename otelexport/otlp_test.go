package otelexport_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
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
// While down it answers 503 and keeps nothing.
type receiver struct {
	mu       sync.Mutex
	down     bool
	requests []*collector.ExportMetricsServiceRequest
}

func (r *receiver) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil || req.URL.Path != "/v1/metrics" || req.Header.Get("Content-Type") != "application/x-protobuf" {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
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

func (r *receiver) setDown(down bool) {
	r.mu.Lock()
	r.down = down
	r.mu.Unlock()
}

// last is the newest decoded point of the metric name.
func (r *receiver) last(t *testing.T, name string) *metricspb.ExponentialHistogramDataPoint {
	t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.requests) - 1; i >= 0; i-- {
		for _, rm := range r.requests[i].ResourceMetrics {
			for _, sm := range rm.ScopeMetrics {
				for _, m := range sm.Metrics {
					if m.Name == name && len(m.GetExponentialHistogram().GetDataPoints()) > 0 {
						return m.GetExponentialHistogram().DataPoints[0]
					}
				}
			}
		}
	}
	t.Fatalf("the receiver got no %s", name)
	return nil
}

// The SDK's own OTLP/HTTP exporter sends the producer's histogram; the
// receiver decodes the protobuf and finds the recorder's bins bucket for
// bucket. While the receiver is down the export fails and nothing is
// lost: the next export carries every count, cumulative.
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
		otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}))
	if err != nil {
		t.Fatal(err)
	}
	reader := metric.NewPeriodicReader(exp, metric.WithProducer(otelexport.NewProducer(rec)), metric.WithInterval(time.Hour))
	provider := metric.NewMeterProvider(metric.WithReader(reader))
	defer func() { _ = provider.Shutdown(context.Background()) }()

	recv.setDown(true)
	if err := provider.ForceFlush(ctx); err == nil {
		t.Error("an export to a receiver that answers 503 reported no error")
	}
	recv.setDown(false)
	if err := provider.ForceFlush(ctx); err != nil {
		t.Fatal(err)
	}
	got := recv.last(t, "http.server.request.duration")
	checkPoint(t, fromProto(got), rounds)
}

// fromProto is a decoded point in the SDK's form, for checkPoint.
func fromProto(p *metricspb.ExponentialHistogramDataPoint) metricdata.ExponentialHistogramDataPoint[float64] {
	return metricdata.ExponentialHistogramDataPoint[float64]{
		Count: p.Count, Sum: p.GetSum(), Scale: p.Scale, ZeroCount: p.ZeroCount, ZeroThreshold: p.ZeroThreshold,
		Min: metricdata.NewExtrema(p.GetMin()), Max: metricdata.NewExtrema(p.GetMax()),
		PositiveBucket: metricdata.ExponentialBucket{Offset: p.GetPositive().GetOffset(), Counts: p.GetPositive().GetBucketCounts()},
	}
}
