package fromstore

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/pulse-dev/pulse/timeseries"
)

// readLast reads one series at several precisions: at each, its last n
// buckets up to the current one, missing buckets as zero, oldest first,
// with one read (one round trip per Redis node) per precision.
// Precisions the schema does not keep, and those at which the series is
// not in the known set, are left out of the map.
func readLast(ctx context.Context, st *timeseries.Store, name string, precisions []int, n int) (map[int][]timeseries.Sample, error) {
	now := st.Clock().Now().Unix()
	keeps := st.Schema().Precisions // filled in by the store
	out := make(map[int][]timeseries.Sample, len(precisions))
	for _, p := range precisions {
		if !slices.Contains(keeps, p) {
			continue
		}
		current := now / int64(p) * int64(p)
		r := timeseries.Range{From: current - int64(n-1)*int64(p), To: current, FillZero: true}
		got, err := st.Samples(ctx, name, p, r)
		switch {
		case errors.Is(err, timeseries.ErrUnknownSeries):
			continue
		case err != nil:
			return nil, fmt.Errorf("forecast: read %q at %d: %w", name, p, err)
		}
		out[p] = got
	}
	return out, nil
}
