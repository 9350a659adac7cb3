package dashboard

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/entity"
	"github.com/pulse-dev/pulse/internal/dashguard"
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
	// DefaultMaxBuckets is the widest window a read may zero-fill: the
	// samples the cleaner keeps by default (cleaner.Config.Samples).
	DefaultMaxBuckets = 120
	// MaxMaxBuckets bounds Config.MaxBuckets.
	MaxMaxBuckets = 2000
	// DefaultConcurrentReads is how many series reads run at once.
	DefaultConcurrentReads = 4
	// DefaultStaleFlushes is how many flush intervals may pass without a
	// flush, while hits are pending, before api/health answers 503.
	DefaultStaleFlushes = 3
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
	// Echarts is the app's own copy of echarts.min.js (for instance
	// embedded with //go:embed from the app's npm step), served by the
	// dashboard so the page needs no internet. Without it, and without
	// the copy `make assets` embeds in a build of this repository, the
	// page loads echarts EchartsVersion from EchartsCDN, checked against
	// EchartsIntegrity.
	Echarts []byte
	// MaxBuckets bounds the buckets of one read: last=N of the API and
	// the zero-filled range of from/to (default DefaultMaxBuckets, the
	// samples the cleaner keeps; at most MaxMaxBuckets). Raise it with
	// cleaner.Config.Samples.
	MaxBuckets int
	// ConcurrentReads bounds the series reads served at once; others
	// wait for a turn within Timeout, then answer 503 (default 4). It
	// keeps the memory of many heavy reads at once bounded.
	ConcurrentReads int
	// FlushInterval is the recorder's flush interval: api/health answers
	// 503 when no flush succeeded for DefaultStaleFlushes intervals while
	// hits are pending. By default it is what Health reports
	// (timeseries.Health.FlushInterval), else
	// timeseries.DefaultFlushInterval.
	FlushInterval time.Duration
	// Logger receives the details of failures, which clients only see
	// as a generic text (default slog.Default()).
	Logger *slog.Logger
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
	switch {
	case cfg.MaxBuckets == 0:
		cfg.MaxBuckets = DefaultMaxBuckets
	case cfg.MaxBuckets < 0 || cfg.MaxBuckets > MaxMaxBuckets:
		return cfg, fmt.Errorf("dashboard: MaxBuckets %d is outside 1..%d", cfg.MaxBuckets, MaxMaxBuckets)
	}
	switch {
	case cfg.ConcurrentReads == 0:
		cfg.ConcurrentReads = DefaultConcurrentReads
	case cfg.ConcurrentReads < 0:
		return cfg, fmt.Errorf("dashboard: negative ConcurrentReads %d", cfg.ConcurrentReads)
	}
	switch {
	case cfg.FlushInterval == 0:
		// Left 0: the health check takes the recorder's own.
	case cfg.FlushInterval < 0:
		return cfg, fmt.Errorf("dashboard: negative FlushInterval %v", cfg.FlushInterval)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	return cfg, nil
}

// server holds what every request needs.
type server struct {
	cfg     Config
	page    *pageData
	echarts *asset // nil: loaded from EchartsCDN
	reads   chan struct{}
	started time.Time // stands in for the last flush until there is one
	windowReadsState
}

func newServer(cfg Config) (*server, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	s := &server{cfg: cfg, reads: make(chan struct{}, cfg.ConcurrentReads), started: cfg.Store.Now(),
		windowReadsState: windowReadsState{windowReads: map[windowKey]*windowRead{}}}
	switch {
	case len(cfg.Echarts) > 0:
		s.echarts = newAsset(echartsFile, cfg.Echarts)
	case assets[echartsFile] != nil:
		s.echarts = assets[echartsFile]
	}
	if s.page, err = newPageData(cfg, s.echarts); err != nil {
		return nil, err
	}
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

// Mount mounts the dashboard under prefix on e, behind the middleware m
// (a login, say):
//
//	dashboard.Mount(e, "/dashboard", cfg, echomw.BasicAuth(check))
//
// The dashboard's own guard runs first, before m: every request under the
// prefix is marked with middleware.Skip, so it is not counted as traffic
// even when m refuses it, and every answer, a 401 of m included, carries
// the dashboard's security headers.
func Mount(e *echo.Echo, prefix string, cfg Config, m ...echo.MiddlewareFunc) error {
	s, err := newServer(cfg)
	if err != nil {
		return err
	}
	g := e.Group(prefix)
	g.Use(append([]echo.MiddlewareFunc{s.guard}, m...)...)
	s.register(g)
	s.logSource()
	return nil
}

// Register mounts the page, its assets and the JSON API on the root of a
// group the app built. Every route marks its request with
// middleware.Skip, so watching the dashboard is not counted as traffic.
// The group's own middleware runs before the dashboard's routes: a
// request it refuses (a failed login) is counted and lacks the
// dashboard's headers. Mount puts the dashboard's guard in front instead.
func Register(g *echo.Group, cfg Config) error {
	s, err := newServer(cfg)
	if err != nil {
		return err
	}
	s.register(g)
	s.logSource()
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
	s.logSource()
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

// guard is the first middleware of a mounted dashboard: it marks the
// request as not counted and sets the security headers before any other
// middleware of the group can answer.
func (s *server) guard(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		middleware.Skip(c)
		dashguard.SetHeaders(c.Response().Header())
		return next(c)
	}
}

// wrap applies what every dashboard route shares: the request is not
// counted, only GET and HEAD are served, security headers are set, and a
// panic answers a generic 500 (its value goes to the log) instead of
// reaching the app's handlers.
func (s *server) wrap(h echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) (err error) {
		middleware.Skip(c)
		hdr := c.Response().Header()
		dashguard.SetHeaders(hdr)
		if m := c.Request().Method; m != http.MethodGet && m != http.MethodHead {
			hdr.Set("Allow", "GET, HEAD")
			return jsonError(c, http.StatusMethodNotAllowed, "the dashboard is read-only: only GET and HEAD are allowed")
		}
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.cfg.Logger.Error("pulse dashboard: panic", "path", c.Request().URL.Path, "panic", fmt.Sprint(v))
				err = jsonError(c, http.StatusInternalServerError, "internal error")
			}
		}()
		return h(c)
	}
}

// acquireRead waits for a turn among ConcurrentReads, within ctx. The
// caller calls the returned release.
func (s *server) acquireRead(ctx context.Context) (release func(), err error) {
	select {
	case s.reads <- struct{}{}:
		return func() { <-s.reads }, nil
	case <-ctx.Done():
		return nil, errBusy
	}
}

// errBusy is a read that found no turn within the request's timeout.
var errBusy = errors.New("dashboard: too many reads at once")

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
