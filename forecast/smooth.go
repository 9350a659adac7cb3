package forecast

import (
	"math"
	"time"
)

// Thresholds of the robust filter, as scores: a bucket beyond huberZ
// updates the level with its residual shrunk to huberZ; a bucket beyond
// rejectZ does not update it at all (it is cleaned out of the history).
const (
	huberZ  = 2.0
	rejectZ = 3.0
	warmup  = 5 // valid buckets before the first one-step score
	// quickMax is the mean above which parameter search scores counts with
	// the normal approximation; below it the normal's tails are too wrong.
	quickMax = 5
	// calm is the share of loss a calmer fit may cost and still be chosen.
	calm = 0.02
)

// filter is a damped-trend exponential smoothing of the level of a series
// with its season and borrowed shape divided (or subtracted) out. It is
// robust: residuals are shrunk beyond huberZ and ignored beyond rejectZ,
// so one spike or outage neither bends the level nor widens the scale;
// a run of Relevel ignored buckets on one side is a new level.
type filter struct {
	kind        Kind
	w           []float64 // observations on the working scale
	mult        bool
	fLoo, fFull []float64 // season times borrowed shape, per bucket
	hits        []float64 // ErrorRatio
	disp        float64   // noise parameter of noiseVar
	floor       float64   // the least level (levelFloor)
	ref         []float64 // per bucket, a parameter-free noise scale for the grid search
	relevel     int
	ahead       int       // the lead whose errors join the one-step ones in choosing parameters
	init        []float64 // level, trend and warm-up, once found
	scratch     *run      // arrays reused by the passes that choose parameters
	grid        []params  // the parameters the fit chooses among
	off         guards
}

type params struct{ alpha, beta, phi float64 }

// run is one pass of the filter over the history.
type run struct {
	mu, v, z     []float64
	rejected     []bool
	level, trend float64
	loss         float64
	lv, tr       []float64 // level and trend after each bucket
	cleaned      int
	warm         int
}

func (f *filter) combine(base, fac float64) float64 {
	if f.mult {
		return base * fac
	}
	return base + fac
}

func (f *filter) remove(w, fac float64) float64 {
	if f.mult {
		return w / fac
	}
	return w - fac
}

// clampMu keeps an expectation where its kind can be: counts are not
// negative, ratios lie in [0, 1]. (Plain comparisons: math.Max's care for
// signed zeros costs in this hot path.)
func (f *filter) clampMu(mu float64) float64 {
	if f.kind == Latency {
		return mu
	}
	if mu < 0 {
		return 0
	}
	if f.kind == ErrorRatio && mu > 1 {
		return 1
	}
	return mu
}

func (f *filter) hitsAt(t int) float64 {
	if f.hits == nil {
		return 0
	}
	return f.hits[t]
}

// start returns the initial level and trend and the index of the first
// scored bucket. The level comes from the first day of buckets (at least
// warmup, at most 24): on a multiplicative scale as their sum over the
// sum of their factors, so a quiet night at the start cannot pin it to
// zero, otherwise their median. Computed once per fit.
func (f *filter) start() (float64, float64, int) {
	if f.init != nil {
		return f.init[0], f.init[1], int(f.init[2])
	}
	var first, sw, sf []float64
	warm := len(f.w)
	for t, w := range f.w {
		if math.IsNaN(w) {
			continue
		}
		if len(first) == warmup && warm == len(f.w) {
			warm = t
		}
		if len(first) == max(warmup, min(f.ahead*2, 24)) {
			break
		}
		first = append(first, f.remove(w, f.fFull[t]))
		sw, sf = append(sw, w), append(sf, f.fFull[t])
	}
	var level float64
	if f.mult {
		level = f.newLevel(first, sw, sf)
	} else {
		level = medianInPlace(first)
	}
	// The trend starts flat: a slope read from a day of buckets is mostly
	// noise, and the damped trend would carry it on.
	trend := 0.0
	f.init = []float64{level, trend, float64(warm)}
	return level, trend, warm
}

