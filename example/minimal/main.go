// Command minimal is the smallest complete app with Pulse: one route, every
// request counted, the series trimmed, and the dashboard at /dashboard/.
package main

import (
	"cmp"
	"context"
	"errors"
	"log"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/pulseecho"
	"github.com/pulse-dev/pulse/pulseecho/mount"
	"github.com/pulse-dev/pulse/timeseries"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	redisURL := cmp.Or(os.Getenv("REDIS_URL"), "redis://127.0.0.1:6379/0")
	if err := run(ctx, redisURL, cmp.Or(os.Getenv("ADDR"), ":8080")); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, redisURL, addr string) (err error) {
	pool := &redis.Pool{MaxIdle: 8, DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, redisURL, redis.DialConnectTimeout(time.Second),
			redis.DialReadTimeout(2*time.Second), redis.DialWriteTimeout(2*time.Second))
	}}
	defer pool.Close()

	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool})
	if err != nil {
		return err
	}
	defer func() { // runs last: every hit of the served requests is written
		cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err = errors.Join(err, rec.Close(cctx))
	}()
	clean, err := cleaner.New(cleaner.Config{Recorder: rec}) // cleans in the background until Close
	if err != nil {
		return err
	}
	defer func() { err = errors.Join(err, clean.Close(context.Background())) }()

	e := echo.New()
	e.Use(pulseecho.HitsWithConfig(pulseecho.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
	e.GET("/", func(c echo.Context) error { return c.String(http.StatusOK, "Hello, counted.\n") })
	if err := mount.Dashboard(e, "/dashboard", dashboard.Config{Store: rec.Store(), Health: rec}); err != nil {
		return err
	}

	srv := &http.Server{Addr: addr, Handler: e, ReadHeaderTimeout: 10 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.ListenAndServe() }()
	log.Printf("listening on %s, dashboard at /dashboard/", addr)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return srv.Shutdown(sctx)
}
