package promexport_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/promexport"
	"github.com/pulse-dev/pulse/timeseries"
)

// scrape serves the collector as /metrics does and parses the answer with
// Prometheus' own text parser.
func scrape(t *testing.T, c prometheus.Collector) map[string]*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	defer srv.Close()
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("scrape: %d %s", resp.StatusCode, b)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse: %v", err)
	}
	return fams
}

// value returns the one sample of a family without labels.
func value(t *testing.T, fams map[string]*dto.MetricFamily, name string, typ dto.MetricType) float64 {
	t.Helper()
	f := fams[name]
	if f == nil || len(f.Metric) != 1 {
		t.Fatalf("%s: %v", name, f)
	}
	if f.GetType() != typ {
		t.Errorf("%s is a %v, want %v", name, f.GetType(), typ)
	}
	m := f.Metric[0]
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

func TestCollector(t *testing.T) {
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(time.Unix(1700000000, 0))
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), Clock: clock, FlushInterval: time.Hour, OnError: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = rec.Close(ctx)
	}()
	col := promexport.NewCollector(rec)

	hits, _ := rec.Counter("hits")
	route, _ := rec.Counter(`GET /posts/:id "quoted" \ name`)
	for range 5 {
		hits.Inc()
	}
	rec.Record(hits, route)

	fams := scrape(t, col)
	perSeries := map[string]float64{}
	if f := fams["pulse_hits_total"]; f == nil || f.GetType() != dto.MetricType_COUNTER {
		t.Fatalf("pulse_hits_total: %v", f)
	}
	for _, m := range fams["pulse_hits_total"].Metric {
		for _, l := range m.Label {
			if l.GetName() == "series" {
				perSeries[l.GetValue()] = m.Counter.GetValue()
			}
		}
	}
	if perSeries["hits"] != 6 || perSeries[`GET /posts/:id "quoted" \ name`] != 1 || perSeries["overflow"] != 0 {
		t.Errorf("pulse_hits_total: %v", perSeries)
	}
	if got := value(t, fams, "pulse_pending_hits", dto.MetricType_GAUGE); got != 7 {
		t.Errorf("pending before a flush: %v, want 7", got)
	}
	if got := value(t, fams, "pulse_last_flush_timestamp_seconds", dto.MetricType_GAUGE); got != 0 {
		t.Errorf("last flush before any: %v", got)
	}
	if got := value(t, fams, "pulse_redis_up", dto.MetricType_GAUGE); got != 1 {
		t.Errorf("redis up: %v", got)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	fams = scrape(t, col)
	if got := value(t, fams, "pulse_pending_hits", dto.MetricType_GAUGE); got != 0 {
		t.Errorf("pending after a flush: %v", got)
	}
	if got := value(t, fams, "pulse_last_flush_timestamp_seconds", dto.MetricType_GAUGE); got != 1700000000 {
		t.Errorf("last flush: %v, want 1700000000", got)
	}

	// Redis down: the flush fails, the hit waits, and Redis is reported down.
	srv.Stop()
	defer srv.Restart()
	hits.Inc()
	if err := rec.Flush(ctx); err == nil {
		t.Fatal("flush with Redis down succeeded")
	}
	fams = scrape(t, col)
	if got := value(t, fams, "pulse_redis_up", dto.MetricType_GAUGE); got != 0 {
		t.Errorf("redis up with Redis down: %v", got)
	}
	if got := value(t, fams, "pulse_pending_hits", dto.MetricType_GAUGE); got != 1 {
		t.Errorf("pending with Redis down: %v, want 1", got)
	}
	if got := value(t, fams, "pulse_dropped_hits_total", dto.MetricType_COUNTER); got != 0 {
		t.Errorf("dropped: %v", got)
	}
	for _, m := range fams["pulse_hits_total"].Metric {
		if m.Label[0].GetValue() == "hits" && m.Counter.GetValue() != 7 {
			t.Errorf("hits total %v, want 7: the total counts every hit recorded", m.Counter.GetValue())
		}
	}
}

// Route series are exported with method, route and code labels: each
// request once, by class where the route has classes and whole where it
// has none; the app's own series and app-named ones stay out.
func TestHTTPRequestsLabels(t *testing.T) {
	srv := redistest.Start(t)
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), FlushInterval: time.Hour, OnError: func(error) {}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = rec.Close(ctx)
	}()
	incs := map[string]int{
		"hits": 10, "status:2xx": 7, "signups": 2,
		"GET /posts/:id": 6, "GET /posts/:id status:2xx": 5, "GET /posts/:id status:5xx": 1,
		"unmatched": 3, "unmatched status:4xx": 3, "POST /login": 1,
	}
	for name, n := range incs {
		c, err := rec.Counter(name)
		if err != nil {
			t.Fatal(err)
		}
		for range n {
			c.Inc()
		}
	}
	want := map[[3]string]float64{
		{"GET", "/posts/:id", "2xx"}: 5, {"GET", "/posts/:id", "5xx"}: 1,
		{"", "unmatched", "4xx"}: 3, {"POST", "/login", ""}: 1,
	}
	f := scrape(t, promexport.NewCollector(rec))["pulse_http_requests_total"]
	if f == nil || f.GetType() != dto.MetricType_COUNTER {
		t.Fatalf("pulse_http_requests_total: %v", f)
	}
	got := map[[3]string]float64{}
	for _, m := range f.Metric {
		l := map[string]string{}
		for _, p := range m.Label {
			l[p.GetName()] = p.GetValue()
		}
		got[[3]string{l["method"], l["route"], l["code"]}] = m.Counter.GetValue()
	}
	if len(got) != len(want) {
		t.Errorf("%d series %v, want %v", len(got), got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("method=%q route=%q code=%q: %g, want %g", k[0], k[1], k[2], got[k], v)
		}
	}
}
