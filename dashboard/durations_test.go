package dashboard_test

import (
	"encoding/json"
	"math"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
	"github.com/pulse-dev/pulse/internal/testenv/testnow"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
)

// timedRequest is one request of known route, status and duration,
// recorded at latStart+at.
type timedRequest struct {
	method, route string
	status        int
	ms            int
	at            time.Duration
}

// latTraffic is what the durations fixture records, through the
// middlewares' own core: GET /posts/:id takes 1 to 100 ms (60 requests in
// the first 5 s bucket, 40 in the third), POST /login 200 to 209 ms,
// unmatched requests 1 ms.
func latTraffic() []timedRequest {
	var out []timedRequest
	for i := 1; i <= 100; i++ {
		status, at := 200, time.Second
		switch {
		case i%25 == 0:
			status = 500 // 4 of them
		case i%10 == 0:
			status = 404 // 8 of them: 10 to 90 but 50
		}
		if i > 60 {
			at = 11 * time.Second
		}
		out = append(out, timedRequest{"GET", "/posts/:id", status, i, at})
	}
	for i := range 10 {
		status := 200
		switch {
		case i < 3:
			status = 500
		case i == 3:
			status = 401
		}
		out = append(out, timedRequest{"POST", "/login", status, 200 + i, 12 * time.Second})
	}
	for range 5 {
		out = append(out, timedRequest{"GET", "", 404, 1, 2 * time.Second})
	}
	return out
}

// latFixture records latTraffic with a recent clock (lat keys expire by
// Redis's clock) and leaves it at latStart+12s: the 5 s buckets of last=3
// are latStart, latStart+5 (empty) and latStart+10.
func latFixture(t *testing.T) (*dashtest.Fixture, int64) {
	t.Helper()
	start := time.Unix(testnow.Now().Unix()/60*60, 0)
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, NoEntities: true, Start: start})
	tr, err := adapter.HitsConfig[any]{Recorder: f.Rec, Routes: true, StatusClasses: true}.Meter(adapter.Glue[any]{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range latTraffic() {
		f.Clock.Advance(start.Add(r.at).Sub(f.Clock.Now()))
		tr.Count(nil, r.method, r.route, r.status, time.Duration(r.ms)*time.Millisecond)
	}
	signups, err := f.Rec.Counter("signups")
	if err != nil {
		t.Fatal(err)
	}
	signups.Inc()
	f.Clock.Advance(start.Add(12 * time.Second).Sub(f.Clock.Now()))
	f.Flush(t)
	return f, start.Unix()
}

// exactQuantile is the nearest-rank quantile of ms, in milliseconds.
func exactQuantile(ms []int, q float64) float64 {
	s := slices.Clone(ms)
	slices.Sort(s)
	return float64(s[tracktest.Rank(q, len(s))-1])
}

// near asserts got within 5 % of want.
func near(t *testing.T, what string, got, want float64) {
	t.Helper()
	if math.Abs(got-want) > 0.05*want {
		t.Errorf("%s = %g, want %g within 5 %%", what, got, want)
	}
}

func durationsOf(route string, from, to time.Duration) []int {
	var out []int
	for _, r := range latTraffic() {
		if r.method+" "+r.route == route && r.at >= from && r.at < to {
			out = append(out, r.ms)
		}
	}
	return out
}

func getJSON(t *testing.T, url string, v any) string {
	t.Helper()
	r := dashtest.Get(t, url)
	if r.Status != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", url, r.Status, r.Body)
	}
	if err := json.Unmarshal([]byte(r.Body), v); err != nil {
		t.Fatal(err)
	}
	return r.Body
}

type durationsAnswer struct {
	Name      string               `json:"name"`
	Precision int                  `json:"precision"`
	Buckets   []map[string]float64 `json:"buckets"`
	Window    map[string]float64   `json:"window"`
}

