// Command example is a small forum that shows Pulse at work: every request
// is counted at six precisions, a cleaner trims the series, the forum's
// counts (posts, views, likes, followers, unread replies) live in SQL with a
// Redis cache, and the dashboard under /dashboard charts it all.
//
//	go run ./example                  # embedded Redis and SQLite, no servers
//	go run ./example -demo-traffic    # plus light background traffic
//	REDIS_URL=redis://127.0.0.1:6379/0 DATABASE_URL=mysql://root@127.0.0.1:3306/pulse go run ./example
//	DATABASE_URL=postgres://postgres:secret@127.0.0.1:5432/pulse go run ./example
//
// DASHBOARD_USER and DASHBOARD_PASSWORD put BasicAuth in front of the
// dashboard, of the Prometheus metrics at /metrics and of the admin
// routes (/api/admin/*), which are off without them. The server's timeouts
// (READ_TIMEOUT, WRITE_TIMEOUT, IDLE_TIMEOUT, SHUTDOWN_TIMEOUT, DB_TIMEOUT,
// or the flags of the same names) cut off slow clients and a stalled
// database. REDIS_URL may name any node of a Redis Cluster; SPILL_DIR
// (default pulse-spill) keeps the hits Redis could not take at shutdown.
// SIGINT or SIGTERM stops accepting requests, gives those in flight a
// grace period, closes what is left, flushes the recorder and the entity
// counters, stops the cleaner and exits 0.
package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/example/forum"
	pulsemw "github.com/pulse-dev/pulse/middleware"
	"github.com/pulse-dev/pulse/promexport"
	"github.com/pulse-dev/pulse/timeseries"
)

// options is what the command line and the environment choose.
type options struct {
	Addr     string
	RedisURL string
	// SpillDir keeps the hits that could not be written at shutdown, for
	// the next start to send.
	SpillDir      string
	DatabaseURL   string
	DashboardUser string
	DashboardPass string
	DemoTraffic   bool
	Timeouts      timeouts
	// Ready, when set, receives the listening address once the server
	// accepts connections.
	Ready func(addr string)
	// logTo, in tests, receives the log.
	logTo io.Writer
}

// timeouts are the server's bounds on slow clients, shutdown and the
// database.
type timeouts struct {
	// Read bounds reading a request, headers and body; Write, from the end
	// of the headers to the end of the answer; Idle, a keep-alive
	// connection waiting for its next request.
	Read, Write, Idle time.Duration
	// Shutdown bounds a stop: requests in flight get all of it but
	// shutdownReserve, then are cut off, and the reserve is for flushing.
	Shutdown time.Duration
	// DB bounds the database work of one request.
	DB time.Duration
}

var defaultTimeouts = timeouts{
	Read:     10 * time.Second,
	Write:    15 * time.Second,
	Idle:     15 * time.Second,
	Shutdown: 10 * time.Second,
	DB:       forum.DefaultQueryTimeout,
}

const (
	// shutdownReserve is the part of the shutdown timeout kept for
	// flushing hits and counts after the last request.
	shutdownReserve = 2 * time.Second
	// maxHeaderBytes caps a request's headers; the forum's are small.
	maxHeaderBytes = 16 << 10
)

// withDefaults fills zero fields from defaultTimeouts.
func (t timeouts) withDefaults() timeouts {
	d := defaultTimeouts
	for _, f := range []struct{ v, def *time.Duration }{
		{&t.Read, &d.Read}, {&t.Write, &d.Write}, {&t.Idle, &d.Idle}, {&t.Shutdown, &d.Shutdown}, {&t.DB, &d.DB},
	} {
		if *f.v <= 0 {
			*f.v = *f.def
		}
	}
	return t
}

