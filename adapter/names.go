package adapter

import "github.com/pulse-dev/pulse/internal/seriesname"

// The names of the series every adapter writes, besides the routes'.
const (
	// DefaultHitsName is the series of every counted request.
	DefaultHitsName = seriesname.Hits
	// DefaultUnmatchedName is the route series of the requests no route
	// matched: a client cannot make series by asking for paths.
	DefaultUnmatchedName = seriesname.Unmatched
	// OtherMethod stands for every method outside the standard set in a
	// route series' name ("OTHER /posts/:id"): a client cannot make
	// series by inventing methods.
	OtherMethod = seriesname.OtherMethod
)

// otherMethod is the index of OtherMethod.
const otherMethod = seriesname.Other

func methodIndex(m string) int { return seriesname.MethodIndex(m) }

// MethodName is method when it is one of the standard set (GET, HEAD,
// POST, PUT, PATCH, DELETE, CONNECT, OPTIONS, TRACE, as written), else
// OtherMethod.
func MethodName(method string) string { return seriesname.Method(method) }

// RouteSeries is the series of the requests of method that matched
// route, a template as the router names it: "GET /posts/:id". The
// requests of no route count in Config.UnmatchedName instead.
func RouteSeries(method, route string) string { return seriesname.Route(method, route) }

// StatusClassName is the series of a status: "status:2xx" for 200 to 299,
// "status:other" outside 100 to 599. With routes, a route's series of a
// class is its name, a space and this: "GET /posts/:id status:2xx",
// "unmatched status:4xx".
func StatusClassName(status int) string { return seriesname.Status(status) }

// classSeries is the series of status's class among series' requests:
// "GET /posts/:id status:2xx".
func classSeries(series string, status int) string { return seriesname.WithClass(series, status) }
