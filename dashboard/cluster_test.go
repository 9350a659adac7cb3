package dashboard_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// The JSON API reads a Redis Cluster as it reads one server: the known
// set on one node, the series' hashes spread over the others.
func TestAPIOnCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	clock := timeseries.NewManualClock(dashtest.T0)
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: cl.Client(t), Clock: clock, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close(context.Background())
	want := map[string]int64{}
	for _, h := range dashtest.KnownTraffic {
		clock.Advance(dashtest.T0.Add(h.At).Sub(clock.Now()))
		c, err := rec.Counter(h.Name)
		if err != nil {
			t.Fatal(err)
		}
		for range h.N {
			c.Inc()
		}
		want[h.Name] += int64(h.N)
	}
	clock.Advance(dashtest.Now.Sub(clock.Now()))
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	h, err := dashboard.Handler(dashboard.Config{Store: rec.Store(), Health: rec})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	get := func(path string, into any) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
			t.Fatal(err)
		}
	}
	var list struct {
		Counters []timeseries.SeriesInfo `json:"counters"`
	}
	get("/api/counters", &list)
	if len(list.Counters) != len(want) {
		t.Errorf("api/counters lists %d series, want %d", len(list.Counters), len(want))
	}
	for name, n := range want {
		var one struct {
			Samples []timeseries.Sample `json:"samples"`
		}
		get("/api/counters/"+url.PathEscape(name)+"?precision=60", &one)
		if got := sumSamples(one.Samples); got != n {
			t.Errorf("api/counters/%s: %d hits, want %d", name, got, n)
		}
	}
	var ov struct {
		Top []struct {
			Name    string              `json:"name"`
			Samples []timeseries.Sample `json:"samples"`
		} `json:"top"`
	}
	get("/api/overview?precision=60&n=24", &ov)
	if len(ov.Top) != len(want) {
		t.Fatalf("api/overview charts %d series, want %d", len(ov.Top), len(want))
	}
	for _, s := range ov.Top {
		if got := sumSamples(s.Samples); got != want[s.Name] {
			t.Errorf("overview %s: %d hits, want %d", s.Name, got, want[s.Name])
		}
	}
	var health timeseries.Health
	get("/api/health", &health)
	if !health.Cluster || !health.RedisUp {
		t.Errorf("api/health %+v, want a healthy cluster", health)
	}
}

func sumSamples(ss []timeseries.Sample) int64 {
	var n int64
	for _, s := range ss {
		n += s.Count
	}
	return n
}
