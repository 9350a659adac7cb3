package latency_test

import (
	"fmt"
	"time"

	"github.com/pulse-dev/pulse/timeseries/internal/latency"
)

func Example() {
	m, err := latency.NewMapping(latency.Config{}) // 5 %, 10 µs to 10 min
	if err != nil {
		panic(err)
	}
	// Two instances record, each into its own histogram.
	a, b := latency.NewHistogram(m), latency.NewHistogram(m)
	for i := 1; i <= 100; i++ {
		a.Add(time.Duration(i) * time.Millisecond)
		b.Add(time.Duration(i) * 2 * time.Millisecond)
	}
	// Each flush writes its instance's fields; Redis adds them.
	hash := map[string]int64{}
	for _, h := range []*latency.Histogram{a, b} {
		for _, f := range h.Fields() {
			old, ok := hash[f.Name]
			switch {
			case !ok:
				hash[f.Name] = f.Value
			case f.Op == latency.Add:
				hash[f.Name] = old + f.Value
			case f.Op == latency.Lower:
				hash[f.Name] = min(old, f.Value)
			case f.Op == latency.Raise:
				hash[f.Name] = max(old, f.Value)
			}
		}
	}
	// A reader decodes the bucket (HGETALL gives strings) and asks.
	fields := map[string]string{}
	for k, v := range hash {
		fields[k] = fmt.Sprint(v)
	}
	h, err := latency.Decode(m, fields)
	if err != nil {
		panic(err)
	}
	fmt.Println(h.Count(), h.Min(), h.Max(), h.Mean())
	fmt.Println(h.Quantile(0.5), "(exact 67ms)")
	fmt.Println(h.Quantile(0.99), "(exact 196ms)")
	// Output:
	// 200 1ms 200ms 75.75ms
	// 65.205914ms (exact 67ms)
	// 200ms (exact 196ms)
}
