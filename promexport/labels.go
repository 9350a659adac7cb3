package promexport

import "strings"

// classSep joins a series' base and its status class, as in
// "GET /posts/:id status:5xx"; an app-wide class is "status:5xx" alone.
const classSep = " status:"

// request is what a series' name says of the requests it counts.
type request struct {
	method string // "GET"; empty for a series that is not a route's
	route  string // "/posts/:id", or the name of a non-route series such as "unmatched"
	code   string // the status class, "2xx" … "5xx" or "other"; empty for every class
}

// requestOf reads a series name as the middlewares write them. ok is
// false for the series of the whole app ("hits", "status:2xx") and for
// app-named ones: only a route's series ("GET /posts/:id", with or
// without a class) and the classes of another base ("unmatched
// status:4xx") describe requests to one route.
func requestOf(name string) (r request, ok bool) {
	if strings.HasPrefix(name, "status:") {
		return request{}, false
	}
	base, class, hasClass := cutClass(name)
	if method, path, isRoute := splitRoute(base); isRoute {
		return request{method: method, route: path, code: class}, true
	}
	if hasClass {
		return request{route: base, code: class}, true
	}
	return request{}, false
}

// cutClass splits "<base> status:<class>".
func cutClass(name string) (base, class string, ok bool) {
	i := strings.LastIndex(name, classSep)
	if i <= 0 {
		return name, "", false
	}
	return name[:i], name[i+len(classSep):], true
}

// splitRoute splits "<METHOD> /<path>", METHOD being upper-case letters.
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
