package adaptertest

import (
	"net/http"
	"testing"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/timeseries"
)

// kitHooks are the config hooks row's: each reads a header of the kit.
var kitHooks = &Hooks{
	SeriesName: func(h Header) string { return h("X-Kit-Series") },
	VisitorID:  func(h Header) string { return h("X-Kit-Visitor") },
	Skipper:    func(h Header) bool { return h("X-Kit-Skip") == "yes" },
}

// A request of the hooks row: its series, visitor and skip headers.
type hooked struct{ series, visitor, skip string }

// The config's hooks are the adapter's: SeriesName adds a series (a name
// read from a buffer the framework reuses kept as it was), VisitorID
// names the visitor ("" none), Skipper leaves a request out.
func testHooks(t testing.TB, k *kit) {
	rec := k.recorder(t, k.prefix)
	s := k.serve(t, App{Recorders: []*timeseries.Recorder{rec}, Routes: basicRoutes(), Hooks: kitHooks})
	sent := []hooked{{"tenant-a", "v-1", ""}, {"tenant-b", "v-2", ""}, {"tenant-a", "v-1", ""},
		{"tenant-c", "v-3", ""}, {"tenant-a", "", ""}, {"tenant-d", "v-9", "yes"}, {"", "v-8", "yes"}}
	for _, r := range sent {
		s.hit(t, http.MethodGet, "/status/200", "X-Kit-Series", r.series, "X-Kit-Visitor", r.visitor, "X-Kit-Skip", r.skip)
	}
	s.wait()
	st := k.name(http.MethodGet, "/status/{code}")
	k.exact(t, rec, map[string]int64{"hits": 5, st: 5, "status:2xx": 5, st + " status:2xx": 5,
		"tenant-a": 3, "tenant-b": 1, "tenant-c": 1})

	ref, err := adapter.HitsConfig[string]{Recorder: rec, HitsName: expectedSeries,
		VisitorID: func(id string) string { return id }}.Meter(adapter.Glue[string]{})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range sent {
		if r.skip == "" {
			ref.Count(r.visitor, http.MethodGet, "", http.StatusOK, 0)
		}
	}
	flush(t, rec)
	// From one address and agent: one visitor if the ids were ignored.
	if got, want := dayVisitors(t, rec, "hits"), dayVisitors(t, rec, expectedSeries); got != want || want < 2 {
		t.Errorf("hits: %d visitors today, want %d: a sketch's count of the ids v-1, v-2, v-3", got, want)
	}
}
