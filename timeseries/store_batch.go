package timeseries

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// maxFieldsPerRead bounds the bucket fields SamplesMany asks for by name
// per series; a wider closed range reads the whole hash instead.
const maxFieldsPerRead = 4096

// SamplesMany reads several series at one precision in one round trip to
// Redis, as Samples would read each of them. Names missing from the known
// set (never written, or removed by a cleaner) are left out of the map;
// repeated names are read once.
//
// With both ends of r set, only the bucket starts within [From, To] are
// fetched (HMGET), so a chart window costs the same however long the hash
// grew (fields off bucket starts, which Pulse never writes, are then not
// seen even unfilled); otherwise every field is fetched (HGETALL) and filtered. A hash no
// longer than the window reads faster whole, but a hash no cleaner trims
// reads many times slower whole (BenchmarkReadManySeries): the bound wins.
func (s *Store) SamplesMany(ctx context.Context, names []string, precision int, r Range) (map[string][]Sample, error) {
	if err := s.schema.CheckPrecision(precision); err != nil {
		return nil, err
	}
	if r.From != 0 && r.To != 0 && r.From > r.To {
		return nil, fmt.Errorf("timeseries: samples many: from %d is after to %d", r.From, r.To)
	}
	out := make(map[string][]Sample, len(names))
	if len(names) == 0 {
		return out, nil
	}
	unique := uniqueNames(names)
	fields, empty := windowFields(precision, r)
	times := fieldTimes(fields) // once for every name, not once per name
	cmds := s.samplesManyCmds(unique, precision, fields, empty)
	var err error
	results := s.router.Do(cmds, redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)})
	replies := make([]any, len(results))
	for i, rep := range results {
		if rep.Err != nil {
			return nil, fmt.Errorf("timeseries: samples many: %w", rep.Err)
		}
		replies[i] = rep.Value
	}
	perName := 2
	if empty {
		perName = 1
	}
	current := series.BucketStart(s.clock.Now().Unix(), precision)
	for i, name := range unique {
		if replies[perName*i] == nil {
			continue // not in the known set
		}
		samples := []Sample{}
		switch {
		case empty:
		case fields != nil:
			samples, err = samplesFromValues(times, replies[perName*i+1])
		default:
			samples, err = samplesFromHash(replies[perName*i+1], r)
		}
		if err != nil {
			return nil, fmt.Errorf("timeseries: samples many: %q: %w", name, err)
		}
		if r.FillZero {
			if samples, err = series.FillRange(samples, precision, r.From, r.To, current); err != nil {
				return nil, err
			}
		}
		out[name] = samples
	}
	return out, nil
}

// windowFields lists the bucket starts of a closed range as HMGET
// arguments. It returns nil when the range is open or too wide to list,
// and empty when the range holds no bucket start.
func windowFields(precision int, r Range) (fields []any, empty bool) {
	if r.From == 0 || r.To == 0 {
		return nil, false
	}
	first, last, n := series.BucketSpan(precision, r.From, r.To)
	if n == 0 {
		return nil, true
	}
	if n > maxFieldsPerRead {
		return nil, false
	}
	fields = make([]any, 0, n)
	for t := first; t <= last; t += int64(precision) {
		fields = append(fields, strconv.FormatInt(t, 10))
	}
	return fields, false
}

// fieldTimes is the bucket start of each field windowFields asks for.
func fieldTimes(fields []any) []int64 {
	times := make([]int64, len(fields))
	for i, f := range fields {
		times[i], _ = strconv.ParseInt(f.(string), 10, 64)
	}
	return times
}

// samplesFromValues pairs an HMGET reply with the times of the fields
// asked for, skipping buckets that are absent or not integers.
func samplesFromValues(times []int64, reply any) ([]Sample, error) {
	values, err := redis.Values(reply, nil)
	if err != nil {
		return nil, err
	}
	samples := make([]Sample, 0, len(values))
	for i, v := range values {
		if v == nil || i >= len(times) {
			continue
		}
		n, err := redis.Int64(v, nil)
		if err != nil {
			continue // not written by Pulse; skip rather than fail the read
		}
		samples = append(samples, Sample{Time: times[i], Count: n})
	}
	return samples, nil // fields ascend, so samples are sorted
}

// samplesFromHash turns an HGETALL reply into samples within r, sorted by
// time (numerically).
func samplesFromHash(reply any, r Range) ([]Sample, error) {
	m, err := redis.StringMap(reply, nil)
	if err != nil {
		return nil, err
	}
	samples := make([]Sample, 0, len(m))
	for f, v := range m {
		t, err1 := strconv.ParseInt(f, 10, 64)
		n, err2 := strconv.ParseInt(v, 10, 64)
		if err1 != nil || err2 != nil {
			continue
		}
		if (r.From != 0 && t < r.From) || (r.To != 0 && t > r.To) {
			continue
		}
		samples = append(samples, Sample{Time: t, Count: n})
	}
	slices.SortFunc(samples, func(a, b Sample) int { return cmp.Compare(a.Time, b.Time) })
	return samples, nil
}

// uniqueNames is names without repeats, in first-seen order.
func uniqueNames(names []string) []string {
	unique := make([]string, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if !seen[n] {
			seen[n] = true
			unique = append(unique, n)
		}
	}
	return unique
}

// samplesManyCmds reads, for each name, its known-set entry and, unless
// the window is empty, its hash: the given fields, or all of it.
func (s *Store) samplesManyCmds(names []string, precision int, fields []any, empty bool) []redisconn.Cmd {
	known := s.schema.KnownKey()
	cmds := make([]redisconn.Cmd, 0, 2*len(names))
	for _, name := range names {
		cmds = append(cmds, redisconn.Cmd{Key: known, Name: "ZSCORE", Args: []any{known, series.Member(precision, name)}})
		if empty {
			continue
		}
		key := s.schema.CountKey(precision, name)
		if fields != nil {
			cmds = append(cmds, redisconn.Cmd{Key: key, Name: "HMGET", Args: append([]any{key}, fields...)})
		} else {
			cmds = append(cmds, redisconn.Cmd{Key: key, Name: "HGETALL", Args: []any{key}})
		}
	}
	return cmds
}
