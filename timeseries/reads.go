package timeseries

import (
	"context"
	"time"

	"github.com/pulse-dev/pulse/timeseries/internal/latency"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// Histogram is a histogram of request durations: its count, sum, min,
// max, quantiles and bins.
type Histogram = latency.Histogram

// DurationMapping is how durations are binned: Histogram.Mapping.
type DurationMapping = latency.Mapping

// NewDurationMapping returns the mapping of a Recorder whose
// Config.DurationAccuracy, DurationMin and DurationMax are accuracy, min
// and max (zero values take the same defaults), for histograms to merge
// with the ones it reads.
func NewDurationMapping(accuracy float64, min, max time.Duration) (*DurationMapping, error) {
	return latency.NewMapping(latency.Config{Accuracy: accuracy, Min: min, Max: max})
}

// NewHistogram returns an empty histogram binned by m, to merge others
// of m into.
func NewHistogram(m *DurationMapping) *Histogram { return latency.NewHistogram(m) }

// The bin indexes of a DurationMapping's durations below its Min and
// above its Max (see Histogram.Bin).
const (
	UnderflowBin = latency.Underflow
	OverflowBin  = latency.Overflow
)

// Durations are one series' request durations over a window of buckets
// at one precision: a histogram per bucket, oldest first, and Window,
// every bucket merged.
type Durations = series.Durations

// DurationBucket is the durations of one bucket.
type DurationBucket = series.DurationBucket

// Visitors are one series' unique visitors over a window of buckets at
// one precision: an estimate per bucket, oldest first, and Window, the
// union of the buckets (each visitor counted once).
type Visitors = series.Visitors

// VisitorBucket is the visitors of one bucket.
type VisitorBucket = series.VisitorBucket

var (
	// ErrNoDurations means the store's recorder keeps no durations, or
	// the series' name cannot have any.
	ErrNoDurations = series.ErrNoDurations
	// ErrNoVisitors means no visitors are kept at that precision, or the
	// series' name cannot have any.
	ErrNoVisitors = series.ErrNoVisitors
	// ErrRangeTooLarge means a read would span more buckets than allowed.
	ErrRangeTooLarge = series.ErrRangeTooLarge
	// ErrUnknownPrecision is matched by the error for a precision the
	// schema does not keep.
	ErrUnknownPrecision = series.ErrUnknownPrecision
)

// handle is s's connections, schema, clock and duration mapping, which
// the reads of package series work through.
func (s *Store) handle() series.Handle {
	return series.Handle{Router: s.router, Keys: s.schema, Clock: s.clock, Latency: s.mapping}
}

// Pool is the pool s reads through.
func (s *Store) Pool() Pool { return s.router.Pool() }

// Schema is s's schema, its defaults filled in.
func (s *Store) Schema() Schema { return Schema(s.schema) }

// Clock is s's clock: the current bucket is the one holding its Now.
func (s *Store) Clock() Clock { return s.clock }

// Ping sends PING and returns nil when Redis answers PONG; on a cluster it
// asks the node holding the known set. It reads and writes no key, so a
// health probe may call it as often as it likes.
func (s *Store) Ping(ctx context.Context) error { return s.handle().Ping(ctx) }

// Durations reads the durations of one series at one precision in the
// buckets whose starts are in [from, to] (unix seconds), in one round
// trip. With durations off it returns ErrNoDurations.
func (s *Store) Durations(ctx context.Context, name string, precision int, from, to int64) (Durations, error) {
	return s.handle().Durations(ctx, name, precision, from, to)
}

// LastDurations reads the durations of the last n buckets of one series,
// ending with the current (still open) one.
func (s *Store) LastDurations(ctx context.Context, name string, precision, n int) (Durations, error) {
	return s.handle().LastDurations(ctx, name, precision, n)
}

// Visitors reads the unique visitors of one series at one precision in
// the buckets whose starts are in [from, to], in one round trip.
func (s *Store) Visitors(ctx context.Context, name string, precision int, from, to int64) (Visitors, error) {
	return s.handle().Visitors(ctx, name, precision, from, to)
}

// LastVisitors reads the visitors of the last n buckets of one series,
// ending with the current (still open) one.
func (s *Store) LastVisitors(ctx context.Context, name string, precision, n int) (Visitors, error) {
	return s.handle().LastVisitors(ctx, name, precision, n)
}

// CurrentVisitors reads the visitors of each of names in the current
// bucket at precision, pipelined. A name that cannot keep visitors is
// left out; one without any counts 0.
func (s *Store) CurrentVisitors(ctx context.Context, names []string, precision int) (map[string]int64, error) {
	return s.handle().CurrentVisitors(ctx, names, precision)
}
