package track

import (
	"fmt"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestCachesAreBounded: route and app-named series caches stop growing at
// MaxCachedNames, so a RouteName hook returning raw paths cannot grow the
// middleware's memory without bound; past it, names still count.
func TestCachesAreBounded(t *testing.T) {
	srv := redistest.Start(t)
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), MaxNames: 3 * MaxCachedNames, FlushInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	defer rec.Close(t.Context())
	tr, err := New(Config{Recorder: rec, Routes: true})
	if err != nil {
		t.Fatal(err)
	}
	const n = MaxCachedNames + 50
	for i := range n {
		tr.Record(Request{Method: "GET", Route: fmt.Sprintf("/raw/%d", i), Status: 200, Series: fmt.Sprintf("tenant-%d", i)})
	}
	if got := len(*tr.routes[methodIndex("GET")].Load()); got != MaxCachedNames {
		t.Errorf("GET route cache holds %d names, want %d", got, MaxCachedNames)
	}
	if got := len(*tr.named.Load()); got != MaxCachedNames {
		t.Errorf("named cache holds %d names, want %d", got, MaxCachedNames)
	}
	if err := rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	if got := srv.HashSum("count:86400:GET /raw/" + fmt.Sprint(n-1)); got != 1 {
		t.Errorf("a route past the cache counted %d, want 1", got)
	}
}

func TestStatusClassName(t *testing.T) {
	for status, want := range map[int]string{99: "status:other", 100: "status:1xx", 204: "status:2xx", 404: "status:4xx", 599: "status:5xx", 600: "status:other", 0: "status:other"} {
		if got := StatusClassName(status); got != want {
			t.Errorf("StatusClassName(%d) = %q, want %q", status, got, want)
		}
	}
}
