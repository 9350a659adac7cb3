package fromstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/timeseries"
)

// FitErrors reads the hits of the series name and the errors of the
// series errorsName (its 5xx class: "status:5xx" for the app's hits,
// "GET /x status:5xx" for a route) at precision, in one round trip per
// node, and fits their ratio: binomial given the hits, so a bucket of
// few hits may carry a high ratio without a flag. A route that never
// failed has no errors series: its errors are zero.
func FitErrors(ctx context.Context, st *timeseries.Store, name, errorsName string, precision int, cfg forecast.Config) (*forecast.Fitted, error) {
	r := lastRange(st, precision, Window+1)
	got, err := st.SamplesMany(ctx, []string{name, errorsName}, precision, r)
	if err != nil {
		return nil, fmt.Errorf("forecast: read %q at %d: %w", name, precision, err)
	}
	hits, ok := got[name]
	if !ok {
		return nil, fmt.Errorf("forecast: %q at precision %d: %w", name, precision, timeseries.ErrUnknownSeries)
	}
	s := closed(name, precision, hits)
	s.Hits, s.Values = s.Values, make([]float64, len(s.Values))
	byTime := map[int64]int64{}
	for _, x := range got[errorsName] {
		byTime[x.Time] = x.Count
	}
	for i := range s.Values {
		s.Values[i] = float64(byTime[s.Time(i).Unix()])
	}
	cfg.Kind = forecast.ErrorRatio
	return forecast.FitWithConfig(s, cfg)
}

// FitDurations reads the durations of the series name at precision, in one
// round trip per node, and fits its q-quantile per bucket, in seconds,
// on a log scale. Buckets without a request are missing, not zero.
func FitDurations(ctx context.Context, st *timeseries.Store, name string, precision int, q float64, cfg forecast.Config) (*forecast.Fitted, error) {
	if !(q > 0 && q <= 1) {
		return nil, fmt.Errorf("forecast: quantile %g outside (0, 1]", q)
	}
	d, err := st.LastDurations(ctx, name, precision, Window+1)
	if err != nil {
		return nil, fmt.Errorf("forecast: read the durations of %q at %d: %w", name, precision, err)
	}
	buckets := d.Buckets
	if n := len(buckets); n > 0 {
		buckets = buckets[:n-1] // the bucket in progress
	}
	first := 0
	for first < len(buckets) && buckets[first].Hist.Count() == 0 {
		first++
	}
	buckets = buckets[first:]
	if len(buckets) == 0 {
		return nil, fmt.Errorf("forecast: %q at precision %d: %w", name, precision, ErrNoData)
	}
	s := forecast.Series{Name: name, Step: time.Duration(precision) * time.Second,
		Start: time.Unix(buckets[0].Start, 0).UTC(), Values: make([]float64, len(buckets))}
	for i, b := range buckets {
		s.Values[i] = math.NaN()
		if b.Hist.Count() > 0 {
			s.Values[i] = b.Hist.Quantile(q).Seconds()
		}
	}
	cfg.Kind = forecast.Latency
	return forecast.FitWithConfig(s, cfg)
}

// ErrNoData is returned for a series with no bucket to fit.
var ErrNoData = errors.New("no closed bucket with data")

// lastRange is the last n buckets of precision up to the current one,
// zero-filled.
func lastRange(st *timeseries.Store, precision, n int) timeseries.Range {
	current := timeseries.BucketStart(st.Clock().Now().Unix(), precision)
	return timeseries.Range{From: current - int64(n-1)*int64(precision), To: current, FillZero: true}
}