// pass runs the filter with parameters p and scale k. exact scores with
// the kind's own distribution; otherwise with a normal approximation,
// which is enough to choose parameters.
func (f *filter) pass(p params, k float64, exact bool) run {
	n := len(f.w)
	r := f.buffers(exact)
	level, trend, warm := f.start()
	r.warm = warm
	var h holdout
	prevOut := 0
	lv, tr := r.lv, r.tr
	for t, w := range f.w {
		if t > 0 {
			lv[t-1], tr[t-1] = level, trend
		}
		fac := f.fLoo[t]
		base := f.lifted(level + p.phi*trend)
		mu := f.clampMu(f.combine(base, fac))
		v := k * k * noiseVar(f.kind, mu, f.disp, f.hitsAt(t))
		r.mu[t], r.v[t], r.z[t] = mu, v, math.NaN()
		if math.IsNaN(w) {
			level, trend = base, p.phi*trend
			continue
		}
		z := f.score(t, w, mu, v, exact)
		if t >= warm {
			r.z[t] = z
			r.loss += math.Min(math.Abs(w-mu)/f.ref[t], 3)
		}
		d := f.remove(w, f.fFull[t])
		// A second bucket in a row beyond huberZ on one side is held out
		// like an outlier: let in shrunk, a run of them would carry the
		// level along with a shift before the run is long enough to flag.
		out := 0
		if math.Abs(z) > huberZ {
			out = sign(z)
		}
		held := out != 0 && out == prevOut
		prevOut = out
		if t >= warm && (math.Abs(z) > rejectZ || held) && !f.off.clean {
			r.rejected[t] = true
			r.cleaned++
			level, trend = base, p.phi*trend
			if k := h.add(sign(z), d, w, f.fFull[t]); k >= f.relevel {
				// The level it lasted at: its newer half, not an outage that began it.
				level, trend = f.newLevel(h.d[k/2:], h.w[k/2:], h.f[k/2:]), 0
				h.reset(0)
			}
			continue
		}
		h.reset(0)
		e := d - base
		if math.Abs(z) > huberZ && !f.off.clean {
			e *= huberZ / math.Abs(z)
		}
		next := base + f.gain(p, t, base)*e
		trend = p.beta*(next-level) + (1-p.beta)*p.phi*trend
		level = next
	}
	r.level, r.trend = level, trend
	lv[n-1], tr[n-1] = level, trend
	r.loss += f.aheadLoss(p, lv, tr, warm)
	return r
}

// score places w in its predictive distribution; the parameter search
// takes the normal approximation where it is good enough.
func (f *filter) score(t int, w, mu, v float64, exact bool) float64 {
	pr := predictive{kind: f.kind, mu: mu, v: v, hits: f.hitsAt(t), normal: f.off.discrete}
	if !exact && (pr.kind == Latency || pr.counts().mu > quickMax) {
		return (w - mu) / math.Sqrt(v)
	}
	return pr.z(w)
}

// gain is the share of a residual the level takes. On a multiplicative
// scale a bucket where the season expects little says little about the
// level: its share follows its precision relative to a bucket of average
// season.
func (f *filter) gain(p params, t int, base float64) float64 {
	if !f.mult || base <= 0 {
		return p.alpha
	}
	ff, c2l := f.fFull[t], f.disp*f.disp*base
	return p.alpha * math.Min(1, ff*(1+c2l)/(1+c2l*ff))
}

// buffers returns a run to fill: fresh for the final pass, whose arrays
// the fit keeps, and otherwise the filter's scratch one, reused.
func (f *filter) buffers(fresh bool) run {
	n := len(f.w)
	if !fresh && f.scratch != nil {
		r := *f.scratch
		r.loss, r.cleaned = 0, 0
		clear(r.rejected)
		return r
	}
	r := run{mu: make([]float64, n), v: make([]float64, n), z: make([]float64, n), rejected: make([]bool, n),
		lv: make([]float64, n), tr: make([]float64, n)}
	if !fresh {
		f.scratch = &r
	}
	return r
}

// aheadLoss is the robust loss of the forecasts made ahead buckets before
// each bucket. One-step errors alone favour a level that chases every
// wiggle, which forecasts a day ahead poorly.
func (f *filter) aheadLoss(p params, lv, tr []float64, warm int) float64 {
	phiSum, pw := 0.0, 1.0
	for range f.ahead {
		pw *= p.phi
		phiSum += pw
	}
	loss := 0.0
	for t := warm; t+f.ahead < len(f.w); t++ {
		w := f.w[t+f.ahead]
		if math.IsNaN(w) {
			continue
		}
		mu := f.clampMu(f.combine(f.lifted(lv[t]+phiSum*tr[t]), f.fFull[t+f.ahead]))
		loss += math.Min(math.Abs(w-mu)/f.ref[t+f.ahead], 3)
	}
	return loss
}

// newLevel is the level the held buckets show: their median on an
// additive scale; on a multiplicative one the sum of the counts over the
// sum of the factors, which a night bucket's small factor cannot inflate.
func (f *filter) newLevel(d, w, fac []float64) float64 {
	if !f.mult {
		return medianInPlace(d)
	}
	sw, sf := 0.0, 0.0
	for i := range w {
		sw += w[i]
		sf += fac[i]
	}
	return sw / sf
}

