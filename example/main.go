// Command example is a small forum that shows Pulse at work: every request
// is counted at six precisions, a cleaner trims the series, the forum's
// counts (posts, views, likes, followers, unread replies) live in SQL with a
// Redis cache, and the dashboard under /dashboard charts it all.
//
//	go run ./example                  # a private redis-server (or an embedded Redis) and SQLite
//	go run ./example -demo-traffic    # plus light background traffic
//	REDIS_URL=redis://127.0.0.1:6379/0 DATABASE_URL=mysql://root@127.0.0.1:3306/pulse go run ./example
//	DATABASE_URL=postgres://postgres:secret@127.0.0.1:5432/pulse go run ./example
//
// DASHBOARD_USER and DASHBOARD_PASSWORD put BasicAuth in front of the
// dashboard, of the Prometheus metrics at /metrics and of the admin
// routes (/api/admin/*), which are off without them. The server's timeouts
// (READ_TIMEOUT, WRITE_TIMEOUT, IDLE_TIMEOUT, SHUTDOWN_TIMEOUT, DB_TIMEOUT,
// or the flags of the same names) cut off slow clients and a stalled
// database. With no REDIS_URL the example starts a redis-server of its own
// when one is installed (REDIS_SERVER names another binary, or "embedded"
// for the in-process server). REDIS_URL may name any node of a Redis Cluster; SPILL_DIR
// (default pulse-spill) keeps the hits Redis could not take at shutdown.
// Alerts run on the library's default rules (alert.DefaultRules), or on
// those of the file ALERT_RULES names; ALERTMANAGER_URL sends them to
// Alertmanager, and the dashboard shows them either way.
// SIGINT or SIGTERM stops accepting requests, gives those in flight a
// grace period, closes what is left, flushes the recorder and the entity
// counters, stops the cleaner and exits 0.
package main

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/pulse-dev/pulse/alert"
)

func main() {
	logger := slog.New(slog.NewTextHandler(os.Stderr, nil))
	slog.SetDefault(logger)
	opts := parseOptions()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, opts, logger); err != nil {
		logger.Error("example stopped", "err", err)
		os.Exit(1)
	}
}

// run serves the forum until ctx is done, then shuts down in order: stop
// the background work and accepting, let requests in flight finish within
// the grace period, cut off the rest, then close what was opened, the
// last first: the forum's counters, the cleaner, the recorder (flushing
// their counts) and Redis.
func run(ctx context.Context, opts options, logger *slog.Logger) (err error) {
	t := opts.Timeouts.withDefaults()
	c := &closers{timeout: t.Shutdown}
	defer func() {
		if cerr := c.closeAll(); cerr != nil {
			err = errors.Join(err, cerr)
		}
	}()

	rules, err := alertRules(opts)
	if err != nil {
		return err
	}
	rec, pool, err := openRecorder(opts, alert.SlowThresholds(rules), c, logger)
	if err != nil {
		return err
	}
	alerts, err := openAlerts(opts, rules, rec, pool, c, logger)
	if err != nil {
		return err
	}
	auth := dashboardAuth(opts)
	app, err := openForum(ctx, opts, t.DB, pool, auth, c, logger)
	if err != nil {
		return err
	}
	e, err := newEcho(rec, app, alerts, auth, opts.DashboardUser, opts.TrustedProxies, logger)
	if err != nil {
		return err
	}
	return serve(ctx, opts, t, e, app, c, logger)
}
