package timeseries

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries/internal/latency"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// ErrUnknownSeries means no series of that name and precision is listed in
// the known set.
var ErrUnknownSeries = errors.New("timeseries: unknown series")

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
// (or the current bucket) is returned, missing ones as zero; at most 20000
// buckets, a wider range being an error.
type Range struct {
	From, To int64
	FillZero bool
}

// Store reads series written by a Recorder with the same Schema.
type Store struct {
	router  *redisconn.Router
	schema  series.Keys
	clock   Clock
	mapping *latency.Mapping // what durations are read by
}

// NewStore returns a reader of the series in pool (a *redis.Pool or a
// *redisc.Cluster) under schema. clock may be nil (system clock); it
// decides the current bucket for zero-filling. Recorder.Store returns one
// with the recorder's pool, schema and clock.
func NewStore(pool Pool, schema Schema, clock Clock) (*Store, error) {
	if pool == nil {
		return nil, errors.New("timeseries: nil pool")
	}
	s, err := series.Keys(schema).Normalize()
	if err != nil {
		return nil, err
	}
	if clock == nil {
		clock = SystemClock{}
	}
	m, _ := latency.NewMapping(latency.Config{}) // the defaults are valid
	return &Store{router: redisconn.NewRouter(pool), schema: s, clock: clock, mapping: m}, nil
}

// Store returns a reader of what r writes: same pool, schema and clock.
func (r *Recorder) Store() *Store {
	s := &Store{router: r.sender.router, schema: r.schema, clock: r.clock}
	if r.durations != nil {
		s.mapping = r.durations.m
	}
	return s
}

const knownPage = 1000

// Series lists every known series, sorted by name, each with its
// precisions in ascending order. It reads the known set in pages so a
// large set does not block Redis.
func (s *Store) Series(ctx context.Context) ([]SeriesInfo, error) {
	byName := map[string][]int{}
	err := s.eachKnown(ctx, func(p int, name []byte) { byName[string(name)] = append(byName[string(name)], p) })
	if err != nil {
		return nil, fmt.Errorf("timeseries: series: %w", err)
	}
	out := make([]SeriesInfo, 0, len(byName))
	for name, ps := range byName {
		slices.Sort(ps)
		out = append(out, SeriesInfo{Name: name, Precisions: ps})
	}
	slices.SortFunc(out, func(a, b SeriesInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// NamesAt lists the known series kept at precision, sorted: what a scan
// of every series at one precision reads. When every member of the known
// set has the same score, as a recorder lists them, it reads only the
// members of that precision.
func (s *Store) NamesAt(ctx context.Context, precision int) ([]string, error) {
	names, ok, err := s.namesByPrefix(ctx, precision)
	if err != nil {
		return nil, fmt.Errorf("timeseries: series: %w", err)
	}
	if ok {
		return names, nil
	}
	err = s.eachKnown(ctx, func(p int, name []byte) {
		if p == precision {
			names = append(names, string(name))
		}
	})
	if err != nil {
		return nil, fmt.Errorf("timeseries: series: %w", err)
	}
	slices.Sort(names)
	return slices.Compact(names), nil // "05:a" lists a at 5 as "5:a" does
}

// eachKnown calls fn with each member of the known set, read in pages;
// name is only valid during the call.
func (s *Store) eachKnown(ctx context.Context, fn func(p int, name []byte)) error {
	conn, err := s.router.Get(s.schema.KnownKey())
	if err != nil {
		return err
	}
	defer conn.Close()
	for start := 0; ; start += knownPage {
		members, err := redis.ByteSlices(redis.DoWithTimeout(conn, redisconn.ReadTimeout(ctx), "ZRANGE", s.schema.KnownKey(), start, start+knownPage-1))
		if err != nil {
			return err
		}
		for _, m := range members {
			if p, name, ok := series.ParseMember(m); ok {
				fn(p, name)
			}
		}
		if len(members) < knownPage {
			return nil
		}
	}
}

// Samples returns one series at one precision, sorted by time. A
// precision the schema does not have is an error; a series missing from
// the known set is ErrUnknownSeries.
func (s *Store) Samples(ctx context.Context, name string, precision int, r Range) ([]Sample, error) {
	if err := s.schema.CheckPrecision(precision); err != nil {
		return nil, err
	}
	if r.From != 0 && r.To != 0 && r.From > r.To {
		return nil, fmt.Errorf("timeseries: samples: from %d is after to %d", r.From, r.To)
	}
	known, key := s.schema.KnownKey(), s.schema.CountKey(precision, name)
	replies := s.router.Do([]redisconn.Cmd{
		{Key: known, Name: "ZSCORE", Args: []any{known, series.Member(precision, name)}},
		{Key: key, Name: "HGETALL", Args: []any{key}},
	}, redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)})
	for _, rep := range replies {
		if rep.Err != nil {
			return nil, fmt.Errorf("timeseries: samples: %w", rep.Err)
		}
	}
	if replies[0].Value == nil {
		return nil, fmt.Errorf("%w: %q at precision %d", ErrUnknownSeries, name, precision)
	}
	samples, err := samplesFromHash(replies[1].Value, r)
	if err != nil {
		return nil, fmt.Errorf("timeseries: samples: %w", err)
	}
	if !r.FillZero {
		return samples, nil
	}
	return series.FillRange(samples, precision, r.From, r.To, series.BucketStart(s.clock.Now().Unix(), precision))
}
