package latency

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkSlot measures what the request path asks of this package: a
// duration's slot, by table (timeseries adds it to its stripe's bins; the
// whole record is BenchmarkRecord/duration there).
func BenchmarkSlot(b *testing.B) {
	m := mustMapping(b, Config{})
	// Log-normal durations, drawn before timing, as requests would give.
	ds := logNormal(rand.New(rand.NewPCG(1, 1)), 1024, 20*time.Millisecond, 1)
	b.ReportAllocs()
	n := 0
	for i := range b.N {
		n += m.Slot(ds[i&1023])
	}
	sinkInt = n
}

var sinkInt int

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
