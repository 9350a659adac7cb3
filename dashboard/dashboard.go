package dashboard

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/entity"
	"github.com/pulse-dev/pulse/middleware"
	"github.com/pulse-dev/pulse/timeseries"
)

// HealthReporter reports the state of whatever writes the series;
// *timeseries.Recorder satisfies it.
type HealthReporter interface{ Health() timeseries.Health }

// Entities reads entity counters; the entity package's *entity.Counters
// satisfies it.
type Entities interface {
	Kinds() []entity.KindInfo
	Get(ctx context.Context, kind string, id int64) (entity.Counts, error)
	// BatchGet returns the counts in the same order as ids.
	BatchGet(ctx context.Context, kind string, ids []int64) ([]entity.Counts, error)
	Top(ctx context.Context, kind, field string, n int) ([]entity.Ranked, error)
}

// Defaults and bounds of Config and of the API.
const (
	DefaultTitle        = "Pulse"
	DefaultPollInterval = 5 * time.Second
	DefaultOverview     = 6
	DefaultTimeout      = 5 * time.Second
	// MinPollInterval bounds how hard one open page may poll.
	MinPollInterval = 250 * time.Millisecond
	// MaxOverview bounds the busiest series charted at once.
	MaxOverview = 24
	// MaxPinned bounds the series one overview request may name.
	MaxPinned = 24
	// MaxIDs bounds the ids of one entity batch read.
	MaxIDs = 1000
	// MaxTop bounds n of an entity top list.
	MaxTop = 100
)

// Config configures the dashboard. Zero fields take the defaults.
type Config struct {
	// Store reads the series; required. Its clock decides the current
	// (still open) bucket.
	Store *timeseries.Store
	// Health, when set, feeds the status strip and GET api/health.
	Health HealthReporter
	// Entities, when set, adds the entity panel and the api/entities
	// endpoints.
	Entities Entities
	// Labels, when set, names entities for people: the top list shows
	// "hello world" (#3) rather than #3. It gets the ids of one kind in one
	// call and may leave ids out; an error leaves the list unlabelled.
	Labels func(ctx context.Context, kind string, ids []int64) (map[int64]string, error)
	// Title heads the page (default "Pulse").
	Title string
	// PollInterval is how often an open page refreshes (default 5 s, at
	// least MinPollInterval).
	PollInterval time.Duration
	// Overview is how many of the busiest series the page charts
	// (default 6, at most MaxOverview).
	Overview int
	// Timeout bounds the Redis and entity reads of one request
	// (default 5 s).
	Timeout time.Duration
}

func (cfg Config) withDefaults() (Config, error) {
	if cfg.Store == nil {
		return cfg, errors.New("dashboard: Config.Store is nil")
	}
	if cfg.Title == "" {
		cfg.Title = DefaultTitle
	}
	switch {
	case cfg.PollInterval == 0:
		cfg.PollInterval = DefaultPollInterval
	case cfg.PollInterval < MinPollInterval:
		return cfg, fmt.Errorf("dashboard: PollInterval %v is below %v", cfg.PollInterval, MinPollInterval)
	}
	switch {
	case cfg.Overview == 0:
		cfg.Overview = DefaultOverview
	case cfg.Overview < 0 || cfg.Overview > MaxOverview:
		return cfg, fmt.Errorf("dashboard: Overview %d is outside 1..%d", cfg.Overview, MaxOverview)
	}
	switch {
	case cfg.Timeout == 0:
		cfg.Timeout = DefaultTimeout
	case cfg.Timeout < 0:
		return cfg, fmt.Errorf("dashboard: negative Timeout %v", cfg.Timeout)
	}
	return cfg, nil
}

// server holds what every request needs.
type server struct {
	cfg  Config
	page *pageData
}

func newServer(cfg Config) (*server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &server{cfg: cfg}
	if s.page, err = newPageData(cfg); err != nil {
		return nil, err
	}
	return s, nil
}