// envDuration reads a duration such as "10s" from the environment.
func envDuration(name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		fmt.Fprintf(os.Stderr, "example: %s=%q is not a positive duration such as 10s\n", name, v)
		os.Exit(2)
	}
	return d
}

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	slog.SetDefault(logger)

	addr := os.Getenv("ADDR")
	if addr == "" {
		addr = ":8080"
	}
	opts := options{
		RedisURL:      os.Getenv("REDIS_URL"),
		SpillDir:      os.Getenv("SPILL_DIR"),
		DatabaseURL:   os.Getenv("DATABASE_URL"),
		DashboardUser: os.Getenv("DASHBOARD_USER"),
		DashboardPass: os.Getenv("DASHBOARD_PASSWORD"),
	}
	flag.StringVar(&opts.Addr, "addr", addr, "listen address (env ADDR)")
	flag.BoolVar(&opts.DemoTraffic, "demo-traffic", false, "generate light background traffic")
	t := &opts.Timeouts
	flag.DurationVar(&t.Read, "read-timeout", envDuration("READ_TIMEOUT", defaultTimeouts.Read), "bound on reading a request, body included (env READ_TIMEOUT)")
	flag.DurationVar(&t.Write, "write-timeout", envDuration("WRITE_TIMEOUT", defaultTimeouts.Write), "bound on writing an answer (env WRITE_TIMEOUT)")
	flag.DurationVar(&t.Idle, "idle-timeout", envDuration("IDLE_TIMEOUT", defaultTimeouts.Idle), "bound on an idle keep-alive connection (env IDLE_TIMEOUT)")
	flag.DurationVar(&t.Shutdown, "shutdown-timeout", envDuration("SHUTDOWN_TIMEOUT", defaultTimeouts.Shutdown),
		"bound on a stop: requests in flight get all but 2s of it, flushing the rest (env SHUTDOWN_TIMEOUT)")
	flag.DurationVar(&t.DB, "db-timeout", envDuration("DB_TIMEOUT", defaultTimeouts.DB), "bound on the database work of one request (env DB_TIMEOUT)")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts, logger); err != nil {
		logger.Error("example stopped", "err", err)
		os.Exit(1)
	}
}

// run serves the forum until ctx is done, then shuts down in order: stop
// accepting, let requests in flight finish within the grace period, cut
// off the rest, flush counts, stop background work.
func run(ctx context.Context, opts options, logger *slog.Logger) (err error) {
	t := opts.Timeouts.withDefaults()
	// stopBy is when a stop must be over; set when it starts.
	var stopBy time.Time
	stopCtx := func() (context.Context, context.CancelFunc) {
		if stopBy.IsZero() {
			return context.WithTimeout(context.Background(), t.Shutdown)
		}
		return context.WithDeadline(context.Background(), stopBy)
	}

	if opts.SpillDir == "" {
		opts.SpillDir = defaultSpillDir
	}
	pool, closeRedis, err := openRedis(opts.RedisURL, logger)
	if err != nil {
		return err
	}
	defer closeRedis()

	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool, SpillDir: opts.SpillDir})
	if err != nil {
		return err
	}
	// Registered first so it runs last: no hit recorded before shutdown
	// is lost while Redis is up.
	defer func() {
		cctx, cancel := stopCtx()
		defer cancel()
		if cerr := rec.Close(cctx); cerr != nil {
			err = errors.Join(err, cerr)
		}
		logger.Info("recorder closed", "hits", seriesTotal(rec, "hits"))
	}()

	clean, err := cleaner.New(cleaner.Config{Recorder: rec})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := stopCtx()
		defer cancel()
		if cerr := clean.Close(cctx); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()

	var auth echo.MiddlewareFunc
	if opts.DashboardUser != "" || opts.DashboardPass != "" {
		auth = basicAuth(opts.DashboardUser, opts.DashboardPass)
	}
	app, err := forum.Open(ctx, forum.Config{
		DatabaseURL:  opts.DatabaseURL,
		Pool:         pool,
		Logger:       logger,
		QueryTimeout: t.DB,
		AdminAuth:    auth,
	})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := stopCtx()
		defer cancel()
		if cerr := app.Close(cctx); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	if err := app.Seed(ctx); err != nil {
		return err
	}

	store := rec.Store()

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = forum.ErrorHandler
	// Hits goes first so that Recover sits inside it and a panic is
	// counted as the 500 it becomes; the forum's guards come after both,
	// so a refused request is counted too.
	e.Use(pulsemw.HitsWithConfig(pulsemw.HitsConfig{
		Recorder:      rec,
		Routes:        true,
		StatusClasses: true,
	}))
	e.Use(echomw.Recover())
	app.Register(e)

	var login []echo.MiddlewareFunc
	if auth != nil {
		login = append(login, auth)
		logger.Info("dashboard, /metrics and admin routes require BasicAuth", "user", opts.DashboardUser)
	} else {
		logger.Warn("dashboard and /metrics are open to anyone who can reach them and admin routes are off; set DASHBOARD_USER and DASHBOARD_PASSWORD to require a login and turn them on")
	}
	if err := pulsemw.Mount(e, "/dashboard", dashboard.Config{
		Store:    store,
		Health:   rec,
		Entities: app.Counters(),
		Labels:   app.Labels,
		Title:    "Pulse forum",
		Logger:   logger,
	}, login...); err != nil {
		return err
	}
	reg := prometheus.NewRegistry()
	if err := reg.Register(promexport.NewCollector(rec)); err != nil {
		return fmt.Errorf("example: metrics: %w", err)
	}
	metrics := echo.WrapHandler(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	// Scrapes are not traffic: marked before the login runs, like the
	// dashboard's requests.
	e.GET("/metrics", metrics, append([]echo.MiddlewareFunc{skip}, login...)...)

	// Background work ends before the counters and the recorder close:
	// stopBG cancels it and bgWork waits for it, deferred after their
	// Close so that it runs first.
	bg, stopBG := context.WithCancel(ctx)
	var bgWork sync.WaitGroup
	defer func() {
		stopBG()
		bgWork.Wait()
	}()
	bgWork.Go(func() { app.RunReconciler(bg, 24*time.Hour) })

	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("example: listen: %w", err)
	}
	var live inFlight
	srv := &http.Server{
		Handler:        live.track(e),
		ReadTimeout:    t.Read,
		WriteTimeout:   t.Write,
		IdleTimeout:    t.Idle,
		MaxHeaderBytes: maxHeaderBytes,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	logger.Info("forum listening", "url", base+"/", "dashboard", base+"/dashboard/")
	if opts.Ready != nil {
		opts.Ready(ln.Addr().String())
	}
	if opts.DemoTraffic {
		bgWork.Go(func() { forum.RunDemoTraffic(bg, base) })
		logger.Info("demo traffic on")
	}

	select {
	case err := <-served:
		return fmt.Errorf("example: serve: %w", err)
	case <-ctx.Done():
	}
	began := time.Now()
	stopBy = began.Add(t.Shutdown)
	grace := max(t.Shutdown-shutdownReserve, t.Shutdown/2)
	logger.Info("shutting down", "grace", grace)
	stopBG()
	bgWork.Wait()
	gctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(gctx); err != nil {
		// The grace period is over: cut off the clients still sending or
		// not reading. Their handlers see a closed connection and end.
		logger.Warn("grace period over: closing the connections left", "err", err)
		if err := srv.Close(); err != nil {
			logger.Warn("close", "err", err)
		}
	}
	// Close does not wait for handlers; their hits must be recorded
	// before the recorder closes.
	wctx, wcancel := context.WithDeadline(context.Background(), stopBy.Add(-shutdownReserve/2))
	defer wcancel()
	if n := live.wait(wctx); n > 0 {
		logger.Warn("requests still running at shutdown; their hits may be lost", "requests", n)
	}
	logger.Info("server stopped", "took", time.Since(began).Round(time.Millisecond))
	return nil
}

