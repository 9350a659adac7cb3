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
// dashboard. SIGINT or SIGTERM stops accepting requests, flushes the
// recorder and the entity counters, stops the cleaner and exits 0.
package main

import (
	"context"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/gomodule/redigo/redis"
	"github.com/labstack/echo/v4"
	echomw "github.com/labstack/echo/v4/middleware"

	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/example/forum"
	"github.com/pulse-dev/pulse/middleware"
	"github.com/pulse-dev/pulse/timeseries"
)

// options is what the command line and the environment choose.
type options struct {
	Addr          string
	RedisURL      string
	DatabaseURL   string
	DashboardUser string
	DashboardPass string
	DemoTraffic   bool
	// Ready, when set, receives the listening address once the server
	// accepts connections.
	Ready func(addr string)
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
		DatabaseURL:   os.Getenv("DATABASE_URL"),
		DashboardUser: os.Getenv("DASHBOARD_USER"),
		DashboardPass: os.Getenv("DASHBOARD_PASSWORD"),
	}
	flag.StringVar(&opts.Addr, "addr", addr, "listen address (env ADDR)")
	flag.BoolVar(&opts.DemoTraffic, "demo-traffic", false, "generate light background traffic")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts, logger); err != nil {
		logger.Error("example stopped", "err", err)
		os.Exit(1)
	}
}

// run serves the forum until ctx is done, then shuts down in order: stop
// accepting, finish requests, flush counts, stop background work.
func run(ctx context.Context, opts options, logger *slog.Logger) (err error) {
	pool, closeRedis, err := openRedis(opts.RedisURL, logger)
	if err != nil {
		return err
	}
	defer closeRedis()

	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool})
	if err != nil {
		return err
	}
	// Registered first so it runs last: no hit recorded before shutdown
	// is lost while Redis is up.
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if cerr := rec.Close(cctx); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()

	clean, err := cleaner.New(cleaner.Config{Pool: pool})
	if err != nil {
		return err
	}
	if err := clean.Start(ctx); err != nil {
		return err
	}
	defer clean.Close()

	app, err := forum.Open(ctx, forum.Config{DatabaseURL: opts.DatabaseURL, Pool: pool, Logger: logger})
	if err != nil {
		return err
	}
	defer func() {
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if cerr := app.Close(cctx); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()
	if err := app.Seed(ctx); err != nil {
		return err
	}

	store, err := timeseries.NewStore(pool, timeseries.Schema{}, nil)
	if err != nil {
		return err
	}

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.HTTPErrorHandler = forum.ErrorHandler
	// Hits goes first so that Recover sits inside it and a panic is
	// counted as the 500 it becomes.
	e.Use(middleware.HitsWithConfig(middleware.HitsConfig{
		Recorder:      rec,
		Routes:        true,
		StatusClasses: true,
	}))
	e.Use(echomw.Recover())
	app.Register(e)

	dash := e.Group("/dashboard")
	if opts.DashboardUser != "" || opts.DashboardPass != "" {
		dash.Use(basicAuth(opts.DashboardUser, opts.DashboardPass))
		logger.Info("dashboard requires BasicAuth", "user", opts.DashboardUser)
	} else {
		logger.Warn("dashboard is open to anyone who can reach it; set DASHBOARD_USER and DASHBOARD_PASSWORD to require a login")
	}
	if err := dashboard.Register(dash, dashboard.Config{
		Store:    store,
		Health:   rec,
		Entities: app.Counters(),
		Labels:   app.Labels,
		Title:    "Pulse forum",
	}); err != nil {
		return err
	}

	bg, stopBG := context.WithCancel(ctx)
	defer stopBG()
	go app.RunReconciler(bg, 24*time.Hour)

	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("example: listen: %w", err)
	}
	srv := &http.Server{Handler: e, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	base := "http://" + ln.Addr().String()
	logger.Info("forum listening", "url", base+"/", "dashboard", base+"/dashboard/")
	if opts.Ready != nil {
		opts.Ready(ln.Addr().String())
	}
	if opts.DemoTraffic {
		go forum.RunDemoTraffic(bg, base)
		logger.Info("demo traffic on")
	}

	select {
	case err := <-served:
		return fmt.Errorf("example: serve: %w", err)
	case <-ctx.Done():
	}
	logger.Info("shutting down")
	stopBG()
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return fmt.Errorf("example: shutdown: %w", err)
	}
	return nil
}

// openRedis connects to REDIS_URL, or with none set starts an in-process
// Redis so the example runs on a machine with no servers.
func openRedis(url string, logger *slog.Logger) (*redis.Pool, func(), error) {
	var embedded *miniredis.Miniredis
	if url == "" {
		var err error
		embedded, err = miniredis.Run()
		if err != nil {
			return nil, nil, fmt.Errorf("example: embedded redis: %w", err)
		}
		url = "redis://" + embedded.Addr()
		logger.Warn("REDIS_URL is not set: using an embedded in-process Redis; counts vanish when the example stops", "addr", embedded.Addr())
	} else {
		logger.Info("using Redis", "url", url)
	}
	pool := &redis.Pool{
		MaxIdle:     16,
		IdleTimeout: 4 * time.Minute,
		DialContext: func(ctx context.Context) (redis.Conn, error) {
			return redis.DialURLContext(ctx, url,
				redis.DialConnectTimeout(time.Second),
				redis.DialReadTimeout(2*time.Second),
				redis.DialWriteTimeout(2*time.Second))
		},
		TestOnBorrow: func(c redis.Conn, idle time.Time) error {
			if time.Since(idle) < time.Minute {
				return nil
			}
			_, err := c.Do("PING")
			return err
		},
	}
	conn := pool.Get()
	_, err := conn.Do("PING")
	conn.Close()
	if err != nil {
		// Not fatal: the recorder buffers and the counters fall back to
		// SQL until Redis is back.
		logger.Warn("redis is not reachable yet", "err", err)
	}
	return pool, func() {
		pool.Close()
		if embedded != nil {
			embedded.Close()
		}
	}, nil
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
