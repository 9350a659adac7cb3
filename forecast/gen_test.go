package forecast

import (
	"math"
	"math/rand/v2"
	"time"
)

// This file is the generator of realistic series the tests judge the
// forecaster against: the truth of every bucket is known.

// genConfig describes the traffic of one series.
type genConfig struct {
	Step    time.Duration
	N       int       // buckets
	End     time.Time // start of the bucket after the last; zero: genEnd
	Base    float64   // mean hits per bucket
	Daily   float64   // amplitude of the daily shape on a log scale
	Weekend float64   // share of traffic lost on Saturday and Sunday
	Trend   float64   // relative change per day
	Disp    float64   // log-normal spread of each bucket's rate beyond Poisson
	LatMed  float64   // median latency, seconds; 0: 0.05
	LatSig  float64   // log-scale spread of the latency quantile; 0: 0.15
	ErrRate float64   // share of hits that fail; 0: 0.02
	Events  []event
}

// event is an injected anomaly at a known bucket.
type event struct {
	Kind AnomalyKind
	At   int     // first bucket
	Len  int     // buckets; a level shift lasts to the end
	Size float64 // spike: sigmas added; drop: share kept; shift: relative change; latency, errors: factor
}

// generated is one series at one step with its truth.
type generated struct {
	cfg      genConfig
	start    time.Time
	hits     []float64
	errors   []float64
	latency  []float64
	mean     []float64 // the true mean hits of each bucket, events included
	abnormal []bool    // touched by an event, or after a level shift
}

// genEnd is a fixed Monday 00:00 UTC, so the week's shape is the same on
// every run; tests do not depend on the date they run at.
var genEnd = time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)

// shape is the daily profile: a long afternoon peak and a morning one.
func shape(t time.Time) float64 {
	h := float64(t.Unix()%86400) / 3600
	return math.Cos(2*math.Pi*(h-15)/24) + 0.4*math.Cos(4*math.Pi*(h-10)/24)
}

// slot is the 5-minute slot of the day the generator's shape is
// tabulated at.
const slot = 5 * time.Minute

// shapeTable is shape at the middle of every slot of the day.
var shapeTable = func() []float64 {
	tab := make([]float64, day/slot)
	for i := range tab {
		tab[i] = shape(time.Unix(int64(i)*int64(slot/time.Second), 0).Add(slot / 2))
	}
	return tab
}()

// rater returns the true mean hits per second of c at unix second u,
// with the daily factor read from a table: the truth is then constant
// within a slot.
func (c genConfig) rater(origin time.Time) func(u int64) float64 {
	factor := make([]float64, len(shapeTable))
	for i, v := range shapeTable {
		factor[i] = c.Base / c.Step.Seconds() * math.Exp(c.Daily*v)
	}
	o := origin.Unix()
	perSlot := int64(slot / time.Second)
	return func(u int64) float64 {
		r := factor[(u%86400)/perSlot]
		if wd := (u/86400 + 4) % 7; wd == 0 || wd == 6 { // 1970-01-01 was a Thursday
			r *= 1 - c.Weekend
		}
		return r * math.Max(0.05, 1+c.Trend*float64(u-o)/86400)
	}
}

// meanHits integrates the rate over the bucket starting at t, at most 48
// points a bucket.
func meanHits(rate func(int64) float64, t time.Time, step time.Duration) float64 {
	parts := int64(max(1, min(48, int(step/slot))))
	sec := int64(step / time.Second)
	sum := 0.0
	for i := range parts {
		sum += rate(t.Unix() + (2*i+1)*sec/(2*parts))
	}
	return sum / float64(parts) * step.Seconds()
}

