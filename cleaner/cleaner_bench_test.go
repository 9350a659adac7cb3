package cleaner_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/internal/redistest"
	"github.com/pulse-dev/pulse/internal/series"
	"github.com/pulse-dev/pulse/timeseries"
)

// BenchmarkPass measures one full pass (every precision due) over 10 000
// series × 6 precisions, each hash holding 130 buckets of which 10 are
// past the newest 120, in a real redis-server. Before each pass the 10
// trimmed buckets are written back, outside the timer.
//
// Reported: round trips and Redis commands per pass (INFO commandstats,
// commands run inside the scripts included), and fields deleted.
func BenchmarkPass(b *testing.B) {
	const numSeries, fields, keep = 10000, 130, 120
	srv := redistest.Start(b)
	pool := srv.Pool()
	schema, _ := series.Schema{}.Normalize()
	clock := timeseries.NewManualClock(t0)

	conn := pool.Get()
	defer conn.Close()
	write := func(from, to int) {
		for i := range numSeries {
			name := "GET /bench/" + strconv.Itoa(i)
			for _, p := range schema.Precisions {
				cur := series.BucketStart(t0.Unix(), p)
				args := []any{schema.CountKey(p, name)}
				for j := from; j < to; j++ {
					args = append(args, cur-int64(j)*int64(p), 1)
				}
				_ = conn.Send("HSET", args...)
				if from == 0 {
					_ = conn.Send("ZADD", schema.KnownKey(), 0, series.Member(p, name))
				}
			}
			if i%200 == 199 {
				if _, err := conn.Do(""); err != nil {
					b.Fatal(err)
				}
			}
		}
		if _, err := conn.Do(""); err != nil {
			b.Fatal(err)
		}
	}
	write(0, fields)

	b.ReportAllocs()
	b.ResetTimer()
	var trips, deleted, commands int64
	for range b.N {
		b.StopTimer()
		write(keep, fields)
		c, err := cleaner.New(cleaner.Config{Pool: pool, Clock: clock, Manual: true, OnError: func(err error) { b.Error(err) }})
		if err != nil {
			b.Fatal(err)
		}
		before := commandCount(b, conn)
		b.StartTimer()
		st, err := c.Pass(context.Background())
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if want := numSeries * len(schema.Precisions); st.Series != want || st.FieldsDeleted != int64(want*(fields-keep)) {
			b.Fatalf("pass cleaned %d numSeries and %d fields, want %d and %d", st.Series, st.FieldsDeleted, want, want*(fields-keep))
		}
		commands += commandCount(b, conn) - before - 1 // less the INFO itself
		trips += int64(st.RoundTrips)
		deleted += st.FieldsDeleted
		c.Close(context.Background())
		b.StartTimer()
	}
	b.ReportMetric(float64(trips)/float64(b.N), "roundtrips/op")
	b.ReportMetric(float64(commands)/float64(b.N), "rediscmds/op")
	b.ReportMetric(float64(deleted)/float64(b.N), "fields-deleted/op")
}

// commandCount sums the calls of every command Redis has run.
func commandCount(b *testing.B, conn redis.Conn) int64 {
	info, err := redis.String(conn.Do("INFO", "commandstats"))
	if err != nil {
		b.Fatal(err)
	}
	var total int64
	for _, line := range strings.Split(info, "\n") {
		_, rest, ok := strings.Cut(line, ":calls=")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(rest[:strings.IndexByte(rest, ',')], 10, 64)
		total += n
	}
	return total
}
