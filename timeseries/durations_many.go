package timeseries

import "context"

// DurationsMany reads the durations of several series at one precision,
// in the buckets whose starts are in [from, to], as Durations would read
// each of them, in one round trip (one per node on a cluster). A name
// that cannot have durations (see ErrNoDurations) is left out of the map;
// repeated names are read once. A series with nothing recorded reads as
// empty histograms.
func (s *Store) DurationsMany(ctx context.Context, names []string, precision int, from, to int64) (map[string]Durations, error) {
	return s.handle().DurationsMany(ctx, uniqueNames(names), precision, from, to)
}
