// Command minimalfiber is the smallest complete Fiber v2 app with Pulse:
// one route, every request counted, the series trimmed, and the dashboard
// at /dashboard/.
package main

import (
	"cmp"
	"context"
	"errors"
	"log"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/gofiber/fiber/v2/middleware/recover"
	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/dashboard"
	"github.com/pulse-dev/pulse/pulsefiber"
	"github.com/pulse-dev/pulse/pulsefiber/mount"
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

	app := fiber.New(fiber.Config{DisableStartupMessage: true, ReadTimeout: 10 * time.Second})
	app.Use(recover.New()) // outside the counting: a panic counts as the 500 it becomes
	app.Use(pulsefiber.HitsWithConfig(pulsefiber.HitsConfig{Recorder: rec, Routes: true, StatusClasses: true}))
	app.Get("/", func(c *fiber.Ctx) error { return c.SendString("Hello, counted.\n") })
	if err := mount.Dashboard(app, "/dashboard", dashboard.Config{Store: rec.Store(), Health: rec}); err != nil {
		return err
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	served := make(chan error, 1)
	go func() { served <- app.Listener(ln) }()
	log.Printf("listening on %s, dashboard at /dashboard/", addr)
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	return app.ShutdownWithTimeout(10 * time.Second)
}
