package forecast

import (
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/race"
)

// A series of less than a hit a bucket, as most routes are at 5 s, or of
// a few errors a day, raises no flags from its noise: a run of zeros does
// not take its expectation down to nothing, where any hit, or any error,
// would be beyond every band.
func TestSparseSeriesRaiseNoFlags(t *testing.T) {
	race.SkipMeasurement(t)
	for i, c := range []struct {
		name string
		kind Kind
		step time.Duration
		base float64 // hits a bucket
		errs float64 // share of hits that fail
	}{
		{"0.3 hits a bucket at 5 s", Counts, 5 * time.Second, 0.3, 0},
		{"0.8 hits a bucket at 5 s", Counts, 5 * time.Second, 0.8, 0},
		{"0.8 hits a bucket at 1 min", Counts, time.Minute, 0.8, 0},
		{"0.5 hits a bucket at 1 h", Counts, time.Hour, 0.5, 0},
		{"1 error in 2,000 hits at 5 min", ErrorRatio, 5 * time.Minute, 300, 0.0005},
		{"1 error in 500 hits at 5 min", ErrorRatio, 5 * time.Minute, 300, 0.002},
	} {
		t.Run(c.name, func(t *testing.T) {
			var on, off detection
			for k := range 200 {
				gc := genConfig{Step: c.step, N: 120, End: genEnd, Base: c.base, Daily: 0.8, Weekend: 0.3, Trend: 0.01, Disp: 0.05, ErrRate: c.errs}
				g := generate(gc, seeded(uint64(400+i), k))
				for _, run := range []struct {
					d   *detection
					cfg Config
				}{{&on, Config{Kind: c.kind}}, {&off, Config{Kind: c.kind, off: guards{floor: true}}}} {
					fd, err := FitWithConfig(g.series(c.kind), run.cfg)
					if err != nil {
						t.Fatal(err)
					}
					run.d.add(g, fd, nil)
				}
			}
			t.Logf("%.2f false flags per 1,000 buckets; %.2f with no least expectation", on.falsePer1000(), off.falsePer1000())
			if on.falsePer1000() > 1 {
				t.Errorf("%.2f false flags per 1,000 buckets, want at most 1", on.falsePer1000())
			}
			if off.falsePer1000() <= 1 {
				t.Errorf("with no least expectation %.2f false flags per 1,000: the row does not need it", off.falsePer1000())
			}
		})
	}
}
