package dashboard_test

import (
	"encoding/json"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
)

// writeCounts writes n buckets of precision p of name ending with the
// current one, at the fixture's clock, each count drawn by count(i) (i
// counting from the oldest), and lists the series as known.
func writeCounts(t *testing.T, f *dashtest.Fixture, name string, p, n int, count func(i int) int) {
	t.Helper()
	current := f.Clock.Now().Unix() / int64(p) * int64(p)
	args := []any{"count:" + itoa(p) + ":" + name}
	for i := range n {
		args = append(args, current-int64(n-1-i)*int64(p), count(i))
	}
	f.Srv.Do("HSET", args...)
	f.Srv.Do("ZADD", "known:", 0, itoa(p)+":"+name)
}

func itoa(n int) string { b, _ := json.Marshal(n); return string(b) }

// steady is about 200 a bucket, Poisson-like.
func steady(seed uint64) func(int) int {
	rng := rand.New(rand.NewPCG(seed, seed))
	return func(int) int { return 200 + int(rng.NormFloat64()*14) }
}

type apiForecast struct {
	Name      string
	Precision int
	Kind      string
	Model     struct{ Kind string }
	History   []struct {
		Time                        int64
		Value, Expected, Lo95, Hi95 *float64
		Anomaly                     *struct{ Kind string }
	}
	Forecast []struct {
		Time                       int64
		Value                      *float64
		Expected, Lo80, Hi80, Lo95 *float64
	}
}

// api/forecast gives a series' history with its expectations and bands
// and the buckets to come, and api/anomalies lists the breaks of every
// series, newest first: a route whose traffic fell to zero is flagged, a
// steady one is not.
func TestForecastAndAnomalies(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, Start: time.Now()})
	writeCounts(t, f, "GET /steady", 300, 121, steady(1))
	fall := steady(2)
	writeCounts(t, f, "GET /falls", 300, 121, func(i int) int {
		if i >= 116 && i < 120 { // the last four closed buckets
			return 0
		}
		return fall(i)
	})

	r := dashtest.Get(t, f.Root+"api/forecast/"+seg("GET /steady")+"?precision=300&horizon=6")
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var fc apiForecast
	if err := json.Unmarshal([]byte(r.Body), &fc); err != nil {
		t.Fatal(err)
	}
	if fc.Name != "GET /steady" || fc.Precision != 300 || fc.Kind != "hits" || fc.Model.Kind != "counts" {
		t.Errorf("head %+v", fc)
	}
	if len(fc.History) != 120 || len(fc.Forecast) != 6 {
		t.Fatalf("%d history and %d forecast points, want 120 and 6", len(fc.History), len(fc.Forecast))
	}
	next := fc.Forecast[0]
	if current := f.Clock.Now().Unix() / 300 * 300; next.Time != current || next.Value != nil {
		t.Errorf("first forecast bucket %d (value %v), want the current one %d without a value", next.Time, next.Value, current)
	}
	if e := *next.Expected; e < 180 || e > 220 || *next.Lo95 > e || *next.Lo80 < *next.Lo95 {
		t.Errorf("forecast %g in [%g (95), %g (80)], want about 200 inside its bands", e, *next.Lo95, *next.Lo80)
	}

	var an struct {
		Series    int
		Anomalies []struct {
			Series, Kind string
			Bucket       int64
			Observed     *float64
		}
	}
	r = dashtest.Get(t, f.Root+"api/anomalies?precision=300&last=6")
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	if err := json.Unmarshal([]byte(r.Body), &an); err != nil {
		t.Fatal(err)
	}
	if an.Series != 2 || len(an.Anomalies) == 0 {
		t.Fatalf("%d series scanned, anomalies %+v", an.Series, an.Anomalies)
	}
	for i, a := range an.Anomalies {
		if a.Series != "GET /falls" || (a.Kind != "drop" && a.Kind != "level_shift") || *a.Observed != 0 {
			t.Errorf("anomaly %+v: only the fall of GET /falls is one", a)
		}
		if i > 0 && a.Bucket > an.Anomalies[i-1].Bucket {
			t.Errorf("anomalies not newest first: %+v", an.Anomalies)
		}
	}
	r = dashtest.Get(t, f.Root+"api/anomalies?precision=300&last=6&series="+seg("GET /steady"))
	if r.Status != http.StatusOK || json.Unmarshal([]byte(r.Body), &an) != nil || an.Series != 1 || len(an.Anomalies) != 0 {
		t.Errorf("the steady series alone: %d %s", r.Status, r.Body)
	}
}

