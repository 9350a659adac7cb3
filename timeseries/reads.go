package timeseries

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
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

var (
	// ErrRangeTooLarge means a read would span more buckets than allowed.
	ErrRangeTooLarge = series.ErrRangeTooLarge
	// ErrUnknownPrecision is matched by the error for a precision the
	// schema does not keep.
	ErrUnknownPrecision = series.ErrUnknownPrecision
)

// Pool is the pool s reads through.
func (s *Store) Pool() Pool { return s.router.Pool() }

// Schema is s's schema, its defaults filled in.
func (s *Store) Schema() Schema { return Schema(s.schema) }

// Clock is s's clock: the current bucket is the one holding its Now.
func (s *Store) Clock() Clock { return s.clock }

// Ping sends PING and returns nil when Redis answers PONG; on a cluster it
// asks the node holding the known set, the node every listing of the
// series needs. It reads and writes no key, so a health probe may call it
// as often as it likes.
func (s *Store) Ping(ctx context.Context) error {
	known := s.schema.KnownKey()
	rep := s.router.DoContext(ctx, []redisconn.Cmd{{Key: known, Name: "PING"}}, redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)})[0]
	if rep.Err != nil {
		return fmt.Errorf("timeseries: ping: %w", rep.Err)
	}
	if pong, _ := redis.String(rep.Value, nil); pong != "PONG" {
		return fmt.Errorf("timeseries: ping: answered %v, not PONG", rep.Value)
	}
	return nil
}

// lastBuckets is the window of the last n buckets at precision, ending
// with the current (still open) bucket by s's clock; n must be from 1 to
// limit. what names the read in the error.
func (s *Store) lastBuckets(what string, precision, n, limit int) (from, to int64, err error) {
	if n <= 0 || n > limit {
		return 0, 0, fmt.Errorf("timeseries: %s: %d buckets, want 1 to %d", what, n, limit)
	}
	to = series.BucketStart(s.clock.Now().Unix(), precision)
	return to - int64(n-1)*int64(precision), to, nil
}
