package fromstore

import (
	"context"
	"fmt"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/timeseries"
)

// Scan fits the counts of every one of names at precision, with their
// 1 h and 1 d shapes below those precisions: one read per precision,
// each one round trip per node whatever the number of names. Names not
// in the known set at precision are left out. Each fit gets cfg with
// FlagsOnly set, so a scan for anomalies does not pay for the bands of
// every past bucket.
func Scan(ctx context.Context, st *timeseries.Store, names []string, precision int, cfg forecast.Config) (map[string]*forecast.Fitted, error) {
	if cfg.Kind != forecast.Counts {
		return nil, fmt.Errorf("forecast: a scan reads counts, not %v", cfg.Kind)
	}
	cfg.FlagsOnly = true
	main, err := st.SamplesMany(ctx, names, precision, lastRange(st, precision, Window+1))
	if err != nil {
		return nil, fmt.Errorf("forecast: scan at %d: %w", precision, err)
	}
	coarse := map[int]map[string][]timeseries.Sample{}
	for _, p := range []int{hour, day} {
		if precision >= p {
			continue
		}
		if coarse[p], err = st.SamplesMany(ctx, names, p, lastRange(st, p, Window+1)); err != nil {
			return nil, fmt.Errorf("forecast: scan at %d: %w", p, err)
		}
	}
	out := make(map[string]*forecast.Fitted, len(main))
	for name, samples := range main {
		c := cfg
		if h, ok := coarse[hour][name]; ok {
			s := closed(name, hour, h)
			c.Context.Hourly = &s
		}
		if d, ok := coarse[day][name]; ok {
			s := closed(name, day, d)
			c.Context.Daily = &s
		}
		fd, err := forecast.FitWithConfig(closed(name, precision, samples), c)
		if err != nil {
			continue // too little history to judge: no flags, not a failed scan
		}
		out[name] = fd
	}
	return out, nil
}
