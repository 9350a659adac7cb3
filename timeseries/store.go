package timeseries

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// ErrUnknownPrecision is matched (errors.Is) by the error for a precision
// the schema does not have.
var ErrUnknownPrecision = errors.New("timeseries: unknown precision")

// ErrUnknownSeries means no series of that name and precision is listed in
// the known set.
var ErrUnknownSeries = errors.New("timeseries: unknown series")

// ErrRangeTooLarge means a zero-filled read would hold more than
// MaxSamples samples.
var ErrRangeTooLarge = errors.New("timeseries: range too large")

// MaxSamples bounds the samples of one zero-filled read.
const MaxSamples = 20000

// PrecisionError reports a precision outside the schema.
type PrecisionError struct {
	Precision int
	Valid     []int
}

func (e *PrecisionError) Error() string {
	return fmt.Sprintf("timeseries: unknown precision %d (have %v)", e.Precision, e.Valid)
}

// Is makes errors.Is(err, ErrUnknownPrecision) true.
func (e *PrecisionError) Is(target error) bool { return target == ErrUnknownPrecision }

// Sample is the count of one bucket; Time is the bucket's start in unix seconds.
type Sample struct {
	Time  int64 `json:"time"`
	Count int64 `json:"count"`
}

// SeriesInfo names a series and the precisions it is kept at.
type SeriesInfo struct {
	Name       string `json:"name"`
	Precisions []int  `json:"precisions"`
}

// Range selects samples by bucket start. Zero From or To leaves that end
// open. With FillZero, every bucket from From (or the oldest sample) to To
// (or the current bucket) is returned, missing ones as zero.
type Range struct {
	From, To int64
	FillZero bool
}

// Store reads series written by a Recorder with the same Schema.
type Store struct {
	router *redisconn.Router
	schema Schema
	clock  Clock
}

// defaultReadTimeout bounds a read whose context has no deadline.
const defaultReadTimeout = 5 * time.Second

// NewStore returns a reader of the series in pool (a *redis.Pool or a
// *redisc.Cluster) under schema. clock may be nil (system clock); it
// decides the current bucket for zero-filling. Recorder.Store returns one
// with the recorder's pool, schema and clock.
func NewStore(pool Pool, schema Schema, clock Clock) (*Store, error) {
	if pool == nil {
		return nil, errors.New("timeseries: nil pool")
	}
	s, err := schema.withDefaults()
	if err != nil {
		return nil, err
	}
	if clock == nil {
		clock = SystemClock
	}
	return &Store{router: redisconn.NewRouter(pool), schema: s, clock: clock}, nil
}

// Store returns a reader of what r writes: same pool, schema and clock.
func (r *Recorder) Store() *Store {
	return &Store{router: r.router, schema: r.schema, clock: r.clock}
}

// timeout is what is left of ctx's deadline, or defaultReadTimeout.
func timeout(ctx context.Context) time.Duration {
	t, err := redisconn.Timeout(ctx, 0)
	switch {
	case err != nil:
		return time.Millisecond // past the deadline: fail fast
	case t == 0:
		return defaultReadTimeout // no deadline
	}
	return t
}

// Schema returns the store's schema with defaults filled in.
func (s *Store) Schema() Schema { return s.schema }

// CheckPrecision returns a *PrecisionError when p is not in the schema.
func (s *Store) CheckPrecision(p int) error {
	if !s.schema.HasPrecision(p) {
		return &PrecisionError{Precision: p, Valid: slices.Clone(s.schema.Precisions)}
	}
	return nil
}

// Ping sends PING through the store's pool and returns nil when Redis
// answers PONG. On a cluster it asks the node serving the known set, the
// node every listing of the series needs. It writes and reads nothing, so
// a probe can call it as often as it likes.
func (s *Store) Ping(ctx context.Context) error {
	known := s.schema.KnownKey()
	rep := s.router.DoContext(ctx, []redisconn.Cmd{{Key: known, Name: "PING"}}, redisconn.Options{Timeout: timeout(ctx)})[0]
	if rep.Err != nil {
		return fmt.Errorf("timeseries: ping: %w", rep.Err)
	}
	if pong, _ := redis.String(rep.Value, nil); pong != "PONG" {
		return fmt.Errorf("timeseries: ping: answered %v, not PONG", rep.Value)
	}
	return nil
}

const knownPage = 1000

