package main

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/pulse-dev/pulse/example/forum"
)

// maxHeaderBytes caps a request's headers; the forum's are small.
const maxHeaderBytes = 16 << 10

// serve runs the background work and the server on opts.Addr until ctx is
// done, then shuts the server down.
func serve(ctx context.Context, opts options, t timeouts, h http.Handler, app *forum.App, c *closers, logger *slog.Logger) error {
	bg := startBackground(ctx, c)
	bg.run(func(ctx context.Context) { app.RunReconciler(ctx, 24*time.Hour) })

	ln, err := net.Listen("tcp", opts.Addr)
	if err != nil {
		return fmt.Errorf("example: listen: %w", err)
	}
	var live inFlight
	srv := newServer(live.track(h), t)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	announce(ln.Addr().String(), opts, bg, logger)

	select {
	case err := <-served:
		return fmt.Errorf("example: serve: %w", err)
	case <-ctx.Done():
	}
	shutdown(srv, &live, bg, c, t, logger)
	return nil
}

// newServer is the server of h, with the timeouts that cut off slow
// clients.
func newServer(h http.Handler, t timeouts) *http.Server {
	return &http.Server{
		Handler:        h,
		ReadTimeout:    t.Read,
		WriteTimeout:   t.Write,
		IdleTimeout:    t.Idle,
		MaxHeaderBytes: maxHeaderBytes,
	}
}

// announce logs where the forum listens, tells opts.Ready, and starts the
// demo traffic if asked for.
func announce(addr string, opts options, bg *background, logger *slog.Logger) {
	base := browseURL(addr)
	logger.Info("forum listening", "url", base, "dashboard", base+"dashboard/")
	if opts.Ready != nil {
		opts.Ready(addr)
	}
	if opts.DemoTraffic {
		bg.run(func(ctx context.Context) { forum.RunDemoTraffic(ctx, strings.TrimSuffix(base, "/")) })
		logger.Info("demo traffic on")
	}
}

// browseURL is the address a person opens for a listener on addr: a
// wildcard host (":8080", "0.0.0.0:8080", "[::]:8080") becomes
// localhost, which a browser can reach.
func browseURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + "/"
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}

// dashboardURL is the dashboard's address for the listen address addr,
// or "" when the port is not known before listening (":0").
func dashboardURL(addr string) string {
	if _, port, err := net.SplitHostPort(addr); err != nil || port == "" || port == "0" {
		return ""
	}
	return browseURL(addr) + "dashboard/"
}

// background is the work that runs beside the server: the reconciler and
// the demo traffic.
type background struct {
	ctx    context.Context
	cancel context.CancelFunc
	work   sync.WaitGroup
}

// startBackground derives the background work's context from ctx. The
// work ends before the counters and the recorder close: its stop is added
// to c after their closes, so that it runs first.
func startBackground(ctx context.Context, c *closers) *background {
	bg := &background{}
	bg.ctx, bg.cancel = context.WithCancel(ctx)
	c.add(func(context.Context) error { bg.stop(); return nil })
	return bg
}

// run starts f in the background.
func (bg *background) run(f func(context.Context)) { bg.work.Go(func() { f(bg.ctx) }) }

// stop cancels the background work and waits for it to end.
func (bg *background) stop() {
	bg.cancel()
	bg.work.Wait()
}