func TestDurations(t *testing.T) {
	f, start := latFixture(t)
	const route = "GET /posts/:id"
	var got durationsAnswer
	getJSON(t, f.Root+"api/durations/"+seg(route)+"?precision=5&last=3", &got)
	if got.Name != route || got.Precision != 5 || len(got.Buckets) != 3 {
		t.Fatalf("name %q, precision %d, %d buckets; want %q, 5, 3", got.Name, got.Precision, len(got.Buckets), route)
	}
	for i, want := range []float64{60, 0, 40} {
		b := got.Buckets[i]
		if b["time"] != float64(start+5*int64(i)) || b["count"] != want {
			t.Errorf("bucket %d: time %v count %v, want %d and %v", i, b["time"], b["count"], start+5*int64(i), want)
		}
	}
	for k, v := range got.Buckets[1] {
		if k != "time" && v != 0 {
			t.Errorf("empty bucket: %s = %v, want 0", k, v)
		}
	}
	all := durationsOf(route, 0, time.Minute)
	w := got.Window
	if w["count"] != 100 || w["min"] != 1 || w["max"] != 100 || w["mean"] != 50.5 {
		t.Errorf("window count/min/max/mean = %v/%v/%v/%v, want 100/1/100/50.5", w["count"], w["min"], w["max"], w["mean"])
	}
	for _, q := range []struct {
		key string
		q   float64
	}{{"p50", 0.5}, {"p90", 0.9}, {"p99", 0.99}} {
		near(t, "window "+q.key, w[q.key], exactQuantile(all, q.q))
		near(t, "bucket 0 "+q.key, got.Buckets[0][q.key], exactQuantile(durationsOf(route, 0, 5*time.Second), q.q))
		near(t, "bucket 2 "+q.key, got.Buckets[2][q.key], exactQuantile(durationsOf(route, 10*time.Second, time.Minute), q.q))
	}
}

func TestDurationsQuantiles(t *testing.T) {
	f, _ := latFixture(t)
	var got durationsAnswer
	body := getJSON(t, f.Root+"api/durations/"+seg("POST /login")+"?precision=60&last=1&q=0.5,0.95,0.999,1", &got)
	keys := []string{"p50", "p95", "p99.9", "p100"}
	if _, ok := got.Window["p90"]; ok {
		t.Errorf("p90 answered though not asked for: %s", body)
	}
	if !strings.Contains(body, `"max":209,"p50":`) || !strings.Contains(body, `"p95":`) {
		t.Errorf("quantile keys not after max in the order asked for: %s", body)
	}
	ms := durationsOf("POST /login", 0, time.Minute)
	for i, q := range []float64{0.5, 0.95, 0.999, 1} {
		v, ok := got.Window[keys[i]]
		if !ok {
			t.Errorf("no %s in %s", keys[i], body)
		}
		near(t, keys[i], v, exactQuantile(ms, q))
	}
	if got.Window["count"] != 10 {
		t.Errorf("count %v, want 10", got.Window["count"])
	}
}

func TestDurationsErrors(t *testing.T) {
	f, _ := latFixture(t)
	base := f.Root + "api/durations/" + seg("GET /posts/:id")
	for _, tc := range []struct {
		url    string
		status int
	}{
		{base, http.StatusBadRequest},                                                                  // no precision
		{base + "?precision=7", http.StatusBadRequest},                                                 // not kept
		{base + "?precision=5&q=0", http.StatusBadRequest},                                             // outside (0, 1]
		{base + "?precision=5&q=1.01", http.StatusBadRequest},                                          // outside (0, 1]
		{base + "?precision=5&q=-0.5", http.StatusBadRequest},                                          // outside (0, 1]
		{base + "?precision=5&q=NaN", http.StatusBadRequest},                                           // not a number in range
		{base + "?precision=5&q=half", http.StatusBadRequest},                                          // not a number
		{base + "?precision=5&q=0.5,0.5", http.StatusBadRequest},                                       // twice
		{base + "?precision=5&q=0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,0.95,0.99", http.StatusBadRequest}, // 11
		{base + "?precision=5&last=0", http.StatusBadRequest},
		{base + "?precision=5&last=121", http.StatusBadRequest},
		{base + "?precision=5&from=20&to=10", http.StatusBadRequest},
		{base + "?precision=5&from=1", http.StatusBadRequest}, // far too many buckets
		{base + "?precision=5&last=3&from=1", http.StatusBadRequest},
		{f.Root + "api/durations/" + seg("GET /nothing") + "?precision=5", http.StatusNotFound},
		{f.Root + "api/latency/" + seg("GET /posts/:id") + "?precision=5", http.StatusNotFound}, // the path before the rename
		{f.Root + "api/durations/" + seg("signups") + "?precision=5&q=0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1", http.StatusOK},
	} {
		r := dashtest.Get(t, tc.url)
		if tc.status == http.StatusOK {
			if r.Status != http.StatusOK {
				t.Errorf("%s: status %d: %s", tc.url, r.Status, r.Body)
			}
			continue
		}
		t.Run(strings.TrimPrefix(tc.url, f.Root), func(t *testing.T) { checkError(t, r, tc.status) })
	}
}

