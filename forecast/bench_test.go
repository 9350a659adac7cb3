package forecast

import (
	"math/rand/v2"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user and system CPU time so far. The machine
// that runs the benchmarks is shared, so wall time per operation says
// more about the neighbours than about the code.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// benchSeries generates n series at step with their 1 h and 1 d context.
func benchSeries(n int, step time.Duration, kind Kind) ([]Series, []Context) {
	ss, cx := make([]Series, n), make([]Context, n)
	for i := range n {
		gc := genConfig{Step: step, N: 120, Base: 50 + float64(i%7)*40, Daily: 0.8, Weekend: 0.3, Trend: 0.01, Disp: 0.05}
		ss[i] = generate(gc, seeded(900, i)).series(kind)
		if step < day {
			cx[i] = gc.context(kind, genEnd, rand.New(rand.NewPCG(901, uint64(i))))
		}
	}
	return ss, cx
}

// One series of 120 buckets: fit, score the history, forecast a day.
func BenchmarkForecastOne(b *testing.B) {
	for _, c := range []struct {
		name string
		step time.Duration
		kind Kind
	}{
		{"counts_1h", time.Hour, Counts},
		{"counts_1m_borrowing", time.Minute, Counts},
		{"latency_1h", time.Hour, Latency},
		{"errors_5m", 5 * time.Minute, ErrorRatio},
	} {
		b.Run(c.name, func(b *testing.B) {
			ss, cx := benchSeries(1, c.step, c.kind)
			cfg := Config{Kind: c.kind, Context: cx[0]}
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				fd, err := FitWithConfig(ss[0], cfg)
				if err != nil {
					b.Fatal(err)
				}
				_ = fd.Forecast(24)
			}
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N)/1000, "cpu-ms/series")
		})
	}
}

// Every series of an app with 500 series at one precision, each with its
// 1 h and 1 d context, as a scan for the anomalies list would.
func BenchmarkForecast500(b *testing.B) {
	ss, cx := benchSeries(500, time.Minute, Counts)
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		flags := 0
		for i := range ss {
			fd, err := FitWithConfig(ss[i], Config{Context: cx[i], FlagsOnly: true})
			if err != nil {
				b.Fatal(err)
			}
			flags += len(fd.Flags)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N)/1000, "cpu-ms/500series")
}

// 500 series at 1 h, with and without each series' Week lent, as a
// Scanner that keeps them in Redis fits: the Week folded from three weeks
// of its 1 h buckets.
func BenchmarkForecast500Week(b *testing.B) {
	ss, cx := benchSeries(500, time.Hour, Counts)
	for i := range cx {
		gc := genConfig{Step: time.Hour, N: 3 * WeekHours, Base: 50 + float64(i%7)*40, Daily: 0.8, Weekend: 0.3, Trend: 0.01, Disp: 0.05}
		var w Week
		if _, err := w.Fold(generate(gc, seeded(902, i)).series(Counts)); err != nil || !w.Ready() {
			b.Fatal(err, w.Ready())
		}
		cx[i].Week = &w
	}
	for _, week := range []bool{false, true} {
		b.Run(map[bool]string{false: "without", true: "with"}[week], func(b *testing.B) {
			b.ReportAllocs()
			cpu := cpuTime()
			for b.Loop() {
				for i := range ss {
					cfg := Config{Context: cx[i], FlagsOnly: true, off: guards{week: !week}}
					if _, err := FitWithConfig(ss[i], cfg); err != nil {
						b.Fatal(err)
					}
				}
			}
			b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/float64(b.N)/1000, "cpu-ms/500series")
		})
	}
}
