package dashboard_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/timeseries"
)

// seg escapes a series name as one path segment, as the page does.
func seg(name string) string { return url.PathEscape(name) }

// checkError asserts an error answer: the status, a JSON content type and
// a body that is exactly {"error": "<something>"}.
func checkError(t *testing.T, r dashtest.Response, status int) {
	t.Helper()
	if r.Status != status {
		t.Errorf("status %d, want %d; body %s", r.Status, status, r.Body)
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("Content-Type %q, want JSON", ct)
	}
	var body map[string]any
	if err := json.Unmarshal([]byte(r.Body), &body); err != nil {
		t.Fatalf("error body %q is not JSON: %v", r.Body, err)
	}
	msg, ok := body["error"].(string)
	if !ok || msg == "" || len(body) != 1 {
		t.Errorf(`error body %s, want {"error":"…"} only`, r.Body)
	}
}

func TestCountersList(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{})
	r := dashtest.Get(t, f.Root+"api/counters")
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var got struct {
		Counters []timeseries.SeriesInfo `json:"counters"`
	}
	if err := json.Unmarshal([]byte(r.Body), &got); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprint([]timeseries.SeriesInfo{
		{Name: dashtest.ScriptName, Precisions: tracktest.DefaultPrecisions()},
		{Name: dashtest.ImgName, Precisions: tracktest.DefaultPrecisions()},
		{Name: dashtest.RouteName, Precisions: tracktest.DefaultPrecisions()},
		{Name: "hits", Precisions: tracktest.DefaultPrecisions()},
	})
	if fmt.Sprint(got.Counters) != want {
		t.Errorf("counters = %v\nwant %s", got.Counters, want)
	}
	if strings.Contains(r.Body, "<") {
		t.Errorf("raw < in JSON: %s", r.Body)
	}
	if cc := r.Header.Get("Cache-Control"); cc != "no-store" {
		t.Errorf("Cache-Control %q, want no-store", cc)
	}
}

