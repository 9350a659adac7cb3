package adapter

import (
	"fmt"
	"net/http"
)

// The names of the series every adapter writes, besides the routes'.
const (
	// DefaultHitsName is the series of every counted request.
	DefaultHitsName = "hits"
	// DefaultUnmatchedName is the route series of the requests no route
	// matched: a client cannot make series by asking for paths.
	DefaultUnmatchedName = "unmatched"
	// OtherMethod stands for every method outside the standard set in a
	// route series' name ("OTHER /posts/:id"): a client cannot make
	// series by inventing methods.
	OtherMethod = "OTHER"
)

// methodNames are the standard methods, which name route series
// themselves (RFC 9110's and PATCH), then OtherMethod.
var methodNames = [...]string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodConnect, http.MethodOptions, http.MethodTrace, OtherMethod,
}

// otherMethod is the index of OtherMethod.
const otherMethod = len(methodNames) - 1

func methodIndex(m string) int {
	for i, s := range methodNames[:otherMethod] {
		if s == m {
			return i
		}
	}
	return otherMethod
}

// MethodName is method when it is one of the standard set (GET, HEAD,
// POST, PUT, PATCH, DELETE, CONNECT, OPTIONS, TRACE, as written), else
// OtherMethod.
func MethodName(method string) string { return methodNames[methodIndex(method)] }

// RouteSeries is the series of the requests of method that matched
// route, a template as the router names it: "GET /posts/:id". The
// requests of no route count in Config.UnmatchedName instead.
func RouteSeries(method, route string) string { return MethodName(method) + " " + route }

// StatusClassName is the series of a status: "status:2xx" for 200 to 299,
// "status:other" outside 100 to 599. With routes, a route's series of a
// class is its name, a space and this: "GET /posts/:id status:2xx",
// "unmatched status:4xx".
func StatusClassName(status int) string {
	if class := status / 100; class >= 1 && class <= 5 {
		return fmt.Sprintf("status:%dxx", class)
	}
	return "status:other"
}
