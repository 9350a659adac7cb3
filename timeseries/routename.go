package timeseries

import "strings"

// A RouteName is what the name of a series written by Pulse's
// middlewares says of the requests it counts: "GET /posts/:id" is
// Method "GET" and Route "/posts/:id"; "GET /posts/:id status:5xx" adds
// Class "5xx"; the classes of the unmatched requests, "unmatched
// status:4xx", have Route "unmatched" and no Method. Exporters use it to
// label a route's series.
type RouteName struct {
	Method string // upper-case letters; empty for a series that is not a route's
	Route  string // the route's template, or the base of a class series that is not a route's
	Class  string // "1xx" … "5xx" or "other"; empty for the whole route
}

// classSep joins a series' base and its status class.
const classSep = " status:"

// ParseRouteName reads name as the middlewares write it. ok is false
// for the series of the whole app ("hits", "status:2xx") and for
// app-named ones ("signups", "unmatched"): they count no single route.
func ParseRouteName(name string) (r RouteName, ok bool) {
	if strings.HasPrefix(name, "status:") {
		return RouteName{}, false
	}
	base, class, hasClass := cutClass(name)
	if method, path, isRoute := splitRoute(base); isRoute {
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
		if base, _, ok := cutClass(t.Name); ok {
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

func cutClass(name string) (base, class string, ok bool) {
	i := strings.LastIndex(name, classSep)
	if i <= 0 {
		return name, "", false
	}
	return name[:i], name[i+len(classSep):], true
}

// splitRoute splits "<METHOD> /<path>".
func splitRoute(base string) (method, path string, ok bool) {
	method, path, ok = strings.Cut(base, " ")
	if !ok || method == "" || !strings.HasPrefix(path, "/") {
		return "", "", false
	}
	for _, c := range method {
		if c < 'A' || c > 'Z' {
			return "", "", false
		}
	}
	return method, path, true
}
