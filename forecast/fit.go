package forecast

import (
	"fmt"
	"math"
)

// Fitted is a series with its model: the one-step expectation and score
// of every past bucket, the flags, and what is needed to forecast.
type Fitted struct {
	Model   Model
	History []Point
	Flags   []Flag // every bucket of an incident, oldest first
	// Incidents are the events the flags make, oldest first: one for each
	// break, however many buckets it spans.
	Incidents []Incident

	series   Series
	f        *filter
	prof     *profile
	lent     borrowed
	p        params
	sc       scales
	last     run
	hits     float64       // ErrorRatio: hits per future bucket, when fixed
	hitsFd   *Fitted       // ErrorRatio: the forecast of the hits, when not
	flagFrom int           // the first bucket that may flag
	cals     []calibration // of each bucket, and last of the first bucket forecast
	rho      float64       // the lag correlation of the scores
}

// Fit fits a Counts series with the defaults.
func Fit(s Series) (*Fitted, error) {
	return FitWithConfig(s, Config{})
}

// FitWithConfig fits s as cfg says.
func FitWithConfig(s Series, cfg Config) (*Fitted, error) {
	if err := s.validate(cfg.Kind); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults(s.Step)
	if cfg.off.week {
		cfg.Context.Week = nil
	}
	w := working(s, cfg.Kind)
	valid := 0
	for _, v := range w {
		if !math.IsNaN(v) {
			valid++
		}
	}
	if valid < warmup+1 {
		return nil, fmt.Errorf("%w: series %q: %d buckets with a value, need %d", ErrTooShort, s.Name, valid, warmup+1)
	}
	m := Model{Kind: cfg.Kind.String(), Step: s.Step, Samples: valid}
	period, seasons := 0, []Season(nil)
	if cfg.Kind == ErrorRatio {
		m.Notes = append(m.Notes, "error ratios are modelled without a season")
	} else if !cfg.off.season {
		period, seasons = ownSeason(s.Step, valid)
		period, seasons = refuseSparse(cfg.Kind, w, period, seasons)
	}
	var lent borrowed
	if !cfg.off.season {
		var notes []string
		lent, period, seasons, notes = borrowFirst(cfg.Context, cfg.Kind, s.Step, period, seasons)
		m.Notes = append(m.Notes, notes...)
	}
	m.Seasons = seasons
	f, prof := build(s, cfg, w, period, lent)
	p, sc, last := f.fit()
	m.Alpha, m.Beta, m.Damping = p.alpha, p.beta, p.phi
	m.Dispersion, m.Scale, m.ScaleAhead, m.Lead = f.disp, sc.one, sc.ahead, sc.lead
	m.Cleaned = last.cleaned + prof.cleaned
	fd := &Fitted{Model: m, series: s, f: f, prof: prof, lent: lent, p: p, sc: sc, last: last}
	fd.hits = futureHits(s, cfg)
	if cfg.Kind == ErrorRatio && cfg.FutureHits <= 0 {
		// The band of a future ratio depends on the hits it will be over:
		// forecast them too, so a quiet night gets a wider band.
		hs := Series{Name: s.Name, Step: s.Step, Start: s.Start, Values: s.Hits}
		cx := Context{Hourly: hitsOf(cfg.Context.Hourly), Daily: hitsOf(cfg.Context.Daily)}
		if hf, err := FitWithConfig(hs, Config{Context: cx, off: cfg.off}); err == nil {
			fd.hitsFd = hf
		}
	}
	// The first quarter of the history is scored but not flagged: the
	// level and its trend are still settling there, the scales leave it
	// out too, and a reader looks at the end.
	fd.flagFrom = max(last.warm, len(w)/4)
	spans := fd.score(cfg)
	fd.history(!cfg.FlagsOnly)
	if cfg.FlagsOnly {
		for t, in := range mask(len(w), spans) {
			if in {
				fd.History[t].Band80, fd.History[t].Band95 = fd.predictiveAt(t, last.mu[t], last.v[t], f.hitsAt(t)).bands()
			}
		}
	}
	fd.Incidents, fd.Flags = incidents(s, cfg, fd.History, spans)
	return fd, nil
}

// cleanZ is how far, in noise deviations, a bucket must lie from its
// season's median to be replaced in the profile: far enough that an
// underestimated noise does not clean the season's real peaks away.
const cleanZ = 5

