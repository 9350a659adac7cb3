package main

import (
	"context"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/pulse-dev/pulse/alert"
	"github.com/pulse-dev/pulse/alert/anomaly"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/timeseries"
)

// leaseReleaseTimeout bounds the alert evaluator's stop.
const leaseReleaseTimeout = time.Second

// alertRules are the rules of the file opts names (ALERT_RULES) or,
// without one, the library's defaults (alert.DefaultRules: the app's
// availability SLO and absence, and Pulse's own health). They are read
// before the recorder starts, which counts the requests slower than
// their latency thresholds (alert.SlowThresholds).
func alertRules(opts options) ([]alert.Rule, error) {
	if opts.AlertRules == "" {
		return alert.DefaultRules(), nil
	}
	return alert.LoadRules(opts.AlertRules)
}

// openAlerts runs the alert evaluator on rules. Its notifications go to
// Alertmanager when opts names one (ALERTMANAGER_URL); without one its
// alerts are on the dashboard only. Its close is added to c, so it stops
// before the recorder. It returns the evaluator's Handler, for the
// dashboard's api/alerts and banner.
func openAlerts(opts options, rules []alert.Rule, rec *timeseries.Recorder, pool timeseries.Pool, c *closers, logger *slog.Logger) (http.Handler, error) {
	var receivers []alert.Receiver
	if opts.AlertmanagerURL != "" {
		receivers = append(receivers, alert.Receiver{Name: "alertmanager", Kind: alert.ToAlertmanager, URL: opts.AlertmanagerURL})
	}
	// Anomaly rules judge each minute against its forecast.
	detector := &anomaly.Detector{Scanner: &fromstore.Scanner{Store: rec.Store(), Keep: true}}
	ev, err := alert.New(alert.Config{Pool: pool, Recorder: rec, Rules: rules, Receivers: receivers, Detector: detector,
		DashboardURL: dashboardURL(opts.Addr), Logger: logger})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	go ev.Run(ctx)
	c.add(func(ctx context.Context) error {
		cancel()
		// Giving the lease up only saves another instance the wait for it
		// to lapse; with Redis away it must neither take the time the
		// recorder needs to spill nor fail a stop that lost nothing.
		ctx, stop := context.WithTimeout(ctx, leaseReleaseTimeout)
		defer stop()
		if err := ev.Close(ctx); err != nil {
			logger.Warn("alerts stopped without giving up their lease; it lapses by itself", "err", err)
		}
		return nil
	})
	logAlerts(opts, rules, logger)
	return ev.Handler(), nil
}

// logAlerts says which rules run and where their notifications go.
func logAlerts(opts options, rules []alert.Rule, logger *slog.Logger) {
	names := make([]string, len(rules))
	for i, r := range rules {
		names[i] = r.Name
	}
	from := "defaults"
	if opts.AlertRules != "" {
		from = opts.AlertRules
	}
	logger.Info("alerts on", "rules", from, "names", strings.Join(names, ","))
	if opts.AlertmanagerURL == "" {
		logger.Info("alerts are shown on the dashboard only; set ALERTMANAGER_URL to send them to Alertmanager")
		return
	}
	shown := opts.AlertmanagerURL
	if u, err := url.Parse(shown); err == nil {
		shown = u.Redacted()
	}
	logger.Info("alerts sent to Alertmanager", "url", shown)
}
