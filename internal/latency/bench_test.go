package latency

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkRecord measures the request path: one duration into an
// Accumulator of the default mapping, from one goroutine (the cost one
// request pays; the budget is 40 ns and no allocation) and from every P
// at once (ns/op is wall time over all goroutines' records).
func BenchmarkRecord(b *testing.B) {
	m := mustMapping(b, Config{})
	// Log-normal durations, drawn before timing, as requests would give.
	ds := logNormal(rand.New(rand.NewPCG(1, 1)), 1024, 20*time.Millisecond, 1)
	b.Run("serial", func(b *testing.B) {
		a := NewAccumulator(m)
		b.ReportAllocs()
		for i := range b.N {
			a.Record(ds[i&1023])
		}
	})
	b.Run("parallel", func(b *testing.B) {
		a := NewAccumulator(m)
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for i := 0; pb.Next(); i++ {
				a.Record(ds[i&1023])
			}
		})
	})
}

// BenchmarkTake measures a flush's take of an accumulator that recorded
// one second of 200 requests.
func BenchmarkTake(b *testing.B) {
	m := mustMapping(b, Config{})
	a := NewAccumulator(m)
	ds := logNormal(rand.New(rand.NewPCG(1, 1)), 200, 20*time.Millisecond, 1)
	h := NewHistogram(m)
	b.ReportAllocs()
	for range b.N {
		for _, d := range ds {
			a.Record(d)
		}
		h.Reset()
		a.TakeInto(h)
	}
}

// BenchmarkQuantile measures the 99th percentile of a histogram of
// log-normal durations (its cost is the walk over the bins, not the
// number of durations), at each accuracy.
func BenchmarkQuantile(b *testing.B) {
	for _, alpha := range []float64{0.01, 0.05} {
		m := mustMapping(b, Config{Accuracy: alpha})
		h := histogramOf(m, logNormal(rand.New(rand.NewPCG(1, 1)), 100_000, 20*time.Millisecond, 1))
		b.Run(fmt.Sprintf("α=%g", alpha), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				sinkDuration = h.Quantile(0.99)
			}
		})
	}
}

var sinkDuration time.Duration
