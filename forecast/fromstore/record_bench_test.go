package fromstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// Recording incidents: the Redis commands one record costs (the script
// call; the commands it runs inside are the server's), and the read of
// 1,000 kept incidents, one script call, with the CPU of both sides.
func BenchmarkRecordIncident(b *testing.B) {
	srv := redistest.Start(b)
	now := time.Date(2026, 3, 4, 10, 30, 0, 0, time.UTC)
	st, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, timeseries.NewManualClock(now))
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	sc := &Scanner{Store: st, Keep: true}
	mem := sc.memoryOf(60)
	b.Run("write", func(b *testing.B) {
		b.ReportAllocs()
		cmds := srv.Calls("EVALSHA") + srv.Calls("EVAL")
		n := 0
		for b.Loop() {
			start := now.Add(-time.Duration(n%100000) * time.Minute)
			n++
			rec := Record{Series: fmt.Sprintf("GET /r/%d", n), Related: []string{"hits"}, Precision: 60, Kind: forecast.Spike,
				Direction: forecast.Up, Start: start.Unix(), End: start.Unix() + 60, Peak: Peak{Bucket: start.Unix(), Observed: 90, Expected: 20, Score: 7}}
			if err := sc.writeRecords(ctx, sc.router(), 60, mem, map[string]Record{rec.ID(): rec}); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(srv.Calls("EVALSHA")+srv.Calls("EVAL")-cmds)/float64(b.N), "cmds/record")
	})
	b.Run("read1000", func(b *testing.B) {
		srv.FlushAll()
		changed := map[string]Record{}
		for i := range 1000 {
			start := now.Add(-time.Duration(i) * time.Minute).Unix()
			rec := Record{Series: fmt.Sprintf("GET /r/%d", i), Related: []string{"hits", "status:2xx"}, Precision: 60, Kind: forecast.Spike,
				Direction: forecast.Up, Start: start, End: start + 60, Peak: Peak{Bucket: start, Observed: 90, Expected: 20, Score: 7}}
			changed[rec.ID()] = rec
		}
		if err := sc.writeRecords(ctx, sc.router(), 60, mem, changed); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		redisCPU := srv.CPU()
		for b.Loop() {
			recs, err := Incidents(ctx, st, 60, time.Unix(0, 0), now.Add(time.Hour))
			if err != nil || len(recs) != 1000 {
				b.Fatalf("%d records, %v", len(recs), err)
			}
		}
		b.ReportMetric(float64((srv.CPU()-redisCPU).Microseconds())/float64(b.N)/1000, "redis-cpu-ms/read")
	})
}