// build estimates the season and the noise and returns the filter ready
// to run.
func build(s Series, cfg Config, w []float64, period int, lent borrowed) (*filter, *profile) {
	n := len(w)
	mult := cfg.Kind == Counts
	f := &filter{kind: cfg.Kind, w: w, mult: mult, hits: s.Hits, relevel: cfg.Relevel, off: cfg.off,
		ahead: max(6, max(period, lent.replaced)/2), grid: gridFor(s.Step, cfg.off),
		fLoo: make([]float64, n), fFull: make([]float64, n), ref: make([]float64, n)}
	ext := make([]float64, n)
	adj := make([]float64, n)
	for t := range w {
		ext[t] = neutral(mult)
		if lent.any() {
			ext[t] = lent.at(s.Time(t), s.Step)
		}
		adj[t] = f.remove(w[t], ext[t])
	}
	ph := make([]int, n)
	med := []float64{neutral(mult)}
	if period > 0 {
		for t := range ph {
			ph[t] = phase(s.Time(t), s.Step, period)
		}
	}
	trend, raw := decompose(adj, max(period, 7), mult)
	if period > 0 {
		med = phaseMedians(raw, ph, period, mult)
	}
	// What the decomposition expects of each bucket, on the working scale.
	exp := make([]float64, n)
	for t := range w {
		exp[t] = f.clampMu(f.combine(f.combine(trend[t], med[ph[t]]), ext[t]))
	}
	f.disp = dispersion(cfg.Kind, w, others(w, adj, raw, trend, ext, ph, period, f), s.Hits)
	sd := func(t int) float64 {
		return math.Sqrt(noiseVar(cfg.Kind, exp[t], f.disp, f.hitsAt(t)))
	}
	prof := flatProfile(n, mult)
	if period > 0 {
		prof = fitProfile(raw, ph, med, mult, !cfg.off.clean, func(t int) bool {
			return math.Abs(w[t]-exp[t]) > cleanZ*sd(t)
		})
		if day%s.Step == 0 && period == int(day/s.Step) {
			prof.smooth(phaseNoise(w, trend, ext, med, ph, f))
		}
	}
	for t := range w {
		f.fFull[t] = f.combine(prof.at(ph[t]), ext[t])
		f.fLoo[t] = f.combine(prof.without(t), ext[t])
		f.ref[t] = math.Max(sd(t), 1e-9)
	}
	f.floor = levelFloor(cfg.Kind, w, s.Hits, f.fFull, cfg.off)
	return f, prof
}

// phaseNoise is the variance of each phase's mean ratio that the noise
// alone would give it. A phase is judged at the larger of its median and
// its neighbours', so a phase of quiet nights that saw only zeros is not
// taken for a certain zero.
func phaseNoise(w, trend, ext, med []float64, ph []int, f *filter) []float64 {
	period := len(med)
	nv := make([]float64, period)
	cnt := make([]float64, period)
	for t := range w {
		if math.IsNaN(w[t]) || math.IsNaN(trend[t]) {
			continue
		}
		j := ph[t]
		m := math.Max(med[j], (med[(j+period-1)%period]+med[j]+med[(j+1)%period])/3)
		mu := f.combine(f.combine(trend[t], m), ext[t])
		v := noiseVar(f.kind, mu, f.disp, f.hitsAt(t))
		if f.mult {
			den := trend[t] * ext[t]
			if den <= 0 {
				continue
			}
			v /= den * den
		}
		nv[j] += v
		cnt[j]++
	}
	for j := range nv {
		if cnt[j] > 0 {
			nv[j] /= cnt[j] * cnt[j]
		} else {
			nv[j] = math.Inf(1)
		}
	}
	return nv
}

// others is what the other buckets expect of each bucket: the median of
// its phase in the other seasons, or of its neighbours without a season,
// with how many buckets that median was over. A median that includes the
// bucket itself would be the bucket one time in five, and the noise would
// look smaller than it is.
func others(w, adj, raw, trend, ext []float64, ph []int, period int, f *filter) othersExp {
	n := len(w)
	o := othersExp{exp: make([]float64, n), m: make([]int, n)}
	buf := make([]float64, 0, 16)
	for t := range w {
		buf = buf[:0]
		if period > 0 {
			for u := t % period; u < n; u += period {
				if u != t && !math.IsNaN(raw[u]) {
					buf = append(buf, raw[u])
				}
			}
		} else {
			for u := max(0, t-3); u <= min(n-1, t+3); u++ {
				if u != t && !math.IsNaN(adj[u]) {
					buf = append(buf, adj[u])
				}
			}
		}
		o.m[t] = len(buf)
		m := medianInPlace(buf)
		switch {
		case math.IsNaN(m):
			o.exp[t] = math.NaN()
		case period > 0:
			o.exp[t] = f.clampMu(f.combine(f.combine(trend[t], m), ext[t]))
		default:
			o.exp[t] = f.clampMu(f.combine(m, ext[t]))
		}
	}
	return o
}

type othersExp struct {
	exp []float64
	m   []int
}

