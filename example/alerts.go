package main

import (
	"context"
	"log/slog"

	"github.com/pulse-dev/pulse/alert"
	"github.com/pulse-dev/pulse/timeseries"
)

// openAlerts runs the alert evaluator when opts names a rule file; its
// notifications go to Alertmanager when opts names one. Its close is
// added to c, so it stops before the recorder.
func openAlerts(opts options, rec *timeseries.Recorder, pool timeseries.Pool, c *closers, logger *slog.Logger) error {
	if opts.AlertRules == "" {
		return nil
	}
	rules, err := alert.LoadRules(opts.AlertRules)
	if err != nil {
		return err
	}
	var receivers []alert.Receiver
	if opts.AlertmanagerURL != "" {
		receivers = append(receivers, alert.Receiver{Name: "alertmanager", Kind: alert.ToAlertmanager, URL: opts.AlertmanagerURL})
	}
	ev, err := alert.New(alert.Config{Pool: pool, Recorder: rec, Rules: rules, Receivers: receivers, Logger: logger})
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	go ev.Run(ctx)
	c.add(func(ctx context.Context) error {
		cancel()
		return ev.Close(ctx)
	})
	logger.Info("alerts on", "rules", len(rules), "receivers", len(receivers))
	return nil
}
