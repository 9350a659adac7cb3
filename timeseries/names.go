package timeseries

import (
	"strings"
	"time"

	"github.com/pulse-dev/pulse/internal/seriesname"
)

// A RouteName is what the name of a series written by Pulse's
// middlewares says of the requests it counts: "GET /posts/:id" is
// Method "GET" and Route "/posts/:id"; "GET /posts/:id status:5xx" adds
// Class "5xx"; the classes of the unmatched requests, "unmatched
// status:4xx", have Route "unmatched" and no Method. Exporters use it to
// label a route's series.
type RouteName struct {
	Method string // a standard method or OTHER; empty for a series that is not a route's
	Route  string // the route's template, or the base of a class series that is not a route's
	Class  string // "1xx" … "5xx" or "other"; empty for the whole route
}

// ParseRouteName reads name as the middlewares write it. ok is false
// for the series of the whole app ("hits", "status:2xx") and for
// app-named ones ("signups", "unmatched"): they count no single route.
func ParseRouteName(name string) (r RouteName, ok bool) {
	base, class, hasClass := seriesname.CutClass(name)
	if method, path, isRoute := seriesname.SplitRoute(base); isRoute {
		return RouteName{Method: method, Route: path, Class: class}, true
	}
	if hasClass {
		return RouteName{Route: base, Class: class}, true
	}
	return RouteName{}, false
}

// RouteHits is the hits of one series that counts one route's requests.
type RouteHits struct {
	RouteName
	Hits int64
}

// RouteRequests picks from a recorder's totals the series that count
// one route's requests each, so that summing them counts every request
// once: a route's class series where it has classes, the route's own
// series where it has none (status classes off). The app's series and
// app-named ones are left out. Exporters label routes with it.
func RouteRequests(totals []SeriesTotal) []RouteHits {
	classed := map[string]bool{} // bases that have class series
	for _, t := range totals {
		if base, _, ok := seriesname.CutClass(t.Name); ok {
			classed[base] = true
		}
	}
	var out []RouteHits
	for _, t := range totals {
		r, ok := ParseRouteName(t.Name)
		if !ok || r.Class == "" && classed[t.Name] {
			continue
		}
		out = append(out, RouteHits{RouteName: r, Hits: t.Hits})
	}
	return out
}

// SlowSeries is the series that counts the requests of series name that
// took longer than threshold, for a Recorder whose Config.SlowThresholds
// has it: SlowSeries("GET /posts/:id", 500*time.Millisecond) is
// "slow:500ms GET /posts/:id". It is a series like any other, in the
// count hashes and the known set; its prefix keeps it apart from the
// routes and their status classes.
func SlowSeries(name string, threshold time.Duration) string {
	return seriesname.Slow(name, ThresholdText(threshold))
}

// ParseSlowSeries reads a name SlowSeries wrote: the series whose slow
// requests it counts and the threshold. ok is false for any other name.
func ParseSlowSeries(name string) (series string, threshold time.Duration, ok bool) {
	series, text, found := seriesname.CutSlow(name)
	if !found {
		return "", 0, false
	}
	threshold, err := time.ParseDuration(text)
	if err != nil || threshold <= 0 || ThresholdText(threshold) != text {
		return "", 0, false
	}
	return series, threshold, true
}

// ThresholdText is how SlowSeries writes a threshold: Go's duration text
// without its zero tails ("500ms", "1s", "1.5s", "2m", "1h30m").
func ThresholdText(t time.Duration) string {
	s := t.String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
