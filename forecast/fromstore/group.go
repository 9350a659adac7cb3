package fromstore

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/internal/seriesname"
	"github.com/pulse-dev/pulse/timeseries"
)

// Event is one incident as a reader should see it once: the incident of
// its root series, and those of the related series that broke with it on
// the same side at the same time. A route's burst also shows in its
// status-class series, in the app's hits and in the status:* totals; the
// route is the root, they are Related.
type Event struct {
	forecast.Incident
	Related []forecast.Incident `json:"related,omitempty"`
}

// Group gathers incidents into events. Two incidents are related when
// they are at one precision, break to one side, overlap in time (within
// forecast.DefaultCloseAfter buckets), and their series are related: a
// route and its class series, or any series and the app's own ("hits",
// "status:*"). The root of an event is its route furthest out (by
// |Score|), else "hits", else its series furthest out. Events are sorted
// newest start first, the worst first among those that start together.
func Group(incidents []forecast.Incident) []Event {
	n := len(incidents)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	find := func(i int) int {
		for parent[i] != i {
			parent[i] = parent[parent[i]]
			i = parent[i]
		}
		return i
	}
	for i := range incidents {
		for j := i + 1; j < n; j++ {
			if related(incidents[i], incidents[j]) {
				parent[find(i)] = find(j)
			}
		}
	}
	groups := map[int][]forecast.Incident{}
	for i, in := range incidents {
		groups[find(i)] = append(groups[find(i)], in)
	}
	out := make([]Event, 0, len(groups))
	for _, g := range groups {
		out = append(out, event(g))
	}
	slices.SortFunc(out, func(a, b Event) int {
		if c := b.Start.Compare(a.Start); c != 0 {
			return c
		}
		if c := cmp.Compare(math.Abs(b.Score), math.Abs(a.Score)); c != 0 {
			return c
		}
		return cmp.Compare(a.Series, b.Series)
	})
	return out
}

// event makes the incidents of one group an event under its root.
func event(g []forecast.Incident) Event {
	slices.SortFunc(g, func(a, b forecast.Incident) int {
		if c := cmp.Compare(rank(a.Series), rank(b.Series)); c != 0 {
			return c
		}
		if c := cmp.Compare(math.Abs(b.Score), math.Abs(a.Score)); c != 0 {
			return c
		}
		return cmp.Compare(a.Series, b.Series)
	})
	return Event{Incident: g[0], Related: g[1:]}
}

// rank orders the candidates for an event's root: routes, then the app's
// hits, then the rest.
func rank(name string) int {
	if r, ok := timeseries.ParseRouteName(name); ok && r.Method != "" && r.Class == "" {
		return 0
	}
	if name == seriesname.Hits {
		return 1
	}
	return 2
}

// family is the route a series belongs to ("" for the app's own series:
// hits and the status:* totals, which every route feeds) and whether it
// belongs to the app as a whole.
func family(name string) (string, bool) {
	if name == seriesname.Hits {
		return "", true
	}
	r, ok := timeseries.ParseRouteName(name)
	if !ok {
		_, app := seriesname.CutStatus(name)
		return name, app
	}
	if r.Method != "" {
		return seriesname.Route(r.Method, r.Route), false
	}
	return r.Route, false
}

func related(a, b forecast.Incident) bool {
	if a.Precision != b.Precision || a.Direction != b.Direction || !overlap(a, b) {
		return false
	}
	fa, appA := family(a.Series)
	fb, appB := family(b.Series)
	return appA || appB || fa == fb
}

// overlap reports whether two incidents share time, within
// DefaultCloseAfter buckets.
func overlap(a, b forecast.Incident) bool {
	slack := time.Duration(forecast.DefaultCloseAfter) * a.Precision
	return !a.Start.After(b.End.Add(slack)) && !b.Start.After(a.End.Add(slack))
}