// Series lists every known series, sorted by name, each with its
// precisions in ascending order. It reads the known set in pages so a
// large set does not block Redis.
func (s *Store) Series(ctx context.Context) ([]SeriesInfo, error) {
	conn, err := s.router.Get(s.schema.KnownKey())
	if err != nil {
		return nil, fmt.Errorf("timeseries: series: %w", err)
	}
	defer conn.Close()
	byName := map[string][]int{}
	for start := 0; ; start += knownPage {
		members, err := redis.Strings(redis.DoWithTimeout(conn, timeout(ctx), "ZRANGE", s.schema.KnownKey(), start, start+knownPage-1))
		if err != nil {
			return nil, fmt.Errorf("timeseries: series: %w", err)
		}
		for _, m := range members {
			if p, name, ok := ParseMember(m); ok {
				byName[name] = append(byName[name], p)
			}
		}
		if len(members) < knownPage {
			break
		}
	}
	out := make([]SeriesInfo, 0, len(byName))
	for name, ps := range byName {
		slices.Sort(ps)
		out = append(out, SeriesInfo{Name: name, Precisions: ps})
	}
	slices.SortFunc(out, func(a, b SeriesInfo) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out, nil
}

// Samples returns one series at one precision, sorted by time. An unknown
// precision is a *PrecisionError; a series missing from the known set is
// ErrUnknownSeries.
func (s *Store) Samples(ctx context.Context, name string, precision int, r Range) ([]Sample, error) {
	if err := s.CheckPrecision(precision); err != nil {
		return nil, err
	}
	if r.From != 0 && r.To != 0 && r.From > r.To {
		return nil, fmt.Errorf("timeseries: samples: from %d is after to %d", r.From, r.To)
	}
	known, key := s.schema.KnownKey(), s.schema.CountKey(precision, name)
	replies := s.router.Do([]redisconn.Cmd{
		{Key: known, Name: "ZSCORE", Args: []any{known, Member(precision, name)}},
		{Key: key, Name: "HGETALL", Args: []any{key}},
	}, redisconn.Options{Timeout: timeout(ctx)})
	for _, rep := range replies {
		if rep.Err != nil {
			return nil, fmt.Errorf("timeseries: samples: %w", rep.Err)
		}
	}
	if replies[0].Value == nil {
		return nil, fmt.Errorf("%w: %q at precision %d", ErrUnknownSeries, name, precision)
	}
	fields, err := redis.StringMap(replies[1].Value, nil)
	if err != nil {
		return nil, fmt.Errorf("timeseries: samples: %w", err)
	}
	samples := make([]Sample, 0, len(fields))
	for f, v := range fields {
		// Field names are integers: compare them as numbers, never as strings.
		t, err1 := strconv.ParseInt(f, 10, 64)
		n, err2 := strconv.ParseInt(v, 10, 64)
		if err1 != nil || err2 != nil {
			continue // not written by Pulse; skip rather than fail the read
		}
		if (r.From != 0 && t < r.From) || (r.To != 0 && t > r.To) {
			continue
		}
		samples = append(samples, Sample{Time: t, Count: n})
	}
	slices.SortFunc(samples, func(a, b Sample) int { return cmp.Compare(a.Time, b.Time) })
	if !r.FillZero {
		return samples, nil
	}
	return fillZero(samples, precision, r, BucketStart(s.clock.Now().Unix(), precision))
}

// fillZero returns one sample per bucket from the range's start to its end,
// taking counts from samples (sorted) and zero elsewhere. An open end is
// the oldest sample or the current bucket (or a newer sample).
func fillZero(samples []Sample, precision int, r Range, current int64) ([]Sample, error) {
	from, to := r.From, r.To
	if to == 0 {
		to = current
		if n := len(samples); n > 0 && samples[n-1].Time > to {
			to = samples[n-1].Time
		}
	}
	if from == 0 {
		if len(samples) == 0 {
			return []Sample{}, nil
		}
		from = samples[0].Time
	}
	if _, _, n := bucketSpan(precision, from, to); n > MaxSamples {
		return nil, fmt.Errorf("%w: %d buckets, at most %d", ErrRangeTooLarge, n, MaxSamples)
	}
	return FillZero(samples, precision, from, to), nil
}

// bucketSpan gives the first and last bucket starts within [from, to] at
// precision, and how many buckets that is (0 when none).
func bucketSpan(precision int, from, to int64) (first, last, n int64) {
	p := int64(precision)
	first = BucketStart(from, precision)
	if first < from {
		first += p
	}
	last = BucketStart(to, precision)
	if last < first {
		return first, last, 0
	}
	return first, last, (last-first)/p + 1
}

// FillZero returns one sample per bucket start within [from, to], with
// the count of samples (sorted by time) where one is on that start and
// zero elsewhere. It is what a chart of the window draws; a caller bounds
// the window first, as the samples kept are (ErrRangeTooLarge).
func FillZero(samples []Sample, precision int, from, to int64) []Sample {
	first, last, n := bucketSpan(precision, from, to)
	out := make([]Sample, 0, n)
	i := 0
	for t := first; t <= last; t += int64(precision) {
		for i < len(samples) && samples[i].Time < t {
			i++ // not on a bucket boundary: written by something else
		}
		c := int64(0)
		if i < len(samples) && samples[i].Time == t {
			c = samples[i].Count
		}
		out = append(out, Sample{Time: t, Count: c})
	}
	return out
}
