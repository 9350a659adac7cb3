// Package seriesname is the grammar of the series names Pulse's
// middlewares write and its readers parse: the app's series, the routes'
// ("GET /posts/:id"), the unmatched requests', the status classes'
// ("status:5xx", "GET /posts/:id status:5xx") and the slow requests'
// ("slow:250ms GET /posts/:id"). Every part is spelled here and nowhere
// else; timeseries and adapter export what users need of it.
package seriesname

import "strings"

// The names of the series every adapter writes besides the routes'.
const (
	// Hits is the series of every counted request.
	Hits = "hits"
	// Unmatched is the route series of the requests no route matched.
	Unmatched = "unmatched"
	// OtherMethod stands for every method outside Methods' standard set.
	OtherMethod = "OTHER"
)

const (
	statusPrefix = "status:"
	classSep     = " " + statusPrefix // joins a series and its status class
	slowPrefix   = "slow:"
	routeSep     = " " // joins a route's method and template
)

// Methods are the methods a route series' name starts with: the standard
// ones (RFC 9110's and PATCH), as written, then OtherMethod.
var Methods = [...]string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT", "OPTIONS", "TRACE", OtherMethod}

// Other is the index of OtherMethod in Methods.
const Other = len(Methods) - 1

// MethodIndex is the index of method in Methods: Other for a method
// outside the standard set.
func MethodIndex(method string) int {
	for i, s := range Methods[:Other] {
		if s == method {
			return i
		}
	}
	return Other
}

// Method is method when it is in the standard set, else OtherMethod.
func Method(method string) string { return Methods[MethodIndex(method)] }

// Route is the series of the requests of method that matched route:
// "GET /posts/:id".
func Route(method, route string) string { return Method(method) + routeSep + route }

// SplitRoute reads a name Route wrote. ok is false for any other name.
func SplitRoute(name string) (method, route string, ok bool) {
	method, route, ok = strings.Cut(name, routeSep)
	if !ok || !strings.HasPrefix(route, "/") || Methods[MethodIndex(method)] != method {
		return "", "", false
	}
	return method, route, true
}

// classes are the status classes by status/100, 0 for a status outside
// 100 to 599.
var classes = [...]string{"other", "1xx", "2xx", "3xx", "4xx", "5xx"}

// Class is the class of status: "2xx" for 200 to 299, "other" outside
// 100 to 599.
func Class(status int) string {
	if c := status / 100; c >= 1 && c < len(classes) {
		return classes[c]
	}
	return classes[0]
}

func isClass(s string) bool {
	for _, c := range classes {
		if c == s {
			return true
		}
	}
	return false
}

// Status is the app's series of status's class: "status:5xx".
func Status(status int) string { return statusPrefix + Class(status) }

// CutStatus reads a name Status wrote: its class. ok is false for any
// other name.
func CutStatus(name string) (class string, ok bool) {
	class, ok = strings.CutPrefix(name, statusPrefix)
	if !ok || !isClass(class) {
		return "", false
	}
	return class, true
}

// WithClass is the series of status's class among series' requests:
// "GET /posts/:id status:5xx", "unmatched status:4xx".
func WithClass(series string, status int) string { return series + classSep + Class(status) }

// CutClass reads a name WithClass wrote: the series and the class. ok is
// false for any other name, the app's classes ("status:5xx") among them.
func CutClass(name string) (series, class string, ok bool) {
	i := strings.LastIndex(name, classSep)
	if i <= 0 || !isClass(name[i+len(classSep):]) {
		return name, "", false
	}
	return name[:i], name[i+len(classSep):], true
}

// Slow is the series of the requests of series that took longer than the
// threshold written as text: "slow:250ms GET /posts/:id".
func Slow(series, text string) string { return slowPrefix + text + routeSep + series }

// CutSlow reads a name Slow wrote: the series and the threshold's text,
// unchecked. ok is false for any other name.
func CutSlow(name string) (series, text string, ok bool) {
	rest, ok := strings.CutPrefix(name, slowPrefix)
	if !ok {
		return "", "", false
	}
	text, series, ok = strings.Cut(rest, routeSep)
	if !ok || text == "" || series == "" {
		return "", "", false
	}
	return series, text, true
}
