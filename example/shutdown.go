package main

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"
)

// shutdownReserve is the part of the shutdown timeout kept for flushing
// hits and counts after the last request.
const shutdownReserve = 2 * time.Second

// closers is what run has opened and must close when it returns, the last
// opened first: background work before the counters, the counters before
// the recorder, the recorder before Redis.
type closers struct {
	// timeout bounds each close while no stop has begun.
	timeout time.Duration
	// stopBy is when a stop must be over; set when it starts.
	stopBy time.Time
	fns    []func(context.Context) error
}

// add registers f to run at close, before what was added earlier.
func (c *closers) add(f func(context.Context) error) { c.fns = append(c.fns, f) }

// closeAll runs every closer, the last added first, each under the stop's
// deadline, and joins their errors.
func (c *closers) closeAll() error {
	var errs []error
	for i := len(c.fns) - 1; i >= 0; i-- {
		ctx, cancel := c.context()
		errs = append(errs, c.fns[i](ctx))
		cancel()
	}
	return errors.Join(errs...)
}

// context bounds one close: by the stop's deadline once a stop has begun,
// else by the shutdown timeout.
func (c *closers) context() (context.Context, context.CancelFunc) {
	if c.stopBy.IsZero() {
		return context.WithTimeout(context.Background(), c.timeout)
	}
	return context.WithDeadline(context.Background(), c.stopBy)
}

// shutdown stops srv in order: background work first, then new
// connections; requests in flight get the grace period, then are cut off,
// and their handlers get until shortly before the stop's deadline to end.
// It sets c.stopBy, which bounds the closes that follow.
func shutdown(srv *http.Server, live *inFlight, bg *background, c *closers, t timeouts, logger *slog.Logger) {
	began := time.Now()
	c.stopBy = began.Add(t.Shutdown)
	grace := max(t.Shutdown-shutdownReserve, t.Shutdown/2)
	logger.Info("shutting down", "grace", grace)
	bg.stop()
	stopServer(srv, grace, logger)
	// Close does not wait for handlers; their hits must be recorded
	// before the recorder closes.
	wctx, cancel := context.WithDeadline(context.Background(), c.stopBy.Add(-shutdownReserve/2))
	defer cancel()
	if n := live.wait(wctx); n > 0 {
		logger.Warn("requests still running at shutdown; their hits may be lost", "requests", n)
	}
	logger.Info("server stopped", "took", time.Since(began).Round(time.Millisecond))
}

// stopServer stops accepting and waits up to grace for the requests in
// flight, then closes the connections left.
func stopServer(srv *http.Server, grace time.Duration, logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := srv.Shutdown(ctx); err != nil {
		// The grace period is over: cut off the clients still sending or
		// not reading. Their handlers see a closed connection and end.
		logger.Warn("grace period over: closing the connections left", "err", err)
		if err := srv.Close(); err != nil {
			logger.Warn("close", "err", err)
		}
	}
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
