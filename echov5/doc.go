// Package echov5 counts the requests of an Echo v5 app in Pulse time
// series and mounts the Pulse dashboard on it. It is a module of its own,
// so that apps on Echo v4 do not download Echo v5, nor the reverse:
//
//	go get github.com/pulse-dev/pulse/echov5
//
// # Counting requests
//
// Use Hits first, so every other middleware sits inside it:
//
//	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool})
//	if err != nil {
//		return err
//	}
//	defer rec.Close(ctx)
//	e := echo.New()
//	e.Use(echov5.HitsWithConfig(echov5.HitsConfig{
//		Recorder:      rec,
//		Routes:        true, // "GET /posts/:id", never the raw URL
//		StatusClasses: true, // "status:2xx" …
//		SeriesName: func(c *echo.Context) string { // optional, capped
//			if t := c.Request().Header.Get("X-Tenant"); t != "" {
//				return "tenant:" + t
//			}
//			return "" // no series of its own
//		},
//	}))
//	e.Use(middleware.Recover()) // a panic counts as its 500, inside Hits or out
//
// echov5.Hits(rec) is the same with every field at its default: the
// series "hits" only. Counting is an atomic add per series; the Recorder
// writes to Redis in the background, so a request never waits on Redis
// nor fails because of it, and a request on a known route allocates
// nothing more than Echo does.
//
// Requests the router matched to no route, and answered 404 or 405 (Echo's
// own answers, a RouteNotFound route's, a group's catch-all), are counted
// under "unmatched": Echo tells them by the route info it sets,
// echo.NotFoundRouteName, echo.MethodNotAllowedRouteName or the method
// echo.RouteNotFound. A matched route whose handler answers 404 stays
// under its route.
//
// # The status counted
//
// It is the one written to the client. When the handler returns an error
// and wrote nothing, Echo's error handler has not run yet, so the status
// comes from the error the way echo.StatusCode reads it: an
// *echo.HTTPError's code, a sentinel's such as echo.ErrNotFound, any
// error with a StatusCode() int method, 500 for any other error:
//
//	e.GET("/posts/:id", func(c *echo.Context) error {
//		return echo.ErrNotFound // counted as status:4xx under GET /posts/:id
//	})
//
// An app whose error handler answers otherwise (say 503 for every error)
// sets HandleError: the middleware then calls e.HTTPErrorHandler itself,
// counts what it wrote, and returns nil, so the handler still runs once.
//
// # The dashboard
//
// Package github.com/pulse-dev/pulse/echov5/mount serves it under a
// prefix, behind the app's own login; it is apart from this package, so
// that an app that only counts links no dashboard:
//
//	err := mount.Dashboard(e, "/dashboard",
//		dashboard.Config{Store: rec.Store(), Health: rec},
//		middleware.BasicAuth(func(c *echo.Context, user, pass string) (bool, error) {
//			return subtle.ConstantTimeCompare([]byte(user+":"+pass), []byte(login)) == 1, nil
//		}))
//
// Its guard runs before the login: every request under the prefix is
// marked with timeseries.Skip, so watching the dashboard, and a refused
// login, are not counted, and every answer, the login's 401 included,
// carries the dashboard's security headers.
//
// # Skip
//
// A handler or middleware keeps its request out of the counts, whatever
// it answers, with timeseries.Skip, given the context's response (Hits
// puts a writer that takes the mark under it, for as long as the request
// runs):
//
//	e.GET("/healthz", func(c *echo.Context) error {
//		timeseries.Skip(c.Response())
//		return c.NoContent(http.StatusNoContent)
//	})
//
// HitsConfig.Skipper decides the same before the handler runs.
package echov5