func sign(x float64) int {
	if x < 0 {
		return -1
	}
	return 1
}

// gridFor is the parameters a fit of step chooses among. At a day, four
// months hold a trend the level must keep up with, or the lag makes every
// bucket's error larger and a spike's score smaller: a steeper trend gain
// joins the grid there.
func gridFor(step time.Duration, off guards) []params {
	if step >= day && !off.steepTrend {
		return dailyGrid
	}
	return grid
}

var grid, dailyGrid = gridOf(0, 0.05), gridOf(0, 0.05, 0.15)

func gridOf(betas ...float64) []params {
	var g []params
	for _, a := range []float64{0.05, 0.1, 0.2, 0.3, 0.5} {
		for _, b := range betas {
			if b > 0 && (a < 0.1 || a > 0.3) {
				continue // a trend under a level that barely moves, or one that chases, adds little
			}
			g = append(g, params{alpha: a, beta: b, phi: 0.98})
		}
	}
	return g
}

// fit chooses the parameters with the least robust loss one step and
// ahead steps before each bucket, then sets the scales from the median
// residuals at both leads, and runs the final pass with exact scores.
func (f *filter) fit() (params, scales, run) {
	grid := f.grid
	losses := make([]float64, len(grid))
	least := math.Inf(1)
	for i, p := range grid {
		losses[i] = f.pass(p, 1, false).loss
		least = math.Min(least, losses[i])
	}
	// The calmest parameters within a small margin of the least loss: a
	// level that moves less estimates it from more buckets, which
	// narrows the bands and sharpens the flags.
	best := grid[0]
	for i, p := range grid {
		if losses[i] <= least*(1+calm) {
			best = p
			break
		}
	}
	r := f.pass(best, 1, false)
	sc := scales{one: f.scale(r, 1, best), ahead: f.scale(r, f.ahead, best), lead: f.ahead}
	sc.ahead = math.Max(sc.ahead, sc.one)
	return best, sc, f.pass(best, sc.one, true)
}

// scales are the robust sizes of the errors relative to the noise model,
// one step ahead and lead steps ahead: measured, not assumed, so the
// bands of a forecast widen as much as the history says they must.
type scales struct {
	one, ahead float64
	lead       int
}

// at returns the variance factor h steps ahead: the one-step scale, the
// lead-step one, and between and beyond them the growth of the model.
func (sc scales) at(p params, h int) float64 {
	one, ahead := sc.one*sc.one, sc.ahead*sc.ahead
	if h <= 1 || sc.lead <= 1 {
		return one * growth(p, h)
	}
	if h >= sc.lead {
		return ahead * growth(p, h) / growth(p, sc.lead)
	}
	x := float64(h-1) / float64(sc.lead-1)
	return one + x*(ahead-one)
}

// scale is the robust size of the residuals lead steps ahead relative to
// the noise model: 1 when the noise is all there is.
func (f *filter) scale(r run, lead int, p params) float64 {
	phiSum, pw := 0.0, 1.0
	for range lead {
		pw *= p.phi
		phiSum += pw
	}
	u := make([]float64, 0, len(f.w))
	// The first quarter of the history is left out: there the level is
	// still finding its feet, which the forecast's own errors will not.
	for t := r.warm + len(f.w)/4; t < len(f.w); t++ {
		from := t - lead // the state after bucket from forecasts bucket t
		if from < r.warm-1 || math.IsNaN(f.w[t]) {
			continue
		}
		mu := r.mu[t]
		if lead > 1 {
			mu = f.clampMu(f.combine(f.lifted(r.lv[from]+phiSum*r.tr[from]), f.fLoo[t]))
		}
		nv := noiseVar(f.kind, mu, f.disp, f.hitsAt(t))
		u = append(u, math.Abs(f.w[t]-mu)/math.Sqrt(nv))
	}
	k := madToSigma * medianInPlace(u)
	if math.IsNaN(k) {
		k = 1
	}
	if f.kind != Latency {
		k = math.Max(k, 1) // never less noisy than Poisson or binomial
	}
	return math.Max(k, 1e-3)
}

// growth is how much the variance of a forecast h buckets ahead exceeds
// the one-step variance, as the level and trend errors accumulate.
func growth(p params, h int) float64 {
	g := 1.0
	phiSum := 0.0
	pw := 1.0
	for j := 1; j < h; j++ {
		pw *= p.phi
		phiSum += pw
		c := p.alpha * (1 + p.beta*phiSum)
		g += c * c
	}
	return g
}