func generate(c genConfig, rng *rand.Rand) *generated {
	if c.End.IsZero() {
		c.End = genEnd
	}
	c.LatMed = cmp0(c.LatMed, 0.05)
	c.LatSig = cmp0(c.LatSig, 0.15)
	c.ErrRate = cmp0(c.ErrRate, 0.02)
	g := &generated{cfg: c, start: c.End.Add(-c.Step * time.Duration(c.N))}
	g.hits, g.errors, g.latency = make([]float64, c.N), make([]float64, c.N), make([]float64, c.N)
	g.mean, g.abnormal = make([]float64, c.N), make([]bool, c.N)
	rate := c.rater(g.start)
	for i := range c.N {
		t := g.start.Add(c.Step * time.Duration(i))
		mu := meanHits(rate, t, c.Step)
		lat := math.Log(c.LatMed) + 0.1*c.Daily*shape(t)
		errRate := c.ErrRate
		for _, e := range c.Events {
			in := i >= e.At && (i < e.At+e.Len || e.Kind == LevelShift)
			if !in {
				continue
			}
			g.abnormal[i] = true
			switch e.Kind {
			case LevelShift:
				mu *= 1 + e.Size
			case LatencyRegression:
				lat += math.Log(e.Size)
			case ErrorSurge:
				errRate = math.Min(1, errRate*e.Size)
			}
		}
		rateMu := mu * math.Exp(c.Disp*rng.NormFloat64()-c.Disp*c.Disp/2)
		y := poisson(rng, rateMu)
		for _, e := range c.Events {
			if i < e.At || i >= e.At+e.Len {
				continue
			}
			switch e.Kind {
			case Spike:
				y += math.Round(e.Size * noiseSD(mu, c.Disp))
			case Drop:
				y = math.Round(y * e.Size)
			}
		}
		g.mean[i], g.hits[i] = mu, y
		g.errors[i] = math.Min(y, poisson(rng, y*errRate))
		g.latency[i] = math.Exp(lat + c.LatSig*rng.NormFloat64())
	}
	return g
}

// noiseSD is the standard deviation of a bucket's hits around mu.
func noiseSD(mu, disp float64) float64 {
	return math.Sqrt(mu + mu*mu*(math.Exp(disp*disp)-1))
}

func cmp0(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

// poisson draws a Poisson count: exactly by Knuth's product for means up
// to 30, as a sum of such draws up to 200, and by the normal beyond.
func poisson(rng *rand.Rand, mu float64) float64 {
	if mu <= 0 {
		return 0
	}
	if mu > 200 {
		return math.Max(0, math.Round(mu+math.Sqrt(mu)*rng.NormFloat64()))
	}
	total := 0.0
	for mu > 0 {
		m := math.Min(mu, 30)
		mu -= m
		l, k, p := math.Exp(-m), 0.0, 1.0
		for {
			p *= rng.Float64()
			if p <= l {
				break
			}
			k++
		}
		total += k
	}
	return total
}

// series returns the generated buckets as a Series of kind.
func (g *generated) series(kind Kind) Series {
	s := Series{Name: "gen", Step: g.cfg.Step, Start: g.start}
	switch kind {
	case ErrorRatio:
		s.Values, s.Hits = g.errors, g.hits
	case Latency:
		s.Values = g.latency
	default:
		s.Values = g.hits
	}
	return s
}

// head returns the first n buckets as a series, the rest held out.
func (g *generated) head(kind Kind, n int) Series {
	s := g.series(kind)
	s.Values = s.Values[:n]
	if s.Hits != nil {
		s.Hits = s.Hits[:n]
	}
	return s
}

// context generates the same traffic at 1 h and 1 d, ending where g's
// history ends, for a fine series to borrow from, as series of kind.
func (c genConfig) context(kind Kind, end time.Time, rng *rand.Rand) Context {
	h := c
	h.Step, h.N, h.End, h.Events = time.Hour, 120, end, nil
	h.Base = c.Base * 3600 / c.Step.Seconds()
	d := h
	// Daily buckets start at midnight UTC, as Pulse's do: the context
	// holds the complete days before end.
	d.Step, d.Base, d.End = day, c.Base*86400/c.Step.Seconds(), end.Truncate(day)
	hs := generate(h, rng).series(kind)
	ds := generate(d, rng).series(kind)
	return Context{Hourly: &hs, Daily: &ds}
}
