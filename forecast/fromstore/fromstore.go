// Package fromstore forecasts the series a Pulse recorder wrote to Redis.
// It reads a series at one precision, with the same series at 1 h and
// 1 d whose shape the forecast borrows, through the store's exported
// reads (one round trip per Redis node for each precision), and hands
// them to package forecast, which knows nothing of Redis.
//
// Fit forecasts one series and FitAll many. A Scanner scans again and
// again, as a dashboard does, reading the 1 h and 1 d series once per
// closed bucket of theirs, and with Keep keeps each settled bucket's
// score and each incident in Redis (Incidents reads them). Package
// alert/anomaly answers the anomaly rules of package alert from a
// Scanner's scans.
package fromstore

import (
	"context"
	"fmt"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/timeseries"
)

// Window is how many closed buckets of each precision are read: as many
// as Pulse keeps.
const Window = 120

const (
	hour = 3600
	day  = 86400
)

// Fit reads the counts of the series name at precision (in seconds) and,
// below a day, at 1 h and 1 d, and fits its closed buckets. The bucket in
// progress is left out, so the first bucket of Forecast is the current
// one; buckets before the series' first hit are left out too. cfg.Kind
// must be Counts (the zero value): the store's hashes hold counts.
func Fit(ctx context.Context, st *timeseries.Store, name string, precision int, cfg forecast.Config) (*forecast.Fitted, error) {
	all, err := FitAll(ctx, st, []string{name}, precision, cfg)
	if err != nil {
		return nil, err
	}
	r := all[name]
	if r.Fitted == nil && r.Err == nil {
		return nil, fmt.Errorf("forecast: %q at precision %d: %w", name, precision, timeseries.ErrUnknownSeries)
	}
	return r.Fitted, r.Err
}

// Result is one series' fit, or why it has none.
type Result struct {
	Fitted *forecast.Fitted
	Err    error
}

// FitAll is Fit for many series at one precision, read with one round
// trip per Redis node for each precision read (the series', then 1 h and
// 1 d below them), however many series, as a scan for the anomalies of
// every series does (with cfg.FlagsOnly). Series the store does not know at precision are left
// out of the map; one that cannot be fitted (too few buckets) carries
// its error. The error returned is the read's. A scan that repeats reads
// less through a Scanner.
func FitAll(ctx context.Context, st *timeseries.Store, names []string, precision int, cfg forecast.Config) (map[string]Result, error) {
	return (&Scanner{Store: st}).FitAll(ctx, names, precision, cfg)
}

// closed turns zero-filled samples, the last one the bucket in progress,
// into a series of closed buckets from the first hit on.
func closed(name string, precision int, samples []timeseries.Sample) forecast.Series {
	if n := len(samples); n > 0 {
		samples = samples[:n-1]
	}
	first := 0
	for first < len(samples) && samples[first].Count == 0 {
		first++
	}
	samples = samples[first:]
	s := forecast.Series{Name: name, Step: time.Duration(precision) * time.Second, Values: make([]float64, len(samples))}
	if len(samples) > 0 {
		s.Start = time.Unix(samples[0].Time, 0).UTC()
	}
	for i, x := range samples {
		s.Values[i] = float64(x.Count)
	}
	return s
}