// Register mounts the page, its assets and the JSON API on the root of g.
// Put authentication in front with the group's middleware:
//
//	dashboard.Register(e.Group("/dashboard", echomw.BasicAuth(check)), cfg)
//
// Every route marks its request with middleware.Skip, so watching the
// dashboard is not counted as traffic. Requests the group's own middleware
// rejects (a failed login, say) never reach the dashboard and are counted.
func Register(g *echo.Group, cfg Config) error {
	s, err := newServer(cfg)
	if err != nil {
		return err
	}
	s.register(g)
	return nil
}

// Handler returns the dashboard as a plain net/http handler with its root
// at "/", for mounting under a prefix with http.StripPrefix:
//
//	mux.Handle("/dashboard/", http.StripPrefix("/dashboard", h))
func Handler(cfg Config) (http.Handler, error) {
	s, err := newServer(cfg)
	if err != nil {
		return nil, err
	}
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	s.register(e.Group(""))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "" {
			// StripPrefix left nothing: the root without its slash.
			redirectToRoot(w, r)
			return
		}
		e.ServeHTTP(w, r)
	}), nil
}

func (s *server) register(g *echo.Group) {
	route := func(p string, h echo.HandlerFunc) { g.Any(p, s.wrap(h)) }
	route("", s.handlePage)
	route("/", s.handlePage)
	route("/static/:file", s.handleAsset)
	route("/api/counters", s.handleCounters)
	route("/api/counters/:name", s.handleSamples)
	route("/api/overview", s.handleOverview)
	route("/api/health", s.handleHealth)
	route("/api/entities", s.handleKinds)
	route("/api/entities/:kind", s.handleEntityBatch)
	route("/api/entities/:kind/top", s.handleEntityTop)
	route("/api/entities/:kind/:id", s.handleEntity)
	g.RouteNotFound("/*", s.wrap(func(c echo.Context) error {
		return jsonError(c, http.StatusNotFound, "no such dashboard page or endpoint")
	}))
}

// wrap applies what every dashboard route shares: the request is not
// counted, only GET and HEAD are served, common security headers are set,
// and a panic answers 500 instead of reaching the app's handlers.
func (s *server) wrap(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		middleware.Skip(c)
		hdr := c.Response().Header()
		hdr.Set("X-Content-Type-Options", "nosniff")
		hdr.Set("Referrer-Policy", "same-origin")
		hdr.Set("X-Frame-Options", "SAMEORIGIN")
		if m := c.Request().Method; m != http.MethodGet && m != http.MethodHead {
			hdr.Set("Allow", "GET, HEAD")
			return jsonError(c, http.StatusMethodNotAllowed, "the dashboard is read-only: only GET and HEAD are allowed")
		}
		defer func() {
			if v := recover(); v != nil {
				err = jsonError(c, http.StatusInternalServerError, fmt.Sprintf("internal error: %v", v))
			}
		}()
		return h(c)
	}
}

// requestContext bounds the reads of one request.
func (s *server) requestContext(c echo.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.Request().Context(), s.cfg.Timeout)
}

// pathParam returns a path parameter unescaped. Echo routes on the raw
// path when it holds escapes the decoded path cannot show (%2F), and its
// parameters are then still escaped; otherwise they are decoded already.
func pathParam(c echo.Context, name string) (string, error) {
	v := c.Param(name)
	if c.Request().URL.RawPath == "" {
		return v, nil
	}
	u, err := url.PathUnescape(v)
	if err != nil {
		return "", fmt.Errorf("bad escape in %s", name)
	}
	return u, nil
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

// apiError is the body of every error answer.
type apiError struct {
	Error string `json:"error"`
}

func jsonError(c echo.Context, status int, msg string) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(status, apiError{Error: msg})
}

// writeJSON answers an API request; API answers are never cached.
func writeJSON(c echo.Context, v any) error {
	c.Response().Header().Set("Cache-Control", "no-store")
	return c.JSON(http.StatusOK, v)
}
