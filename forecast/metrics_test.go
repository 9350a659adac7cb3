package forecast

import (
	"math"
	"math/rand/v2"
	"time"
)

// Helpers that score the forecaster against generated truth.

// coverage tallies how often observed buckets fall inside their bands.
type coverage struct{ n, in80, in95 int }

func (c *coverage) add(obs float64, p Point) {
	if math.IsNaN(obs) {
		return
	}
	c.n++
	if obs >= p.Band80.Lo && obs <= p.Band80.Hi {
		c.in80++
	}
	if obs >= p.Band95.Lo && obs <= p.Band95.Hi {
		c.in95++
	}
}

func (c coverage) rates() (float64, float64) {
	return float64(c.in80) / float64(c.n), float64(c.in95) / float64(c.n)
}

// heldOut fits the first n buckets of g and scores the forecast of the
// rest: bands against the observed buckets, and the absolute errors of
// the forecast, of the naive one (the last value) and of the seasonal
// naive one (the value one season before).
type heldOut struct {
	cov                  coverage
	mae, naive, seasonal float64
	scale                float64 // in-sample mean absolute one-step naive error
	fitted               *Fitted
}

func scoreHeldOut(g *generated, kind Kind, n int, season int, cfg Config) (heldOut, error) {
	cfg.Kind = kind
	full := g.series(kind)
	fd, err := FitWithConfig(g.head(kind, n), cfg)
	if err != nil {
		return heldOut{}, err
	}
	obs := func(i int) float64 { return observed(full, kind, i) }
	h := len(full.Values) - n
	out := heldOut{fitted: fd}
	for i, p := range fd.Forecast(h) {
		t := n + i
		if g.abnormal[t] {
			continue
		}
		out.cov.add(obs(t), p)
		out.mae += math.Abs(obs(t) - p.Expected)
		out.naive += math.Abs(obs(t) - obs(n-1))
		if season > 0 {
			out.seasonal += math.Abs(obs(t) - obs(n-season+(i%season)))
		}
	}
	cnt := 0
	for t := 1; t < n; t++ {
		out.scale += math.Abs(obs(t) - obs(t-1))
		cnt++
	}
	out.scale /= float64(cnt)
	return out, nil
}

// detection runs fits over generated series with one injected event each
// and tallies recall within 3 buckets, and false incidents: those that
// begin on a normal bucket, per normal bucket.
type detection struct {
	events, found  int
	normal, falses int
	after          int // false incidents begun in the 3 buckets after an event that ends
}

func (d *detection) add(g *generated, fd *Fitted, ev *event) {
	flagged := make(map[time.Time]Flag)
	for _, f := range fd.Flags {
		flagged[f.Bucket] = f
	}
	starts := make(map[time.Time]bool)
	for _, in := range fd.Incidents {
		starts[in.Start] = true
	}
	for t, p := range fd.History {
		if math.IsNaN(p.Score) || t < fd.flagFrom || g.abnormal[t] {
			continue
		}
		d.normal++
		if starts[p.Time] {
			d.falses++
			if ev != nil && ev.Kind != LevelShift && t >= ev.At+ev.Len && t < ev.At+ev.Len+3 {
				d.after++
			}
		}
	}
	if ev == nil {
		return
	}
	d.events++
	for t := ev.At; t < ev.At+3 && t < len(fd.History); t++ {
		if f, ok := flagged[fd.History[t].Time]; ok && matches(f.Kind, ev) {
			d.found++
			return
		}
	}
}

func matches(k AnomalyKind, ev *event) bool {
	switch ev.Kind {
	case LevelShift:
		up := ev.Size > 0
		return k == LevelShift || (up && k == Spike) || (!up && k == Drop)
	case Spike:
		return k == Spike || k == LevelShift
	case Drop:
		return k == Drop || k == LevelShift
	}
	return k == ev.Kind
}

func (d *detection) merge(o detection) {
	d.events, d.found = d.events+o.events, d.found+o.found
	d.normal, d.falses, d.after = d.normal+o.normal, d.falses+o.falses, d.after+o.after
}

func (d detection) recall() float64 { return float64(d.found) / float64(d.events) }

// falsePer1000 is false incidents per 1,000 normal buckets.
func (d detection) falsePer1000() float64 { return 1000 * float64(d.falses) / float64(d.normal) }

// seeded returns a generator for case i of a test, the same on every run.
func seeded(test uint64, i int) *rand.Rand {
	return rand.New(rand.NewPCG(test, uint64(i)))
}
