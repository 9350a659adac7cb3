package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/pulse-dev/pulse/alert"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/timeseries"
)

// openAlerts runs the alert evaluator when opts names a rule file; its
// notifications go to Alertmanager when opts names one. Its close is
// added to c, so it stops before the recorder. It returns the
// evaluator's Handler, for the dashboard's api/alerts and banner, or nil
// without a rule file.
func openAlerts(opts options, rec *timeseries.Recorder, pool timeseries.Pool, c *closers, logger *slog.Logger) (http.Handler, error) {
	if opts.AlertRules == "" {
		return nil, nil
	}
	rules, err := alert.LoadRules(opts.AlertRules)
	if err != nil {
		return nil, err
	}
	var receivers []alert.Receiver
	if opts.AlertmanagerURL != "" {
		receivers = append(receivers, alert.Receiver{Name: "alertmanager", Kind: alert.ToAlertmanager, URL: opts.AlertmanagerURL})
	}
	// Anomaly rules judge each minute against its forecast.
	detector := &fromstore.Detector{Scanner: &fromstore.Scanner{Store: rec.Store()}}
	ev, err := alert.New(alert.Config{Pool: pool, Recorder: rec, Rules: rules, Receivers: receivers, Detector: detector, Logger: logger})
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithCancel(context.Background())
	go ev.Run(ctx)
	c.add(func(ctx context.Context) error {
		cancel()
		return ev.Close(ctx)
	})
	logger.Info("alerts on", "rules", len(rules), "receivers", len(receivers))
	return ev.Handler(), nil
}
