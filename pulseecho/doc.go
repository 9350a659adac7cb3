// Package pulseecho counts the requests of an Echo v4 app in Pulse time
// series. It is a module of its own
// (go get github.com/pulse-dev/pulse/pulseecho), so apps on Echo v5
// (package echov5) or net/http (package pulsehttp) do not get Echo v4.
// Its name, like pulsegin's and pulsechi's, does not collide with Echo's
// own middleware package, which apps import beside it:
//
//	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool})
//	if err != nil {
//		return err
//	}
//	defer rec.Close(ctx)
//	e.Use(pulseecho.HitsWithConfig(pulseecho.HitsConfig{
//		Recorder:      rec,
//		Routes:        true, // "GET /posts/:id", never the raw URL
//		StatusClasses: true, // "status:2xx" …
//	}))
//
// Series are named by the route template ("GET /posts/:id"); requests no
// route matched (Echo's 404 and 405 stand-ins) fold into "unmatched", and
// methods outside the standard set into "OTHER". The naming, the caches of
// series and the status classes are shared with the Echo v5 and net/http
// middleware, so the three name the same request alike.
//
// Counting is an atomic add per series; the Recorder writes to Redis in
// the background, so a request never waits on Redis nor fails because of
// it.
//
// The status counted is the one written to the client. When the handler
// returns an error, Echo's error handler has not run yet, so the status
// is the one Echo's default error handler answers that error with (an
// *echo.HTTPError's code, or its Internal's when that is one too; 500
// for any other error, a wrapped *echo.HTTPError included); set
// HandleError to run the app's own error handler inside the middleware
// and count exactly what it wrote.
//
// A handler that panics is counted as the 500 it becomes, unless it had
// written a status, whether Echo's Recover sits inside Hits (and writes
// that 500) or outside it (the panic goes on up from Hits untouched).
//
// A handler or middleware keeps its request out of the counts with
// timeseries.Skip, given the context's response (Hits puts a writer that
// takes the mark under it, for as long as the request runs); Skipper
// decides the same before the handler runs:
//
//	e.GET("/healthz", func(c echo.Context) error {
//		timeseries.Skip(c.Response()) // probes are not traffic
//		return c.NoContent(http.StatusNoContent)
//	})
//
// The dashboard is mounted by package
// github.com/pulse-dev/pulse/pulseecho/mount, apart from this one, so
// that an app that only counts links no dashboard:
//
//	err := mount.Dashboard(e, "/dashboard", dashboard.Config{Store: rec.Store(), Health: rec},
//		echomw.BasicAuth(check))
package pulseecho