func TestSamples(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{})
	const cur = `"current":1700000600`
	tests := []struct {
		name, path string
		want       string // exact JSON body
	}{
		{"all of hits", "api/counters/hits?precision=5",
			`{"name":"hits","precision":5,"samples":[{"time":1700000000,"count":3},{"time":1700000005,"count":1},{"time":1700000020,"count":2},{"time":1700000600,"count":4}],` + cur + `}`},
		{"from and to", "api/counters/hits?precision=5&from=1700000005&to=1700000020",
			`{"name":"hits","precision":5,"samples":[{"time":1700000005,"count":1},{"time":1700000020,"count":2}],` + cur + `}`},
		{"zero-filled", "api/counters/hits?precision=5&from=1700000005&to=1700000020&fill=zero",
			`{"name":"hits","precision":5,"samples":[{"time":1700000005,"count":1},{"time":1700000010,"count":0},{"time":1700000015,"count":0},{"time":1700000020,"count":2}],` + cur + `}`},
		{"last buckets to the current one", "api/counters/hits?precision=5&last=3&fill=zero",
			`{"name":"hits","precision":5,"samples":[{"time":1700000590,"count":0},{"time":1700000595,"count":0},{"time":1700000600,"count":4}],` + cur + `}`},
		{"minutes", "api/counters/hits?precision=60",
			`{"name":"hits","precision":60,"samples":[{"time":1699999980,"count":6},{"time":1700000580,"count":4}],"current":1700000580}`},
		{"route template as one escaped segment", "api/counters/GET%20%2Fposts%2F%3Aid?precision=60",
			`{"name":"GET /posts/:id","precision":60,"samples":[{"time":1699999980,"count":2},{"time":1700000280,"count":5}],"current":1700000580}`},
		{"hostile name", "api/counters/" + seg(dashtest.ScriptName) + "?precision=5",
			`{"name":"\u003c/script\u003e\u003cscript\u003ealert(1)\u003c/script\u003e","precision":5,"samples":[{"time":1700000015,"count":2}],` + cur + `}`},
		{"hostile name, escaped differently", "api/counters/%3Cimg%20src=x%20onerror=alert(1)%3E?precision=86400",
			`{"name":"\u003cimg src=x onerror=alert(1)\u003e","precision":86400,"samples":[{"time":1699920000,"count":1}],"current":1699920000}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := dashtest.Get(t, f.Root+tt.path)
			if r.Status != http.StatusOK {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			if got := strings.TrimSpace(r.Body); got != tt.want {
				t.Errorf("body\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestSamplesBadInput(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{})
	long := strings.Repeat("x", 201) // names are at most 200 bytes
	tests := []struct {
		name, path string
		status     int
	}{
		{"precision missing", "api/counters/hits", 400},
		{"precision empty", "api/counters/hits?precision=", 400},
		{"precision not a number", "api/counters/hits?precision=five", 400},
		{"precision fractional", "api/counters/hits?precision=5.0", 400},
		{"precision not kept", "api/counters/hits?precision=7", 400},
		{"precision negative", "api/counters/hits?precision=-5", 400},
		{"precision overflows", "api/counters/hits?precision=99999999999999999999", 400},
		{"from not a number", "api/counters/hits?precision=5&from=yesterday", 400},
		{"to not a number", "api/counters/hits?precision=5&to=1e9", 400},
		{"from negative", "api/counters/hits?precision=5&from=-10", 400},
		{"from after to", "api/counters/hits?precision=5&from=1700000020&to=1700000005", 400},
		{"to absurd", "api/counters/hits?precision=5&to=9223372036854775807", 400},
		{"zero-fill range too large", "api/counters/hits?precision=5&from=5&to=1700000000&fill=zero", 400},
		{"unknown fill", "api/counters/hits?precision=5&fill=linear", 400},
		{"last zero", "api/counters/hits?precision=5&last=0", 400},
		{"last too large", "api/counters/hits?precision=5&last=20001", 400},
		{"last above MaxBuckets", "api/counters/hits?precision=5&last=121", 400},
		{"zero-fill range above MaxBuckets", "api/counters/hits?precision=5&from=1700000000&to=1700000600&fill=zero", 400},
		{"last and from", "api/counters/hits?precision=5&last=3&from=1700000000", 400},
		{"name too long", "api/counters/" + long + "?precision=5", 400},
		{"name with a control character", "api/counters/a%01b?precision=5", 400},
		{"name not UTF-8", "api/counters/%FF%FE?precision=5", 400},
		{"series unknown", "api/counters/nope?precision=5", 404},
		{"series unknown, escaped", "api/counters/GET%20%2Fnope?precision=5", 404},
		{"name with a slash, unknown", "api/counters/hits%2F?precision=5", 404},
		{"no such endpoint", "api/nothing", 404},
		{"no such page", "nothing/here", 404},
		{"list takes no name segment", "api/counters/hits/more?precision=5", 404},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkError(t, dashtest.Get(t, f.Root+tt.path), tt.status)
		})
	}
}

func TestOnlyGetAndHead(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{})
	for _, path := range []string{"", "api/counters", "api/counters/hits?precision=5", "api/overview?precision=5", "api/health",
		"api/entities", "api/entities/post/7", "static/main.js", "api/nothing"} {
		for _, m := range []string{http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodPatch, http.MethodOptions} {
			r := dashtest.Do(t, m, f.Root+path, nil)
			checkError(t, r, http.StatusMethodNotAllowed)
			if allow := r.Header.Get("Allow"); allow != "GET, HEAD" {
				t.Errorf("%s %s: Allow %q", m, path, allow)
			}
		}
		if r := dashtest.Do(t, http.MethodHead, f.Root+path, nil); r.Status >= 500 || r.Body != "" {
			t.Errorf("HEAD %s: status %d, body %q", path, r.Status, r.Body)
		}
	}
}

func TestOverview(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{})

	ov := dashtest.GetOverview(t, f.Root+"api/overview?precision=5")
	if ov.Precision != 5 || ov.Current != 1700000600 || ov.To != 1700000600 || ov.From != 1700000600-119*5 || ov.Now != dashtest.Now.Unix() {
		t.Errorf("window: precision %d from %d to %d current %d now %d", ov.Precision, ov.From, ov.To, ov.Current, ov.Now)
	}
	// The window's first bucket is dashtest.T0+5: the 3 hits at dashtest.T0 are out, so
	// hits ties with the route and the tie goes by name.
	var totals []string
	for _, tt := range ov.Totals {
		totals = append(totals, fmt.Sprintf("%s=%d", tt.Name, tt.Total))
	}
	if got, want := strings.Join(totals, " "), dashtest.RouteName+"=7 hits=7 "+dashtest.ScriptName+"=2 "+dashtest.ImgName+"=1"; got != want {
		t.Errorf("totals %s, want %s", got, want)
	}
	if len(ov.Top) != 4 || ov.Top[0].Name != dashtest.RouteName || ov.Top[1].Name != "hits" {
		t.Fatalf("%d top series, first %q", len(ov.Top), ov.Top[0].Name)
	}
	// Each charted series is zero-filled over the whole window, and its
	// buckets agree with the single-series endpoint.
	for _, s := range ov.Top {
		if len(s.Samples) != 120 || s.Samples[0].Time != ov.From || s.Samples[119].Time != ov.To {
			t.Errorf("%s: %d samples from %v, want 120 from %d to %d", s.Name, len(s.Samples), s.Samples[0], ov.From, ov.To)
		}
		r := dashtest.Get(t, fmt.Sprintf("%sapi/counters/%s?precision=5&from=%d&to=%d&fill=zero", f.Root, seg(s.Name), ov.From, ov.To))
		var one struct {
			Samples []timeseries.Sample `json:"samples"`
		}
		if err := json.Unmarshal([]byte(r.Body), &one); err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(one.Samples) != fmt.Sprint(s.Samples) {
			t.Errorf("%s: overview and counters endpoint disagree", s.Name)
		}
	}

	// n limits the chart count; pinned series come along whatever their
	// traffic, unknown pinned names are left out.
	ov = dashtest.GetOverview(t, f.Root+"api/overview?precision=5&n=1&series="+url.QueryEscape(dashtest.ImgName)+"&series=nope&series="+url.QueryEscape(dashtest.ImgName))
	if len(ov.Top) != 1 || ov.Top[0].Name != dashtest.RouteName {
		t.Errorf("n=1: %d top series", len(ov.Top))
	}
	if len(ov.Pinned) != 1 || ov.Pinned[0].Name != dashtest.ImgName || ov.Pinned[0].Total != 1 || len(ov.Pinned[0].Samples) != 120 {
		t.Errorf("pinned: %d series", len(ov.Pinned))
	}

	// A short window holds only the current bucket's hits; quiet series
	// are listed with 0 but not charted.
	ov = dashtest.GetOverview(t, f.Root+"api/overview?precision=5&last=3")
	if len(ov.Top) != 1 || ov.Top[0].Total != 4 || fmt.Sprint(ov.Top[0].Samples) != "[{1700000590 0} {1700000595 0} {1700000600 4}]" {
		t.Errorf("last=3: top = %+v", ov.Top)
	}
	if len(ov.Totals) != 4 || ov.Totals[1].Name != dashtest.ScriptName || ov.Totals[1].Total != 0 {
		t.Errorf("last=3: totals = %+v", ov.Totals)
	}

	// Another precision sums the same hits into wider buckets.
	ov = dashtest.GetOverview(t, f.Root+"api/overview?precision=60")
	if ov.Top[0].Name != "hits" || ov.Top[0].Total != 10 || ov.Current != 1700000580 {
		t.Errorf("precision 60: %s=%d, current %d", ov.Top[0].Name, ov.Top[0].Total, ov.Current)
	}
}

// TestOverviewLeavesRouteClassesOut: a route's status class series and
// the slow series of a listed series are listed and pinnable, but not
// charted among the busiest.
func TestOverviewLeavesRouteClassesOut(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{NoTraffic: true})
	at5s := func(name string, n int) dashtest.Hit { return dashtest.Hit{Name: name, At: 5 * time.Second, N: n} }
	f.Record(t, at5s("GET /a", 9), at5s("GET /a status:2xx", 8), at5s("GET /a status:5xx", 1), at5s("hits", 9),
		at5s("tenant status:2xx", 3), at5s("slow:250ms GET /a", 4), at5s("slow:1s gone", 2))
	ov := dashtest.GetOverview(t, f.Root+"api/overview?precision=5&series="+url.QueryEscape("GET /a status:5xx"))
	var top, totals []string
	for _, s := range ov.Top {
		top = append(top, s.Name)
	}
	for _, s := range ov.Totals {
		totals = append(totals, s.Name)
	}
	// "tenant status:2xx" is no route's class: an app-named series stays;
	// so does the slow series of a series that is not listed.
	if got, want := strings.Join(top, ","), "GET /a,hits,tenant status:2xx,slow:1s gone"; got != want {
		t.Errorf("top %s, want %s", got, want)
	}
	if len(totals) != 7 {
		t.Errorf("totals %v, want all 7 series listed", totals)
	}
	if len(ov.Pinned) != 1 || ov.Pinned[0].Name != "GET /a status:5xx" || ov.Pinned[0].Total != 1 {
		t.Errorf("pinned %+v", ov.Pinned)
	}
}

func TestOverviewBadInput(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{})
	many := strings.Repeat("&series=a", dashboard.MaxPinned+1)
	tests := []struct {
		name, query string
	}{
		{"precision missing", ""},
		{"precision not kept", "precision=10"},
		{"n negative", "precision=5&n=-1"},
		{"n too large", "precision=5&n=1000"},
		{"n not a number", "precision=5&n=all"},
		{"last not a number", "precision=5&last=x"},
		{"last too large", "precision=5&last=1000000"},
		{"last above MaxBuckets", "precision=5&last=121"},
		{"last of issue 11", "precision=5&last=20000&n=24"},
		{"from given", "precision=5&from=1700000000"},
		{"fill given", "precision=5&fill=zero"},
		{"too many series", "precision=5" + many},
		{"empty series name", "precision=5&series="},
		{"series name too long", "precision=5&series=" + strings.Repeat("y", 201)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkError(t, dashtest.Get(t, f.Root+"api/overview?"+tt.query), http.StatusBadRequest)
		})
	}
}

func TestHealth(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{})
	r := dashtest.Get(t, f.Root+"api/health")
	if r.Status != http.StatusOK {
		t.Fatalf("status %d: %s", r.Status, r.Body)
	}
	var h timeseries.Health
	if err := json.Unmarshal([]byte(r.Body), &h); err != nil {
		t.Fatal(err)
	}
	want := f.Rec.Health()
	if !h.RedisUp || !h.LastFlush.Equal(dashtest.Now) || h.PendingHits != want.PendingHits || h.Series != want.Series || h.Series != 4 {
		t.Errorf("health %+v, want %+v", h, want)
	}

	// Pending hits show up before they are flushed.
	c, _ := f.Rec.Counter("hits")
	c.Inc()
	c.Inc()
	if err := json.Unmarshal([]byte(dashtest.Get(t, f.Root+"api/health").Body), &h); err != nil {
		t.Fatal(err)
	}
	if h.PendingHits != 2 {
		t.Errorf("pending hits %d, want 2", h.PendingHits)
	}

	bare := dashtest.New(t, dashtest.Options{NoHealth: true, NoTraffic: true})
	checkError(t, dashtest.Get(t, bare.Root+"api/health"), http.StatusNotFound)
}

// TestHealthProbe: api/health answers 503 when recording does not work, so
// it serves as a probe.
func TestHealthProbe(t *testing.T) {
	// The recorder of the fixture flushes hourly (the test flushes by
	// hand); the probe is told the interval of a real one.
	f := dashtest.New(t, dashtest.Options{FlushInterval: time.Second})
	status := func() (int, string) {
		r := dashtest.Get(t, f.Root+"api/health")
		var h struct {
			OK      bool   `json:"ok"`
			Problem string `json:"problem"`
		}
		if err := json.Unmarshal([]byte(r.Body), &h); err != nil {
			t.Fatalf("%d %s: %v", r.Status, r.Body, err)
		}
		if h.OK != (r.Status == http.StatusOK) {
			t.Errorf("status %d with ok %v", r.Status, h.OK)
		}
		return r.Status, h.Problem
	}
	if s, p := status(); s != http.StatusOK {
		t.Fatalf("healthy: %d %s", s, p)
	}

	// No flush for more than three intervals while hits are pending.
	c, _ := f.Rec.Counter("hits")
	c.Inc()
	f.Clock.Advance(2 * time.Second)
	if s, p := status(); s != http.StatusOK {
		t.Errorf("2 s after the last flush: %d %s", s, p)
	}
	f.Clock.Advance(2 * time.Second)
	if s, p := status(); s != http.StatusServiceUnavailable || !strings.Contains(p, "no flush") {
		t.Errorf("4 s after the last flush with a hit pending: %d %q", s, p)
	}
	f.Flush(t)
	if s, p := status(); s != http.StatusOK {
		t.Errorf("after a flush: %d %s", s, p)
	}

	// Redis down: the recorder's failed flush, and an idle recorder too.
	f.Srv.Stop()
	if s, p := status(); s != http.StatusServiceUnavailable || !strings.Contains(p, "redis") {
		t.Errorf("Redis down, recorder idle: %d %q", s, p)
	}
	c.Inc()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := f.Rec.Flush(ctx); err == nil {
		t.Fatal("flush with Redis down succeeded")
	}
	if s, p := status(); s != http.StatusServiceUnavailable || !strings.Contains(p, "last flush failed") {
		t.Errorf("Redis down, flush failed: %d %q", s, p)
	}
	f.Srv.Restart()
	f.Flush(t)
	if s, p := status(); s != http.StatusOK {
		t.Errorf("Redis back: %d %s", s, p)
	}
}

// TestPanicIsGeneric: a panic below a handler answers a generic 500; its
// value stays in the log.
func TestPanicIsGeneric(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{})
	f.Ents.SetPanics(true)
	r := dashtest.Get(t, f.Root+"api/entities/post/top?field=views")
	checkError(t, r, http.StatusInternalServerError)
	if strings.Contains(r.Body, "secret") || strings.Contains(r.Body, "deadbeef") {
		t.Errorf("panic value reaches the client: %s", r.Body)
	}
}

func TestEntities(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{})
	tests := []struct {
		name, path string
		want       string
	}{
		{"kinds", "api/entities",
			`{"kinds":[{"name":"post","fields":["views","replies","likes","favorites"]},{"name":"user","fields":["posts","followers"]}]}`},
		{"one, fields in declared order", "api/entities/post/7",
			`{"kind":"post","id":"7","counts":{"views":12,"replies":0,"likes":3,"favorites":0}}`},
		{"one never counted", "api/entities/user/42",
			`{"kind":"user","id":"42","counts":{"posts":0,"followers":0}}`},
		{"batch, in the order asked", "api/entities/post?ids=9,7,100",
			`{"kind":"post","entities":[{"id":"9","counts":{"views":12,"replies":0,"likes":0,"favorites":1}},{"id":"7","counts":{"views":12,"replies":0,"likes":3,"favorites":0}},{"id":"100","counts":{"views":0,"replies":0,"likes":0,"favorites":0}}]}`},
		{"batch with spaces", "api/entities/user?ids=1,%201",
			`{"kind":"user","entities":[{"id":"1","counts":{"posts":2,"followers":5}},{"id":"1","counts":{"posts":2,"followers":5}}]}`},
		{"top", "api/entities/post/top?field=views&n=10",
			`{"kind":"post","field":"views","top":[{"id":"3","count":40},{"id":"7","count":12},{"id":"9","count":12}]}`},
		{"top, n bounds the list", "api/entities/post/top?field=views&n=1",
			`{"kind":"post","field":"views","top":[{"id":"3","count":40}]}`},
		{"top, default n", "api/entities/user/top?field=followers",
			`{"kind":"user","field":"followers","top":[{"id":"1","count":5}]}`},
		{"top of a field nobody counted", "api/entities/post/top?field=likes&n=5",
			`{"kind":"post","field":"likes","top":[{"id":"7","count":3}]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := dashtest.Get(t, f.Root+tt.path)
			if r.Status != http.StatusOK {
				t.Fatalf("status %d: %s", r.Status, r.Body)
			}
			if got := strings.TrimSpace(r.Body); got != tt.want {
				t.Errorf("body\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestEntitiesBadInput(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{})
	ids := func(n int) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprint(i + 1)
		}
		return strings.Join(parts, ",")
	}
	tests := []struct {
		name, path string
		status     int
	}{
		{"unknown kind", "api/entities/thread/7", 404},
		{"unknown kind, batch", "api/entities/thread?ids=1", 404},
		{"unknown kind, top", "api/entities/thread/top?field=views", 404},
		{"id not a number", "api/entities/post/seven", 400},
		{"id too large", "api/entities/post/9223372036854775808", 400},
		{"id fractional", "api/entities/post/7.5", 400},
		{"ids missing", "api/entities/post", 400},
		{"ids empty", "api/entities/post?ids=", 400},
		{"ids with a gap", "api/entities/post?ids=1,,2", 400},
		{"ids not numbers", "api/entities/post?ids=1,two", 400},
		{"too many ids", "api/entities/post?ids=" + ids(dashboard.MaxIDs+1), 400},
		{"field missing", "api/entities/post/top", 400},
		{"unknown field", "api/entities/post/top?field=shares", 400},
		{"field of another kind", "api/entities/post/top?field=followers", 400},
		{"n zero", "api/entities/post/top?field=views&n=0", 400},
		{"n too large", "api/entities/post/top?field=views&n=101", 400},
		{"n not a number", "api/entities/post/top?field=views&n=ten", 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkError(t, dashtest.Get(t, f.Root+tt.path), tt.status)
		})
	}
	// The most ids allowed are fine.
	if r := dashtest.Get(t, f.Root+"api/entities/post?ids="+ids(dashboard.MaxIDs)); r.Status != http.StatusOK {
		t.Errorf("%d ids: status %d", dashboard.MaxIDs, r.Status)
	}

	// A failing store is the server's problem, not the client's.
	f.Ents.SetBroken(true)
	for _, path := range []string{"api/entities/post/7", "api/entities/post?ids=1", "api/entities/post/top?field=views"} {
		checkError(t, dashtest.Get(t, f.Root+path), http.StatusServiceUnavailable)
	}

	bare := dashtest.New(t, dashtest.Options{NoEntities: true, NoTraffic: true})
	for _, path := range []string{"api/entities", "api/entities/post/7", "api/entities/post?ids=1", "api/entities/post/top?field=views"} {
		checkError(t, dashtest.Get(t, bare.Root+path), http.StatusNotFound)
	}
}

// TestRedisDown: reads fail with 503 while Redis is down, and work again
// when it is back, with nothing lost.
func TestRedisDown(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{})
	f.Srv.Stop()
	for _, path := range []string{"api/counters", "api/counters/hits?precision=5", "api/overview?precision=5", "api/health",
		"api/forecast/hits?precision=5", "api/anomalies?precision=5"} {
		r := dashtest.Get(t, f.Root+path)
		if r.Status != http.StatusServiceUnavailable {
			t.Errorf("%s with Redis down: %d %s", path, r.Status, r.Body)
		}
		// The client learns that the backend failed, not where or how.
		for _, leak := range []string{"dial", "127.0.0.1", "refused", "timeseries:"} {
			if strings.Contains(r.Body, leak) {
				t.Errorf("%s: the answer %s leaks %q", path, r.Body, leak)
			}
		}
	}
	f.Srv.Restart()
	r := dashtest.Get(t, f.Root+"api/counters/hits?precision=86400")
	if r.Status != http.StatusOK || !strings.Contains(r.Body, `"count":10`) {
		t.Errorf("after restart: %d %s", r.Status, r.Body)
	}
}