type routesAnswer struct {
	Routes []struct {
		Name      string  `json:"name"`
		Hits      int64   `json:"hits"`
		Errors4xx int64   `json:"errors_4xx"`
		Errors5xx int64   `json:"errors_5xx"`
		Timed     int64   `json:"timed"`
		P50       float64 `json:"p50"`
		P90       float64 `json:"p90"`
		P99       float64 `json:"p99"`
		Max       float64 `json:"max"`
	} `json:"routes"`
}

func routeNames(a routesAnswer) []string {
	var out []string
	for _, r := range a.Routes {
		out = append(out, r.Name)
	}
	return out
}

func TestRoutes(t *testing.T) {
	f, _ := latFixture(t)
	var got routesAnswer
	getJSON(t, f.Root+"api/routes?precision=5&last=3", &got)
	if names, want := routeNames(got), []string{"GET /posts/:id", "POST /login", "unmatched"}; !slices.Equal(names, want) {
		t.Fatalf("routes %q, want %q (busiest first, no hits, status or class series)", names, want)
	}
	want := []struct {
		hits, e4, e5 int64
		max          float64
	}{{100, 8, 4, 100}, {10, 1, 3, 209}, {5, 5, 0, 1}}
	for i, r := range got.Routes {
		w := want[i]
		if r.Hits != w.hits || r.Timed != w.hits || r.Errors4xx != w.e4 || r.Errors5xx != w.e5 || r.Max != w.max {
			t.Errorf("%s: hits %d 4xx %d 5xx %d max %v, want %d %d %d %v", r.Name, r.Hits, r.Errors4xx, r.Errors5xx, r.Max, w.hits, w.e4, w.e5, w.max)
		}
		name := r.Name
		if name == "unmatched" {
			name = "GET "
		}
		ms := durationsOf(name, 0, time.Minute)
		near(t, r.Name+" p50", r.P50, exactQuantile(ms, 0.5))
		near(t, r.Name+" p90", r.P90, exactQuantile(ms, 0.9))
		near(t, r.Name+" p99", r.P99, exactQuantile(ms, 0.99))
	}
	// A later window, latStart+5 to latStart+60: GET /posts/:id has only the
	// 40 requests of its second bucket, unmatched none but is still listed.
	f.Clock.Advance(50 * time.Second)
	getJSON(t, f.Root+"api/routes?precision=5&last=12", &got)
	if len(got.Routes) != 3 || got.Routes[0].Hits != 40 || got.Routes[0].Max != 100 {
		t.Errorf("last=12 from latStart+62s: %+v, want GET /posts/:id first with the 40 hits of its third bucket", got.Routes)
	}
}

func TestRoutesSort(t *testing.T) {
	f, _ := latFixture(t)
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"", []string{"GET /posts/:id", "POST /login", "unmatched"}},
		{"&sort=hits", []string{"GET /posts/:id", "POST /login", "unmatched"}},
		{"&sort=p99", []string{"POST /login", "GET /posts/:id", "unmatched"}},
		{"&sort=errors", []string{"GET /posts/:id", "unmatched", "POST /login"}},
		{"&sort=errors&n=2", []string{"GET /posts/:id", "unmatched"}},
		{"&sort=p99&n=1", []string{"POST /login"}},
		{"&n=1", []string{"GET /posts/:id"}},
	} {
		var got routesAnswer
		getJSON(t, f.Root+"api/routes?precision=60&last=1"+tc.query, &got)
		if names := routeNames(got); !slices.Equal(names, tc.want) {
			t.Errorf("%s: routes %q, want %q", tc.query, names, tc.want)
		}
	}
}

func TestRoutesErrors(t *testing.T) {
	f, _ := latFixture(t)
	base := f.Root + "api/routes?precision=5"
	for _, q := range []string{
		"", "&sort=name", "&sort=", "&n=0", "&n=1001", "&n=two", "&last=0", "&last=121", "&from=1", "&to=1", "&fill=zero",
	} {
		url := base + q
		if q == "" {
			url = f.Root + "api/routes"
		}
		if q == "&sort=" {
			continue // empty is the default sort
		}
		t.Run(q, func(t *testing.T) { checkError(t, dashtest.Get(t, url), http.StatusBadRequest) })
	}
	checkError(t, dashtest.Get(t, f.Root+"api/routes?precision=7"), http.StatusBadRequest)
}
