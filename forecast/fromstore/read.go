package fromstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/pulse-dev/pulse/timeseries"
)

// readLast reads series at several precisions through the store's
// exported reads, one SamplesMany (one round trip per Redis node) per
// precision: for each name and precision, its last n buckets up to the
// current one, missing buckets as zero, oldest first. Precisions the
// schema does not keep, and those at which a series is not in the known
// set, are left out of its map.
func readLast(ctx context.Context, st *timeseries.Store, names []string, precisions []int, n int) (map[string]map[int][]timeseries.Sample, error) {
	keeps := st.Schema().Precisions // filled in by the store
	out := make(map[string]map[int][]timeseries.Sample, len(names))
	for _, p := range precisions {
		if !slices.Contains(keeps, p) {
			continue
		}
		got, err := st.SamplesMany(ctx, names, p, lastRange(st, p, n))
		if err != nil {
			return nil, fmt.Errorf("forecast: read at %d: %w", p, err)
		}
		for name, samples := range got {
			if out[name] == nil {
				out[name] = make(map[int][]timeseries.Sample, len(precisions))
			}
			out[name][p] = samples
		}
	}
	return out, nil
}