func TestConfigErrors(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{NoTraffic: true})
	tests := []struct {
		name string
		cfg  dashboard.Config
	}{
		{"no store", dashboard.Config{}},
		{"poll too fast", dashboard.Config{Store: f.Store, PollInterval: dashboard.MinPollInterval / 2}},
		{"overview negative", dashboard.Config{Store: f.Store, Overview: -1}},
		{"overview too large", dashboard.Config{Store: f.Store, Overview: dashboard.MaxOverview + 1}},
		{"timeout negative", dashboard.Config{Store: f.Store, Timeout: -1}},
		{"visitors series not a name", dashboard.Config{Store: f.Store, VisitorsSeries: "hits\n"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := dashboard.Handler(tt.cfg); err == nil || !strings.HasPrefix(err.Error(), "dashboard: ") {
				t.Errorf("Handler: err = %v, want a dashboard: error", err)
			}
		})
	}
}

func TestEntityTopLabels(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{Labels: func(_ context.Context, kind string, ids []int64) (map[int64]string, error) {
		if kind != "post" {
			return nil, errors.New("no labels for " + kind)
		}
		return map[int64]string{3: "hello world", 7: `<b>"seven"</b>`}, nil // 9 left out
	}})
	tests := []struct{ path, want string }{
		{"api/entities/post/top?field=views&n=10",
			`{"kind":"post","field":"views","top":[{"id":"3","count":40,"label":"hello world"},{"id":"7","count":12,"label":"\u003cb\u003e\"seven\"\u003c/b\u003e"},{"id":"9","count":12}]}`},
		// A failing hook leaves the list as it was.
		{"api/entities/user/top?field=followers", `{"kind":"user","field":"followers","top":[{"id":"1","count":5}]}`},
	}
	for _, tt := range tests {
		r := dashtest.Get(t, f.Root+tt.path)
		if r.Status != http.StatusOK || strings.TrimSpace(r.Body) != tt.want {
			t.Errorf("%s = %d %s\nwant %s", tt.path, r.Status, r.Body, tt.want)
		}
	}
}