// Bad input is a 4xx JSON error; a series too short to fit is 422.
func TestForecastBadInput(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, Start: time.Now()})
	writeCounts(t, f, "GET /x", 300, 121, steady(3))
	writeCounts(t, f, "GET /new", 300, 3, steady(4))
	for _, tc := range []struct {
		path   string
		status int
	}{
		{"api/forecast/" + seg("GET /x"), http.StatusBadRequest},
		{"api/forecast/" + seg("GET /x") + "?precision=7", http.StatusBadRequest},
		{"api/forecast/" + seg("GET /x") + "?precision=300&horizon=0", http.StatusBadRequest},
		{"api/forecast/" + seg("GET /x") + "?precision=300&horizon=121", http.StatusBadRequest},
		{"api/forecast/" + seg("GET /x") + "?precision=300&kind=p42", http.StatusBadRequest},
		{"api/forecast/" + seg("GET /nowhere") + "?precision=300", http.StatusNotFound},
		{"api/forecast/" + seg("GET /new") + "?precision=300", http.StatusUnprocessableEntity},
		{"api/forecast/" + seg("GET /x") + "?precision=300&kind=p99", http.StatusUnprocessableEntity},
		{"api/anomalies", http.StatusBadRequest},
		{"api/anomalies?precision=300&last=0", http.StatusBadRequest},
		{"api/anomalies?precision=300&kind=error_surge", http.StatusBadRequest},
	} {
		t.Run(tc.path, func(t *testing.T) {
			checkError(t, dashtest.Get(t, f.Root+tc.path), tc.status)
		})
	}
	// errors of a route that never failed: a ratio of zero, fitted.
	if r := dashtest.Get(t, f.Root+"api/forecast/"+seg("GET /x")+"?precision=300&kind=errors"); r.Status != http.StatusOK {
		t.Errorf("errors of GET /x: %d %s", r.Status, r.Body)
	}
}

// A stopped (SIGSTOP) Redis: a forecast or a scan for anomalies gives up
// at the request's Timeout with a 503 JSON error, and answers again once
// Redis resumes.
func TestForecastPausedRedis(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, Start: time.Now()})
	writeCounts(t, f, "GET /x", 300, 121, steady(3))
	h, err := dashboard.Handler(dashboard.Config{Store: f.Store, Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	paths := []string{"api/forecast/" + seg("GET /x") + "?precision=300", "api/anomalies?precision=300"}
	f.Srv.Pause()
	t.Cleanup(f.Srv.Resume)
	for _, path := range paths {
		start := time.Now()
		r := dashtest.Get(t, srv.URL+"/"+path)
		took := time.Since(start)
		checkError(t, r, http.StatusServiceUnavailable)
		if took > 2*time.Second {
			t.Errorf("%s: answered after %v with a Timeout of 300 ms", path, took)
		}
	}
	f.Srv.Resume()
	for _, path := range paths {
		if r := dashtest.Get(t, srv.URL+"/"+path); r.Status != http.StatusOK {
			t.Errorf("%s after Redis resumed: %d %s", path, r.Status, r.Body)
		}
	}
}

// Dashboards open at once ask for the anomalies as a bucket closes, all
// together: they share one scan of every series instead of one each.
func TestAnomalyScansShared(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, Start: time.Now()})
	for i, name := range []string{"GET /a", "GET /b", "GET /c"} {
		writeCounts(t, f, name, 300, 121, steady(uint64(10+i)))
	}
	h, err := dashboard.Handler(dashboard.Config{Store: f.Store})
	if err != nil {
		t.Fatal(err)
	}
	var arrived atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Add(1)
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	path := srv.URL + "/api/anomalies?precision=300"
	// The first scan reads each series at 5 min, 1 h and 1 d; the next
	// ones, within the hour, only at 5 min.
	before := f.Srv.Calls("HMGET")
	first := dashtest.Get(t, path)
	firstCost := f.Srv.Calls("HMGET") - before
	before = f.Srv.Calls("HMGET")
	one := dashtest.Get(t, path)
	perScan := f.Srv.Calls("HMGET") - before
	if first.Status != http.StatusOK || one.Body != first.Body || perScan == 0 || firstCost != 3*perScan {
		t.Fatalf("two scans: %d %s, then %s; %d and %d HMGET, want the second a third of the first", first.Status, first.Body, one.Body, firstCost, perScan)
	}
	// With Redis stopped, the scan that starts first waits on it and the
	// others, all arrived, join it.
	before = f.Srv.Calls("HMGET")
	f.Srv.Pause()
	t.Cleanup(f.Srv.Resume)
	const viewers = 6
	answers := make(chan dashtest.Response, viewers)
	for range viewers {
		go func() { answers <- getQuietly(path) }()
	}
	for deadline := time.Now().Add(time.Minute); arrived.Load() < 1+viewers; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d viewers arrived", arrived.Load()-1, viewers)
		}
	}
	f.Srv.Resume()
	for range viewers {
		if r := <-answers; r.Status != http.StatusOK || r.Body != one.Body {
			t.Errorf("a viewer got %d %s, want %s", r.Status, r.Body, one.Body)
		}
	}
	if got := f.Srv.Calls("HMGET") - before; got != perScan {
		t.Errorf("%d viewers at once cost %d HMGET, want one scan's %d", viewers, got, perScan)
	}
}

// getQuietly is dashtest.Get for a goroutine other than the test's: a
// failure is a response with status 0, not a t.Fatal.
func getQuietly(url string) dashtest.Response {
	resp, err := http.Get(url)
	if err != nil {
		return dashtest.Response{Body: err.Error()}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return dashtest.Response{Body: err.Error()}
	}
	return dashtest.Response{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}
}
