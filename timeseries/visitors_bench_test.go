package timeseries_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// BenchmarkRecordVisitor measures what a request pays for its visitor: a
// request recorded as the middlewares record it in the hits series (a
// hit, a duration and the visitor, the default), with the flusher
// draining and sending PFADDs every second to a real redis-server
// meanwhile. The visitor's own cost is the difference to none:
//
//   - none: no visitor (the app's VisitorID hook said "");
//   - new: 1,000 distinct addresses in turn, more than a stripe's memo
//     holds, so every request pays the keyed hash of address and a
//     desktop User-Agent under the day's salt, and the insert into a
//     stripe's buffer;
//   - repeat: one visitor, the memo's case: a seeded hash finds its id.
//
// serial is one goroutine, the cost one request pays; parallel every P
// at once (ns/op is wall time over all ops).
func BenchmarkRecordVisitor(b *testing.B) {
	if !redistest.Installed() {
		b.Skip("redis-server not installed; `make bench` installs it")
	}
	srv := redistest.Start(b)
	srv.Do("CONFIG", "SET", "appendonly", "no")
	r, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), OnError: func(err error) { b.Error(err) }})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = r.Close(context.Background()) }()
	if err := r.Flush(context.Background()); err != nil { // loads the salt
		b.Fatal(err)
	}
	hits, _ := r.Counter("hits")
	const ua = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"
	for _, v := range []struct {
		name     string
		distinct int
	}{{"none", 0}, {"new", 1000}, {"repeat", 1}} {
		fs := make([]finished, max(v.distinct, 1))
		for i := range fs {
			fs[i] = finished{Duration: 20 * time.Millisecond, Timed: [timeseries.MaxTimed]*timeseries.Counter{hits}}
			if v.distinct > 0 {
				addr := "198.51.100." + strconv.Itoa(i%250) + ":" + strconv.Itoa(i)
				fs[i].Visitor, fs[i].Visited = timeseries.Visitor{Addr: addr, UserAgent: ua}, 1
			}
		}
		b.Run(v.name+"/serial", func(b *testing.B) {
			b.ReportAllocs()
			start := time.Now()
			for i := 0; b.Loop(); i++ {
				recordFinished(r, fs[i%len(fs)])
			}
			reportVisits(b, r, start)
		})
		b.Run(v.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			start := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for i := 0; pb.Next(); i++ {
					recordFinished(r, fs[i%len(fs)])
				}
			})
			reportVisits(b, r, start)
		})
	}
}

func reportVisits(b *testing.B, r *timeseries.Recorder, start time.Time) {
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "visits/s")
	if d := r.Health().DroppedVisitors; d != 0 {
		b.Errorf("%d visitors dropped", d)
	}
}

// TestRecordVisitorAllocs: counting a visitor allocates nothing once the
// stripe has room (the set is emptied in place by each drain).
func TestRecordVisitorAllocs(t *testing.T) {
	srv := redistest.Start(t)
	r := readyRecorder(t, srv, timeseries.Config{})
	hits := mustCounter(t, r, "hits")
	v := timeseries.Visitor{Addr: "192.0.2.1", UserAgent: "Mozilla/5.0 (X11; Linux x86_64) Gecko/20100101 Firefox/128.0"}
	f := finished{Visitor: v, Timed: [timeseries.MaxTimed]*timeseries.Counter{hits}, Visited: 1}
	recordFinished(r, f) // the stripe's first table
	if n := testing.AllocsPerRun(1000, func() { recordFinished(r, f) }); n != 0 {
		t.Errorf("%v allocations per visitor, want 0", n)
	}
}