// Without a FlushInterval of its own the probe takes the recorder's, from
// its Health: an hourly recorder is not late after 4 s, but is after 3 h.
// The probe reads the recorder's Health as it stood with the hit pending:
// moving the manual clock 3 h fires the recorder's hourly tick, whose
// flush would write the hit, sooner or later, as the probe reads.
func TestHealthProbeUsesRecorderInterval(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{})
	c, _ := f.Rec.Counter("hits")
	c.Inc()
	pending := f.Rec.Health()
	if pending.PendingHits == 0 || pending.FlushInterval != time.Hour {
		t.Fatalf("the recorder's health: %d hits pending, interval %v; want 1 and 1h", pending.PendingHits, pending.FlushInterval)
	}
	h, err := dashboard.Handler(dashboard.Config{Store: f.Store, Health: healthAt{pending}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	f.Clock.Advance(4 * time.Second)
	if r := dashtest.Get(t, srv.URL+"/api/health"); r.Status != http.StatusOK {
		t.Errorf("4 s into an hourly interval: %d %s", r.Status, r.Body)
	}
	f.Clock.Advance(3 * time.Hour)
	if r := dashtest.Get(t, srv.URL+"/api/health"); r.Status != http.StatusServiceUnavailable || !strings.Contains(r.Body, "no flush for more than") {
		t.Errorf("3 h without a flush of an hourly recorder: %d %s", r.Status, r.Body)
	}
}

// healthAt reports one Health, taken from a recorder at one moment.
type healthAt struct{ h timeseries.Health }

func (a healthAt) Health() timeseries.Health { return a.h }

// Open dashboards poll the same view at once: identical overview reads
// that arrive while one is under way share it, one Redis read for all.
func TestOverviewReadsShared(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{})
	f.Srv.Do("CONFIG", "RESETSTAT")
	f.Srv.Pause() // the first read waits on Redis; the others join it
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i] = dashtest.Get(t, f.Root+"api/overview?precision=5&n=24").Status
		}()
	}
	time.Sleep(300 * time.Millisecond)
	f.Srv.Resume()
	wg.Wait()
	for i, code := range codes {
		if code != http.StatusOK {
			t.Errorf("read %d: %d", i, code)
		}
	}
	stats, _ := redis.String(f.Srv.Do("INFO", "commandstats"), nil)
	// A listing asks once whether the known set reads by prefix.
	if !strings.Contains(stats, "cmdstat_zlexcount:calls=1,") {
		t.Errorf("8 identical overview reads listed the series more than once:\n%s", stats)
	}
}

// Hits that arrive after an idle spell are not late: the flushes that had
// nothing to write count as flushes.
func TestHealthProbeAfterIdle(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{FlushInterval: time.Second, NoTraffic: true})
	f.Clock.Advance(10 * time.Second)
	f.Flush(t) // nothing to write: the flusher is alive all the same
	c, _ := f.Rec.Counter("hits")
	c.Inc()
	if r := dashtest.Get(t, f.Root+"api/health"); r.Status != http.StatusOK {
		t.Errorf("a hit just after an empty flush: %d %s", r.Status, r.Body)
	}
}
