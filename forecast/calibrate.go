package forecast

import (
	"math"
	"slices"
)

// Normal quantiles of the 80 % and 95 % bands' upper edges.
const (
	z80 = 1.2815515655446004
	z95 = 1.959963984540054
)

// minCalibration is the least one-step errors a bucket's calibration must
// rest on; with fewer, the noise model's own quantiles stand.
const minCalibration = 20

// calTau is the age, in buckets, at which a one-step error weighs 1/e of
// the newest's in a calibration: the bands follow a series whose noise
// grows or calms within its window, as real traffic's does.
const calTau = 40

// calLag is how old, in buckets, an error must be to calibrate a bucket:
// the buckets a flag is judged with are left out, so an incident under
// way cannot calibrate itself away.
const calLag = 3

// grossZ is how far out, in robust deviations of the window's own scores,
// a bucket is a gross break, never taken into a calibration: an outage
// or a burst is not the series' noise. Real traffic's heavy tails reach
// that far less than one bucket in a hundred.
const grossZ = 10

// calibration turns the noise model's scores into calibrated ones and
// widens (or narrows) its bands, from the series' own one-step errors:
// weighted conformal quantiles of the absolute scores of the buckets
// before, those of incidents left out. Real traffic is burstier and
// heavier-tailed than any count model with one scale; its own errors say
// how much, at the 80 % and 95 % levels apart.
//
// The zero value is the identity: the model's quantiles as they are.
type calibration struct {
	q80, q95 float64 // the absolute scores the bands' edges fall at
	// tail is the mean excess of the errors beyond q80, the rate of an
	// exponential tail beyond q95; 0: proportional beyond q95.
	tail float64
}

func (c calibration) identity() bool { return c.q80 == 0 }

// m80 and m95 multiply the model's standard deviation for each band.
func (c calibration) m80() float64 {
	if c.identity() {
		return 1
	}
	return c.q80 / z80
}

func (c calibration) m95() float64 {
	if c.identity() {
		return 1
	}
	return c.q95 / z95
}

// score maps a model score z to its calibrated value, a normal quantile
// as unlikely as z is among the series' own errors: z80 at q80, z95 at
// q95, linear between. Beyond q95 the errors' tail is taken as
// exponential, with the rate their mean excess beyond q80 gives: real
// traffic's bursts reach far further than a normal tail scaled to its
// 95 % quantile allows, and a score read from such a tail would say a
// burst the series makes every few days is a once-a-century event. The
// order of buckets is kept and no two distinct scores tie.
func (c calibration) score(z float64) float64 {
	if c.identity() || math.IsNaN(z) {
		return z
	}
	a := math.Abs(z)
	var h float64
	switch {
	case a <= c.q80:
		h = a * z80 / c.q80
	case a <= c.q95:
		h = z80 + (a-c.q80)*(z95-z80)/(c.q95-c.q80)
	case c.tail > 0:
		h = tailScore(math.Log(0.05) - (a-c.q95)/c.tail)
	default:
		h = c.wide(a)
	}
	return math.Copysign(h, z)
}

// wide is the calibrated value of an absolute score a beyond q95 in
// proportion to it, as if the errors' tail were normal: a bucket judged so
// is a clear break whatever the series' own tail.
func (c calibration) wide(a float64) float64 {
	if c.identity() {
		return a
	}
	return a * z95 / c.q95
}

// tailScore is the normal score whose two tails hold e^logP.
func tailScore(logP float64) float64 { return upperZ(logP - math.Ln2) }

// upperZ is the normal score whose upper tail holds e^logQ. Below where
// the inverse error function reaches, it solves the normal tail's
// asymptote, ln Q(z) ≈ -z²/2 - ln(z√(2π)), so far buckets still rank.
func upperZ(logQ float64) float64 {
	const reach = -34.5 // ln 1e-15
	switch {
	case logQ > reach:
		return -normQuantile(math.Exp(logQ))
	case math.IsInf(logQ, -1):
		return math.Inf(1)
	}
	z := math.Sqrt(-2 * logQ)
	for range 4 { // Newton's steps on the asymptote
		f := -z*z/2 - math.Log(z*math.Sqrt(2*math.Pi)) - logQ
		z += f / (z + 1/z)
	}
	return z
}

// calibrator holds the absolute scores a calibration is read from, in
// order, each weighing exp(t/calTau) for its bucket t: relative to any
// later bucket, exp(-age/calTau).
type calibrator struct {
	xs    []weighed
	total float64
	least float64 // the smallest multiplier of the model's deviation
}

type weighed struct{ a, w float64 }

func (c *calibrator) add(t int, z float64) {
	x := weighed{math.Abs(z), math.Exp(float64(t) / calTau)}
	i, _ := slices.BinarySearchFunc(c.xs, x.a, func(e weighed, a float64) int {
		switch {
		case e.a < a:
			return -1
		case e.a > a:
			return 1
		}
		return 0
	})
	c.xs = slices.Insert(c.xs, i, x)
	c.total += x.w
}

