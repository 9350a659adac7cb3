package forecast

import (
	"math/rand/v2"
	"testing"
	"time"
)

// detectCase is a family of generated series with one injected event each.
type detectCase struct {
	name  string
	kind  Kind
	step  time.Duration
	base  float64
	ev    event // At is counted back from the end when negative
	seeds int
}

// runDetect fits every series of c and tallies recall and false flags.
func runDetect(t *testing.T, c detectCase, test uint64, cfg Config) detection {
	t.Helper()
	var d detection
	for i := range c.seeds {
		rng := seeded(test, i)
		end := genEnd.Add(time.Duration(rng.IntN(168)) * time.Hour)
		gc := genConfig{Step: c.step, N: 120, End: end, Base: c.base, Daily: 0.8, Weekend: 0.3, Trend: 0.01, Disp: 0.05}
		var ev *event
		if c.ev.Kind != "" {
			e := c.ev
			e.At = 120 - 8 - rng.IntN(20) // late in the history, where a reader looks
			ev = &e
			gc.Events = []event{e}
		}
		g := generate(gc, rng)
		if ev != nil && ev.Kind == Drop && g.mean[ev.At] < 20 {
			continue // the stated size: at least 20 hits a bucket
		}
		cf := cfg
		cf.Kind = c.kind
		if c.step < day {
			cf.Context = gc.context(c.kind, end, rand.New(rand.NewPCG(test+1000, uint64(i))))
		}
		fd, err := FitWithConfig(g.series(c.kind), cf)
		if err != nil {
			t.Fatal(err)
		}
		d.add(g, fd, ev)
	}
	return d
}

var detectCases = []detectCase{
	{"spike 4σ 3 buckets 1m", Counts, time.Minute, 100, event{Kind: Spike, Len: 3, Size: 4}, 60},
	{"spike 4σ 3 buckets 1h", Counts, time.Hour, 100, event{Kind: Spike, Len: 3, Size: 4}, 60},
	{"spike 4σ 3 buckets 5s", Counts, 5 * time.Second, 30, event{Kind: Spike, Len: 3, Size: 4}, 60},
	{"drop to zero 3 buckets 5m", Counts, 5 * time.Minute, 100, event{Kind: Drop, Len: 3, Size: 0}, 60},
	{"drop to zero 3 buckets 1d", Counts, day, 3000, event{Kind: Drop, Len: 3, Size: 0}, 60},
	{"shift +30% 1h", Counts, time.Hour, 500, event{Kind: LevelShift, Size: 0.3}, 60},
	{"shift -30% 5m", Counts, 5 * time.Minute, 500, event{Kind: LevelShift, Size: -0.3}, 60},
	{"latency x2 1m", Latency, time.Minute, 100, event{Kind: LatencyRegression, Len: 3, Size: 2}, 60},
	{"errors x3 1h", ErrorRatio, time.Hour, 1000, event{Kind: ErrorSurge, Len: 3, Size: 3}, 60},
	{"none 5s", Counts, 5 * time.Second, 20, event{}, 60},
	{"none 1h low", Counts, time.Hour, 3, event{}, 60},
	{"none 1h", Counts, time.Hour, 300, event{}, 60},
	{"none latency 1h", Latency, time.Hour, 300, event{}, 60},
	{"none errors 5m", ErrorRatio, 5 * time.Minute, 300, event{}, 60},
}
