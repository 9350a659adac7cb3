package dashboard_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
	"github.com/pulse-dev/pulse/timeseries"
)

// Minute buckets around dashtest.Now (dashtest.T0+10m2s): the last three are
// minute-120, minute-60 and minute, the still-open one.
var minute = timeseries.BucketStart(dashtest.Now.Unix(), 60)

// seedVisitors PFADDs visitors lo..hi-1 into one bucket of a series, as
// the recorder's write path does.
func seedVisitors(t *testing.T, f *dashtest.Fixture, name string, precision int, bucket int64, lo, hi int) {
	t.Helper()
	key, ok := f.Store.Schema().VisitorKey(precision, name, bucket)
	if !ok {
		t.Fatalf("%q keeps no visitors", name)
	}
	args := []any{key}
	for i := lo; i < hi; i++ {
		args = append(args, fmt.Sprint("visitor-", i))
	}
	f.Srv.Do("PFADD", args...)
}

// visitorsFixture is the known traffic with visitors of "hits": 0..9 at
// minute-120, 5..14 at minute-60 (5 of them again) and 100..102 in the
// open minute: 18 distinct, 23 by the sum of the buckets.
func visitorsFixture(t *testing.T) *dashtest.Fixture {
	f := dashtest.New(t, dashtest.Options{NoEntities: true})
	seedVisitors(t, f, "hits", 60, minute-120, 0, 10)
	seedVisitors(t, f, "hits", 60, minute-60, 5, 15)
	seedVisitors(t, f, "hits", 60, minute, 100, 103)
	seedVisitors(t, f, "hits", 60, minute-180, 500, 540)               // before the window
	f.Record(t, dashtest.Hit{Name: "x}y", At: 10 * time.Minute, N: 1}) // braces: no visitors can be kept
	return f
}

type visitorsAnswer struct {
	Name      string `json:"name"`
	Precision int    `json:"precision"`
	From      int64  `json:"from"`
	To        int64  `json:"to"`
	Current   int64  `json:"current"`
	Buckets   []struct {
		Time     int64 `json:"time"`
		Visitors int64 `json:"visitors"`
	} `json:"buckets"`
	Window struct {
		Visitors int64 `json:"visitors"`
		Hits     int64 `json:"hits"`
	} `json:"window"`
}

func TestVisitorsAPI(t *testing.T) {
	f := visitorsFixture(t)
	tests := []struct {
		name, query string
		from        int64
		counts      []int64
		window      int64
		hits        int64
	}{
		{"hits", "precision=60&last=3", minute - 120, []int64{10, 10, 3}, 18, 4},
		{"hits", fmt.Sprintf("precision=60&from=%d&to=%d", minute-120, minute-60), minute - 120, []int64{10, 10}, 15, 0},
		{"hits", fmt.Sprintf("precision=60&from=%d", minute-60), minute - 60, []int64{10, 3}, 13, 4},
		{"hits", "precision=60&last=1", minute, []int64{3}, 3, 4},
		{"hits", "precision=3600&last=2", timeseries.BucketStart(dashtest.Now.Unix(), 3600) - 3600, []int64{0, 0}, 0, 10},
		{dashtest.RouteName, "precision=60&last=3", minute - 120, []int64{0, 0, 0}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name+"?"+tt.query, func(t *testing.T) {
			var got visitorsAnswer
			getJSON(t, f.Root+"api/visitors/"+seg(tt.name)+"?"+tt.query, &got)
			var counts []int64
			for i, b := range got.Buckets {
				counts = append(counts, b.Visitors)
				if b.Time != tt.from+60*int64(i)*int64(got.Precision/60) {
					t.Errorf("bucket %d starts at %d", i, b.Time)
				}
			}
			if got.Name != tt.name || !slices.Equal(counts, tt.counts) || got.Window.Visitors != tt.window || got.Window.Hits != tt.hits {
				t.Errorf("got %+v; want buckets %v, window %d visitors and %d hits", got, tt.counts, tt.window, tt.hits)
			}
			if got.Current != timeseries.BucketStart(dashtest.Now.Unix(), got.Precision) || got.From != tt.from {
				t.Errorf("from %d current %d", got.From, got.Current)
			}
		})
	}
}

// The answer has exactly the documented keys.
func TestVisitorsShape(t *testing.T) {
	f := visitorsFixture(t)
	var raw map[string]json.RawMessage
	getJSON(t, f.Root+"api/visitors/hits?precision=60&last=2", &raw)
	var keys []string
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if want := []string{"buckets", "current", "from", "name", "precision", "to", "window"}; !slices.Equal(keys, want) {
		t.Errorf("keys %v, want %v", keys, want)
	}
	if b := string(raw["buckets"]); b != `[{"time":`+fmt.Sprint(minute-60)+`,"visitors":10},{"time":`+fmt.Sprint(minute)+`,"visitors":3}]` {
		t.Errorf("buckets %s", b)
	}
	if w := string(raw["window"]); w != `{"visitors":13,"hits":4}` {
		t.Errorf("window %s", w)
	}
}

func TestVisitorsErrors(t *testing.T) {
	f := visitorsFixture(t)
	base := f.Root + "api/visitors/hits"
	for _, tc := range []struct {
		url    string
		status int
		says   string
	}{
		{base, http.StatusBadRequest, "precision is required"},
		{base + "?precision=5", http.StatusBadRequest, "no visitors are kept at precision 5"},
		{f.Root + "api/visitors/" + seg("GET /nothing") + "?precision=5", http.StatusBadRequest, "no visitors"},
		{base + "?precision=7", http.StatusBadRequest, "not kept"},
		{base + "?precision=minute", http.StatusBadRequest, "not a number"},
		{base + "?precision=60&last=0", http.StatusBadRequest, "outside"},
		{base + "?precision=60&last=121", http.StatusBadRequest, "outside"},
		{base + "?precision=60&from=20&to=10", http.StatusBadRequest, "after"},
		{base + "?precision=60&from=1", http.StatusBadRequest, "of visitors may be read"},
		{base + "?precision=60&last=3&from=1", http.StatusBadRequest, "either"},
		{f.Root + "api/visitors/" + seg("bad\x01name") + "?precision=60", http.StatusBadRequest, "invalid series name"},
		{f.Root + "api/visitors/" + seg("GET /nothing") + "?precision=60", http.StatusNotFound, "no such series"},
		{f.Root + "api/visitors/" + seg("a}b") + "?precision=60", http.StatusNotFound, "no such series"},
		{f.Root + "api/visitors/" + seg("x}y") + "?precision=60", http.StatusNotFound, "no visitors are kept for this series"},
		// The path before the rename is gone, as any unknown path is.
		{f.Root + "api/uniques/hits?precision=60", http.StatusNotFound, "no such dashboard page or endpoint"},
	} {
		t.Run(strings.TrimPrefix(tc.url, f.Root), func(t *testing.T) {
			r := dashtest.Get(t, tc.url)
			checkError(t, r, tc.status)
			if !strings.Contains(r.Body, tc.says) {
				t.Errorf("body %s does not say %q", r.Body, tc.says)
			}
		})
	}
}