// inFlight counts requests being handled, so a stop can wait for the
// handlers that Server.Close does not wait for.
type inFlight struct{ n atomic.Int64 }

func (f *inFlight) track(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.n.Add(1)
		defer f.n.Add(-1)
		h.ServeHTTP(w, r)
	})
}

// wait returns once no request is being handled, or when ctx ends, with
// the number still running.
func (f *inFlight) wait(ctx context.Context) int64 {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		n := f.n.Load()
		if n == 0 {
			return 0
		}
		select {
		case <-ctx.Done():
			return n
		case <-tick.C:
		}
	}
}

// seriesTotal is the hits one series has recorded in this process.
func seriesTotal(rec *timeseries.Recorder, name string) int64 {
	for _, s := range rec.Totals() {
		if s.Name == name {
			return s.Hits
		}
	}
	return 0
}

// skip marks a request as not counted by the Hits middleware.
func skip(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		pulsemw.Skip(c)
		return next(c)
	}
}

// basicAuth checks the dashboard login in constant time.
func basicAuth(user, pass string) echo.MiddlewareFunc {
	return echomw.BasicAuthWithConfig(echomw.BasicAuthConfig{
		Realm: "Pulse dashboard",
		Validator: func(u, p string, c echo.Context) (bool, error) {
			okUser := subtle.ConstantTimeCompare([]byte(u), []byte(user)) == 1
			okPass := subtle.ConstantTimeCompare([]byte(p), []byte(pass)) == 1
			return okUser && okPass, nil
		},
	})
}
