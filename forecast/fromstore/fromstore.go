// Package fromstore forecasts the series a Pulse recorder wrote to Redis.
// It reads a series at one precision, with the same series at 1 h and
// 1 d whose shape the forecast borrows, through the store's exported
// reads (one round trip per Redis node for each precision), and hands
// them to package forecast, which knows nothing of Redis.
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
	if cfg.Kind != forecast.Counts {
		return nil, fmt.Errorf("forecast: %q: the store holds counts, not %v", name, cfg.Kind)
	}
	precisions := []int{precision}
	if precision < hour {
		precisions = append(precisions, hour)
	}
	if precision < day {
		precisions = append(precisions, day)
	}
	got, err := readLast(ctx, st, name, precisions, Window+1)
	if err != nil {
		return nil, err
	}
	samples, ok := got[precision]
	if !ok {
		return nil, fmt.Errorf("forecast: %q at precision %d: %w", name, precision, timeseries.ErrUnknownSeries)
	}
	if h, ok := got[hour]; ok && precision < hour {
		s := closed(name, hour, h)
		cfg.Context.Hourly = &s
	}
	if d, ok := got[day]; ok && precision < day {
		s := closed(name, day, d)
		cfg.Context.Daily = &s
	}
	return forecast.FitWithConfig(closed(name, precision, samples), cfg)
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