// dispersion estimates the noise parameter from the residuals of each
// bucket to what the others expect of it, allowing for the noise of that
// median itself.
func dispersion(kind Kind, w []float64, o othersExp, hits []float64) float64 {
	exp := o.exp
	res := make([]float64, len(w))
	infl := make([]float64, len(w))
	for t := range w {
		res[t] = w[t] - exp[t]
		infl[t] = math.Sqrt(1 + math.Pi/(2*float64(max(o.m[t], 1))))
	}
	switch kind {
	case Latency:
		abs := make([]float64, len(res))
		for t, r := range res {
			abs[t] = math.Abs(r) / infl[t]
		}
		return math.Max(madToSigma*median(abs, nil), 1e-3)
	case ErrorRatio:
		return dispersionFit(res, func(t int, d float64) float64 {
			return infl[t] * math.Sqrt(noiseVar(kind, exp[t], d, hits[t]))
		}, 1)
	}
	return dispersionFit(res, func(t int, d float64) float64 {
		return infl[t] * math.Sqrt(noiseVar(kind, exp[t], d, 0))
	}, 3)
}

// hitsOf returns the hits of an ErrorRatio series as a Counts series.
func hitsOf(s *Series) *Series {
	if s == nil || s.Hits == nil {
		return nil
	}
	return &Series{Name: s.Name, Step: s.Step, Start: s.Start, Values: s.Hits}
}

// futureHits is the hits an ErrorRatio forecast assumes per bucket.
func futureHits(s Series, cfg Config) float64 {
	if cfg.Kind != ErrorRatio {
		return 0
	}
	if cfg.FutureHits > 0 {
		return cfg.FutureHits
	}
	from := max(0, len(s.Hits)-24)
	h := median(s.Hits[from:], nil)
	if math.IsNaN(h) || h < 1 {
		h = 1
	}
	return h
}

// predictiveAt is the predictive distribution of bucket t (t past the
// history: the forecast), calibrated as that bucket is.
func (fd *Fitted) predictiveAt(t int, mu, v, hits float64) predictive {
	c := fd.cals[min(t, len(fd.cals)-1)]
	return predictive{kind: fd.f.kind, mu: mu, v: v, hits: hits, normal: fd.f.off.discrete, cal: c}
}

// history fills the one-step expectation and bands of every past bucket.
// With bands false it leaves the bands of the history out (NaN), as a
// scan for flags does not draw them.
func (fd *Fitted) history(bands bool) {
	s, r := fd.series, fd.last
	fd.History = make([]Point, len(s.Values))
	nan := math.NaN()
	for t := range s.Values {
		pr := fd.predictiveAt(t, r.mu[t], r.v[t], fd.f.hitsAt(t))
		pt := Point{Time: s.Time(t), Hits: pr.hits, Expected: pr.expected(), Band80: Band{nan, nan}, Band95: Band{nan, nan}}
		if bands {
			pt = pr.point(s.Time(t))
		}
		pt.Value = observed(s, fd.f.kind, t)
		pt.Score = r.z[t]
		pt.Cleaned = r.rejected[t]
		fd.History[t] = pt
	}
}

func observed(s Series, kind Kind, t int) float64 {
	v := s.Values[t]
	switch kind {
	case ErrorRatio:
		if s.Hits[t] <= 0 {
			return math.NaN()
		}
		return v / s.Hits[t]
	case Latency:
		if v <= 0 {
			return math.NaN()
		}
	}
	return v
}

// Forecast returns the expected value and 80 % and 95 % prediction
// intervals of the next horizon buckets after the history.
func (fd *Fitted) Forecast(horizon int) []Point {
	n := len(fd.series.Values)
	out := make([]Point, 0, max(horizon, 0))
	f, p := fd.f, fd.p
	base, pw := fd.last.level, 1.0
	phiSum := 0.0
	var hitsFc []Point
	if fd.hitsFd != nil {
		hitsFc = fd.hitsFd.Forecast(horizon)
	}
	for h := 1; h <= horizon; h++ {
		t := fd.series.Time(n - 1 + h)
		pw *= p.phi
		phiSum += pw
		fac := fd.prof.at(phase(t, fd.series.Step, fd.prof.period))
		if fd.lent.any() {
			fac = f.combine(fac, fd.lent.at(t, fd.series.Step))
		}
		mu := f.clampMu(f.combine(f.lifted(base+phiSum*fd.last.trend), fac))
		hits := fd.hits
		if hitsFc != nil {
			hits = math.Max(1, math.Round(hitsFc[h-1].Expected))
		}
		v := noiseVar(f.kind, mu, f.disp, hits) * fd.sc.at(p, h)
		pt := fd.predictiveAt(n+h-1, mu, v, hits).point(t)
		pt.Value, pt.Score = math.NaN(), math.NaN()
		out = append(out, pt)
	}
	return out
}
