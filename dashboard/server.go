package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// server holds what every request needs.
type server struct {
	cfg     Config
	store   storeView // cfg.Store, and its schema
	page    *pageData
	echarts *asset // nil: loaded from EchartsCDN
	reads   *reader
	started time.Time // stands in for the last flush until there is one
	mux     *http.ServeMux
}

func newServer(cfg Config) (*server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	store := storeView{Store: cfg.Store, Schema: cfg.Store.Schema()}
	s := &server{cfg: cfg, store: store, reads: newReader(cfg, store), started: store.Now()}
	switch {
	case len(cfg.Echarts) > 0:
		s.echarts = newAsset(echartsFile, cfg.Echarts)
	case assets[echartsFile] != nil:
		s.echarts = assets[echartsFile]
	}
	if s.page, err = newPageData(cfg, s.echarts); err != nil {
		return nil, err
	}
	s.mux = s.routes()
	return s, nil
}

// SecurityHeaders sets what every dashboard answer carries: no content
// sniffing, no framing, no referrer sent off the origin. An adapter that
// mounts the dashboard behind middleware of its own (a login) sets them
// first, so that those answer with the same headers.
func SecurityHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
}

// storeView is the Store the handlers read, with its schema (defaults
// filled in) as package series checks precisions by.
type storeView struct {
	*timeseries.Store
	Schema timeseries.Schema
}

// Now is the time by the store's clock.
func (v storeView) Now() time.Time { return v.Clock().Now() }

// Handler returns the dashboard as a net/http handler with its root at
// "/". To serve it under a prefix, use the mount package of the router:
// pulsehttp/mount for net/http and chi, pulseecho/mount for Echo v4,
// echov5/mount, pulsegin/mount. Each answers the prefix with and without
// its slash, keeps the dashboard's requests (redirects and refusals
// included) out of the counts, and takes a login to put in front of it;
// a hand-made http.StripPrefix on a ServeMux leaves the mux's own
// redirects to be counted.
//
// Every request is marked with timeseries.Skip, so an app that counts its
// traffic with pulsehttp does not count the dashboard's.
func Handler(cfg Config) (http.Handler, error) {
	s, err := newServer(cfg)
	if err != nil {
		return nil, err
	}
	s.logSource()
	return s, nil
}

// logSource says once, at start, where the page takes echarts from.
func (s *server) logSource() {
	if s.echarts != nil {
		return
	}
	s.cfg.Logger.Info("pulse dashboard: echarts is not embedded, so the page loads it from "+EchartsCDN+
		" (integrity-checked) and needs internet access; for an offline dashboard, embed echarts.min.js and set dashboard.Config.Echarts",
		"version", EchartsVersion)
}

// routes maps the dashboard's paths, relative to its root. No pattern
// names a method: ServeHTTP has refused all but GET and HEAD already.
func (s *server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/{$}", s.handlePage)
	mux.HandleFunc("/static/{file}", s.handleAsset)
	mux.HandleFunc("/api/counters", s.handleCounters)
	mux.HandleFunc("/api/counters/{name}", answer(s, s.samples))
	mux.HandleFunc("/api/overview", s.handleOverview)
	mux.HandleFunc("/api/durations/{name}", answer(s, s.durations))
	mux.HandleFunc("/api/visitors/{name}", answer(s, s.visitors))
	mux.HandleFunc("/api/routes", s.handleRoutes)
	mux.HandleFunc("/api/forecast/{name}", answer(s, s.forecast))
	mux.HandleFunc("/api/anomalies", answer(s, s.anomalies))
	mux.HandleFunc("/api/incidents", answer(s, s.incidents))
	mux.HandleFunc("/api/health", s.handleHealth)
	mux.HandleFunc("/api/alerts", s.handleAlerts)
	mux.HandleFunc("/api/entities", s.handleKinds)
	mux.HandleFunc("/api/entities/{kind}", s.entityHandler(handleEntityBatch))
	mux.HandleFunc("/api/entities/{kind}/top", s.entityHandler(handleEntityTop))
	mux.HandleFunc("/api/entities/{kind}/{id}", s.entityHandler(handleEntity))
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		jsonError(w, http.StatusNotFound, "no such dashboard page or endpoint")
	})
	return mux
}

// ServeHTTP applies what every request shares, before routing: the
// request is not counted, the security headers are set, only GET and HEAD
// are served, and a panic answers a generic 500 (its value goes to the
// log) instead of reaching the app's handlers.
func (s *server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	timeseries.Skip(w)
	hdr := w.Header()
	SecurityHeaders(hdr)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		hdr.Set("Allow", "GET, HEAD")
		jsonError(w, http.StatusMethodNotAllowed, "the dashboard is read-only: only GET and HEAD are allowed")
		return
	}
	if r.URL.Path == "" {
		// StripPrefix left nothing: the root without its slash. ServeMux
		// would answer it with an absolute redirect, which a proxy's
		// prefix breaks.
		redirectToRoot(w, r)
		return
	}
	if redirectUnclean(w, r) {
		return
	}
	if err := checkRepeated(r); err != nil {
		jsonError(w, http.StatusBadRequest, err.Error())
		return
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.cfg.Logger.Error("pulse dashboard: panic", "path", r.URL.Path, "panic", fmt.Sprint(v))
			jsonError(w, http.StatusInternalServerError, "internal error")
		}
	}()
	s.mux.ServeHTTP(w, r)
}

// requestContext bounds the reads of one request.
func (s *server) requestContext(r *http.Request) (context.Context, context.CancelFunc) {
	return context.WithTimeout(r.Context(), s.cfg.Timeout)
}

// redirectToRoot answers the root without its trailing slash with a
// relative redirect to the root with it, so the page's relative URLs
// resolve under any prefix a proxy adds.
func redirectToRoot(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil && u.Path != "" {
		p = u.Path // what the client asked for, before StripPrefix
	}
	last := path.Base("/" + strings.TrimSuffix(p, "/"))
	target := "./"
	if last != "/" && last != "." {
		target = "./" + url.PathEscape(last) + "/"
	}
	if q := r.URL.RawQuery; q != "" {
		target += "?" + q
	}
	w.Header().Set("Location", target)
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusFound)
}