// at is the calibration for bucket t. Its bands are the weighted
// conformal quantiles, the smallest score at which the weight up to it
// reaches p of the total with bucket t's own, which hold the next bucket
// at least p of the time when the errors are alike. Its scores place the
// bucket among the errors before it, the weighted quantiles without the
// bucket's own weight: the conformal ones, read for the few dozen errors
// a calibration weighs, sit a little beyond the plain quantile, and a
// score read from them would be a little low.
func (c *calibrator) at(t int) (bands, scores calibration) {
	if len(c.xs) < minCalibration {
		return calibration{}, calibration{}
	}
	next := math.Exp(float64(t) / calTau)
	// The four quantiles in one walk: 80 and 95 %, with and without next.
	need := [4]float64{0.8 * c.total, 0.8 * (c.total + next), 0.95 * c.total, 0.95 * (c.total + next)}
	if need[1] > need[2] {
		need[1], need[2] = need[2], need[1]
	}
	var got [4]float64
	i, acc := 0, 0.0
	for _, x := range c.xs {
		acc += x.w
		for i < 4 && acc >= need[i] {
			got[i] = x.a
			i++
		}
		if i == 4 {
			break
		}
	}
	for ; i < 4; i++ {
		got[i] = c.xs[len(c.xs)-1].a
	}
	q80, q80n, q95, q95n := got[0], got[1], got[2], got[3]
	if 0.8*(c.total+next) > 0.95*c.total { // the two middle ones were swapped
		q80n, q95 = q95, q80n
	}
	sc := c.of(q80, q95)
	sc.tail = c.excess(sc.q80)
	return c.of(q80n, q95n), sc
}

// excess is the weighted mean excess of the scores beyond a.
func (c *calibrator) excess(a float64) float64 {
	var s, w float64
	for i := len(c.xs) - 1; i >= 0 && c.xs[i].a > a; i-- {
		s += c.xs[i].w * (c.xs[i].a - a)
		w += c.xs[i].w
	}
	if w == 0 {
		return 0
	}
	return s / w
}

// of is the calibration whose edges are at a80 and a95.
func (c *calibrator) of(a80, a95 float64) calibration {
	m80 := math.Max(a80/z80, c.least)
	m95 := math.Max(a95/z95, c.least)
	m95 = math.Max(m95, 0.7*m80) // the 95 % edge stays beyond the 80 % one
	return calibration{q80: m80 * z80, q95: m95 * z95}
}

// score calibrates the history's one-step scores bucket by bucket, each
// on the errors of the buckets at least calLag before it, and finds the
// incidents as it goes: the buckets of a clear incident (its peak beyond
// Single), and its return to normal, never calibrate a later one, so a
// burst does not widen the bands after it. Milder runs stay: they are
// the tail of real traffic's own noise, which the bands must hold. A bucket's score and band so depend on its past alone,
// as a scan made at that bucket saw them. It returns the incidents.
func (fd *Fitted) score(cfg Config) []span {
	z := fd.last.z
	n := len(z)
	c := &calibrator{least: 0.3} // latency: its scale is its own deviation
	if fd.f.kind != Latency {
		c.least = 1 / fd.sc.one // never less noisy than Poisson or binomial
	}
	limit := grossZ * robustSize(z, fd.last.warm, n)
	fd.rho = lagCorrelation(z, limit, fd.flagFrom, n)
	raw := slices.Clone(z)
	d := detector{cfg: cfg, z: z, warm: fd.flagFrom, returns: make([]bool, n), rho: fd.rho, obs: fd.f.w, exp: fd.last.mu, fac: fd.f.fFull,
		far: make([]float64, n)}
	fd.cals = make([]calibration, n+1)
	for t := 0; t <= n; t++ {
		if u := t - calLag; u >= fd.last.warm && !math.IsNaN(raw[u]) && math.Abs(raw[u]) <= limit && !d.inClear(u) {
			c.add(u, raw[u])
		}
		var sc calibration
		if t >= fd.flagFrom { // before it, the model's own quantiles: the warm-up
			fd.cals[t], sc = c.at(t)
		}
		if t == n {
			break
		}
		if !cfg.off.calibrate {
			z[t] = sc.score(raw[t])
			d.far[t] = math.Max(math.Abs(z[t]), sc.wide(math.Abs(raw[t])))
		} else {
			d.far[t] = math.Abs(raw[t])
			fd.cals[t] = calibration{}
		}
		d.step(t)
	}
	if cfg.off.calibrate {
		fd.cals[n] = calibration{}
	}
	return d.out
}

// robustSize is the robust deviation of the scores z[from:to].
func robustSize(z []float64, from, to int) float64 {
	abs := make([]float64, 0, max(0, to-from))
	for t := from; t < to; t++ {
		if !math.IsNaN(z[t]) {
			abs = append(abs, math.Abs(z[t]))
		}
	}
	return medianInPlace(abs) / 0.6745
}

// lagCorrelation is the correlation of each score in z[from:to] with the
// one before it, gross ones (beyond limit) left out and each held within
// ±3 so one burst does not make it; 0 when negative or with too few pairs.
func lagCorrelation(z []float64, limit float64, from, to int) float64 {
	clip := func(x float64) float64 { return math.Max(-3, math.Min(3, x)) }
	var sxy, sxx, syy float64
	k := 0
	for t := from + 1; t < to; t++ {
		a, b := z[t-1], z[t]
		if math.IsNaN(a) || math.IsNaN(b) || math.Abs(a) > limit || math.Abs(b) > limit {
			continue
		}
		a, b = clip(a), clip(b)
		sxy += a * b
		sxx += a * a
		syy += b * b
		k++
	}
	if k < minCalibration || sxx == 0 || syy == 0 {
		return 0
	}
	return math.Max(0, math.Min(0.9, sxy/math.Sqrt(sxx*syy)))
}
