// Package pulsehttp counts the requests of a net/http app in Pulse time
// series: every request in "hits", and optionally one series per route
// and per status class, at all the precisions of the Recorder.
//
// # Mounting
//
// The middleware goes directly around the app's http.ServeMux, so that it
// sees the pattern the mux matched:
//
//	pool := &redis.Pool{MaxIdle: 8, DialContext: func(ctx context.Context) (redis.Conn, error) {
//		return redis.DialURLContext(ctx, os.Getenv("REDIS_URL"), redis.DialConnectTimeout(time.Second),
//			redis.DialReadTimeout(2*time.Second), redis.DialWriteTimeout(2*time.Second))
//	}}
//	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool})
//	if err != nil {
//		return err
//	}
//	defer rec.Close(ctx) // after the server stopped: writes the last hits
//
//	mux := http.NewServeMux()
//	mux.HandleFunc("GET /posts/{id}", showPost)
//	mux.HandleFunc("POST /posts", createPost)
//
//	srv := &http.Server{Addr: ":8080", Handler: pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{
//		Recorder:      rec,
//		Routes:        true, // "GET /posts/{id}", never the raw URL
//		StatusClasses: true, // "status:2xx" …
//	})(mux)}
//
// Hits(rec) is the same with hits only. Counting is an atomic add per
// series and allocates nothing; the Recorder writes to Redis in the
// background, so a request never waits on Redis nor fails because of it.
//
// # Configuration
//
// HitsConfig's zero fields take the values of DefaultHitsConfig:
//
//	pulsehttp.HitsConfig{
//		Recorder:      rec,                   // required
//		HitsName:      "hits",                // every counted request
//		Routes:        false,                 // a series per route
//		RouteName:     pulsehttp.PatternPath, // the route's path template
//		UnmatchedName: "unmatched",           // requests no route matched
//		StatusClasses: false,                 // status:1xx … status:5xx, status:other
//		Skipper:       nil,                   // requests not counted, decided up front
//		SeriesName:    nil,                   // one more series per request
//	}
//
// HitsWithConfig panics on an invalid config (no Recorder, a name Redis keys
// cannot hold); HitsConfig.ToMiddleware returns the error instead:
//
//	mw, err := cfg.ToMiddleware() // "pulsehttp: Recorder is nil", "pulsehttp: HitsName: …"
//
// # Routes
//
// With Routes, a request is also counted in "<METHOD> <path pattern>":
// the request's method and the path part of the ServeMux pattern it
// matched, so the series are as few as the app's patterns, whatever URLs
// clients send:
//
//	pattern                   request                        series
//	GET /posts/{id}           GET /posts/7                   GET /posts/{id}
//	/posts/{id}               GET /posts/7                   GET /posts/{id}
//	GET /posts/{id}           HEAD /posts/7                  HEAD /posts/{id}
//	/posts/{id}               PROPFIND /posts/7              OTHER /posts/{id}
//	GET docs.example.com/     GET http://docs.example.com/a  GET docs.example.com/
//	(none)                    GET /nowhere                   unmatched
//	GET /posts/{id}           DELETE /posts/7 (405)          unmatched
//	/files/                   GET /files (redirect)          GET /files/
//
// The mux's own answers, 404 and 405, are unmatched; a matched handler
// answering 404 (no such post) stays under its route. The trailing-slash
// redirect is counted under the pattern it redirects to, with its 3xx.
//
// ServeMux sets the pattern on the request it is given, so a handler
// between the middleware and the mux that passes a copy on
// (r.WithContext, http.StripPrefix, http.TimeoutHandler) hides it: those
// requests are unmatched. Mount such handlers inside the mux, per
// pattern, or outside the middleware. With GODEBUG=httpmuxgo121=1 the mux
// sets no pattern at all.
//
// # Other routers
//
// RouteName names the route of any router. It is read after the handler
// returned; "" means no route matched and folds into UnmatchedName. For
// chi, whose route context exists only inside the router, mount the
// middleware with the router's Use, not around the router:
//
//	r := chi.NewRouter()
//	r.Use(pulsehttp.HitsWithConfig(pulsehttp.HitsConfig{
//		Recorder: rec,
//		Routes:   true,
//		RouteName: func(r *http.Request) string {
//			if rc := chi.RouteContext(r.Context()); rc != nil {
//				return rc.RoutePattern() // "/posts/{id}"
//			}
//			return ""
//		},
//	}))
//	r.Get("/posts/{id}", showPost)
//
// # Statuses
//
// The status counted is the one the client is sent: the first final
// status the handler writes with WriteHeader, or 200 when it first
// writes, flushes or copies a body without one, or writes nothing at all.
// Informational statuses (103 Early Hints) before it are not counted.
//
// A handler that panics is counted as the 500 the server turns it into,
// unless it had already written a status, and the panic goes on up
// untouched, http.ErrAbortHandler included, to the server or to a
// recovering middleware outside this one. A recovering middleware inside
// this one is counted by what it writes.
//
// The writer handlers get keeps http.Flusher, http.Hijacker and
// io.ReaderFrom (io.Copy from a file still uses sendfile), and unwraps for
// http.NewResponseController, which so reaches the server's deadlines and
// full duplex. A hijacked connection counts as 101 Switching Protocols,
// which is what an upgrade such as a websocket answers on it, unless a
// status was written before.
//
// # Skipping requests
//
// Skipper decides before the handler runs; timeseries.Skip, the one mark
// every Pulse middleware reads, marks a request from inside, through any
// writer wrappers that have an Unwrap method:
//
//	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
//		timeseries.Skip(w) // probes are not traffic
//		io.WriteString(w, "ok")
//	})
//
// Called on a writer the middleware did not make, Skip does nothing. With
// two middlewares around a handler (two Recorders), one mark keeps the
// request out of both.
//
// # Naming series
//
// SeriesName adds one series per request, such as one per tenant. Names
// come from requests, so they are bounded: each new name takes one of the
// Recorder's timeseries.Config.MaxNames, and past the cap new names fold
// into the overflow series, so a hostile client cannot create keys
// without bound. An invalid name (control characters, too long) is
// counted in hits only.
//
//	SeriesName: func(r *http.Request) string {
//		if tenant := r.Header.Get("X-Tenant"); tenant != "" {
//			return "tenant:" + tenant
//		}
//		return "" // no series of its own
//	},
//
// # The dashboard
//
// Package github.com/pulse-dev/pulse/pulsehttp/mount serves the dashboard
// in front of the mux, behind the app's login; it is apart from this
// package, so that an app that only counts links no dashboard. Watching
// it is not traffic, nor is a request its login refuses:
//
//	app, err := mount.Dashboard(mux, "/dashboard", dashboard.Config{Store: rec.Store(), Health: rec}, login)
//	if err != nil {
//		return err
//	}
//	srv := &http.Server{Handler: pulsehttp.Hits(rec)(app)}
//
// It sits in front of the mux, so that a path with ".." or "//" under the
// prefix is the dashboard's to redirect, under the prefix, and not
// ServeMux's, which would be counted.
package pulsehttp
