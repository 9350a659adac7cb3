package adaptertest

import (
	"net/http"
	"testing"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/timeseries"
)

// errorRoutes return the framework's 418 and a plain error.
func errorRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/teapot", Kind: KindError, Code: http.StatusTeapot},
		{Method: http.MethodGet, Path: "/fail", Kind: KindError},
	}
}

// A handler's returned error counts as the status the framework's
// default error handler answers it with: the framework error's code, 500
// for a plain one.
func testErrors(t testing.TB, k *kit) {
	errorsAnswered(t, k, App{}, map[string]int{"/teapot": http.StatusTeapot, "/fail": http.StatusInternalServerError})
}

// With HandleError, a returned error counts as the status the app's own
// error handler wrote, whatever the error's code.
func testErrorHandler(t testing.TB, k *kit) {
	app := App{HandleError: true, ErrorStatus: http.StatusServiceUnavailable}
	errorsAnswered(t, k, app, map[string]int{"/teapot": http.StatusServiceUnavailable, "/fail": http.StatusServiceUnavailable})
}

// errorsAnswered serves errorRoutes in app, checks that each path is
// answered its status of want, and counted as it, once.
func errorsAnswered(t testing.TB, k *kit, app App, want map[string]int) {
	rec := k.recorder(t, k.prefix)
	app.Recorders, app.Routes = []*timeseries.Recorder{rec}, errorRoutes()
	s := k.serve(t, app)
	counts := map[string]int64{"hits": int64(len(want))}
	for p, code := range want {
		if got := s.hit(t, http.MethodGet, p); got != code {
			t.Errorf("GET %s answered %d, want %d", p, got, code)
		}
		route, class := k.name(http.MethodGet, p), adapter.StatusClassName(code)
		counts[route]++
		counts[class]++
		counts[route+" "+class]++
	}
	s.wait()
	k.exact(t, rec, counts)
}
