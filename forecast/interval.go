package forecast

import "math"

// discreteMax is the mean above which counts use the normal
// approximation; below it the Poisson or negative binomial is summed, so
// a route with 3 hits a bucket gets bands from its own count noise.
const discreteMax = 50

// countDist is the predictive distribution of a count: Poisson when its
// variance is the mean's, negative binomial when larger.
type countDist struct {
	mu, v  float64
	normal bool // use the normal approximation whatever the mean
}

// terms calls f with k and P(X = k) for k = 0, 1, ... until f returns
// false or the upper tail is negligible.
func (d countDist) terms(f func(k int, p float64) bool) {
	w := d.walk()
	for k := 0; k <= w.limit; k++ {
		if !f(k, w.p) {
			return
		}
		w.next(k)
	}
}

// termWalk steps through the probabilities of a count, P(X = k) in p,
// for a loop that calls no function per term: scoring every bucket of a
// fit walks up to its count.
type termWalk struct {
	p, mu, r, ratio float64
	limit           int
}

func (d countDist) walk() termWalk {
	mu := math.Max(d.mu, 1e-9)
	w := termWalk{mu: mu, limit: int(mu+40*math.Sqrt(math.Max(d.v, mu))) + 40}
	if d.v > mu*(1+1e-6) {
		w.r = mu * mu / (d.v - mu)
		w.p = math.Exp(-w.r * math.Log1p(mu/w.r))
		w.ratio = mu / (w.r + mu)
	} else {
		w.p = math.Exp(-mu)
	}
	return w
}

// next turns P(X = k) into P(X = k+1).
func (w *termWalk) next(k int) {
	if w.r > 0 {
		w.p *= (float64(k) + w.r) / float64(k+1) * w.ratio
	} else {
		w.p *= w.mu / float64(k+1)
	}
}

func (d countDist) discrete() bool { return !d.normal && d.mu <= discreteMax }

// z is the mid-p score of y: the normal quantile of P(X < y) + P(X = y)/2.
// The mid-p keeps a discrete count from scoring as far out as a
// continuous value would.
func (d countDist) z(y float64) float64 {
	if !d.discrete() {
		return clampZ((y - d.mu) / math.Sqrt(d.v))
	}
	y = math.Round(y)
	w := d.walk()
	if y < 0 || y > float64(w.limit) { // beyond the summed range
		return maxZ
	}
	below := 0.0
	for k := 0; float64(k) < y; k++ {
		below += w.p
		w.next(k)
	}
	return clampZ(normQuantile(below + w.p/2))
}

// quantile is the smallest count whose distribution function reaches q.
func (d countDist) quantile(q float64) float64 {
	if !d.discrete() {
		return math.Max(0, d.mu+normQuantile(q)*math.Sqrt(d.v))
	}
	out := -1.0
	cdf := 0.0
	d.terms(func(k int, p float64) bool {
		cdf += p
		if cdf >= q {
			out = float64(k)
			return false
		}
		return true
	})
	if out < 0 {
		return d.mu + normQuantile(q)*math.Sqrt(d.v)
	}
	return out
}

// quantiles returns the quantiles qs (ascending) in one walk.
func (d countDist) quantiles(qs []float64) []float64 {
	out := make([]float64, len(qs))
	if !d.discrete() {
		for i, q := range qs {
			out[i] = d.quantile(q)
		}
		return out
	}
	i, cdf := 0, 0.0
	d.terms(func(k int, p float64) bool {
		cdf += p
		for i < len(qs) && cdf >= qs[i] {
			out[i] = float64(k)
			i++
		}
		return i < len(qs)
	})
	for ; i < len(qs); i++ {
		out[i] = d.mu + normQuantile(qs[i])*math.Sqrt(d.v)
	}
	return out
}

// predictive is one bucket's forecast on the working scale (mu, v) with
// what is needed to turn it into the observed scale.
type predictive struct {
	kind   Kind
	mu, v  float64
	hits   float64 // ErrorRatio: the hits the ratio is over
	normal bool    // counts as normal whatever their mean
}

func (p predictive) counts() countDist {
	if p.kind == ErrorRatio {
		return countDist{mu: p.mu * p.hits, v: p.v * p.hits * p.hits, normal: p.normal}
	}
	return countDist{mu: p.mu, v: p.v, normal: p.normal}
}

// z scores an observation given on the working scale.
func (p predictive) z(w float64) float64 {
	switch p.kind {
	case Latency:
		return clampZ((w - p.mu) / math.Sqrt(p.v))
	case ErrorRatio:
		return p.counts().z(w * p.hits)
	}
	return p.counts().z(w)
}

// expected is the point forecast on the observed scale: the mean count,
// the ratio, or the median latency.
func (p predictive) expected() float64 {
	if p.kind == Latency {
		return math.Exp(p.mu)
	}
	return p.mu
}

// quantile returns the q quantile on the observed scale.
func (p predictive) quantile(q float64) float64 {
	switch p.kind {
	case Latency:
		return math.Exp(p.mu + normQuantile(q)*math.Sqrt(p.v))
	case ErrorRatio:
		if p.hits <= 0 {
			return math.NaN()
		}
		return math.Min(1, p.counts().quantile(q)/p.hits)
	}
	return p.counts().quantile(q)
}

// Band is a prediction interval.
type Band struct {
	Lo float64 `json:"lo"`
	Hi float64 `json:"hi"`
}

// bandQs are the quantiles of the 95 % and 80 % bands, ascending.
var bandQs = []float64{0.025, 0.1, 0.9, 0.975}

// bands returns the 80 % and 95 % bands.
func (p predictive) bands() (b80, b95 Band) {
	var q []float64
	switch p.kind {
	case Counts:
		q = p.counts().quantiles(bandQs)
	case ErrorRatio:
		if p.hits <= 0 {
			nan := math.NaN()
			return Band{nan, nan}, Band{nan, nan}
		}
		q = p.counts().quantiles(bandQs)
		for i := range q {
			q[i] = math.Min(1, q[i]/p.hits)
		}
	default:
		q = make([]float64, len(bandQs))
		for i, a := range bandQs {
			q[i] = p.quantile(a)
		}
	}
	return Band{q[1], q[2]}, Band{q[0], q[3]}
}

// noiseVar is the variance of one bucket's noise around a mean mu on the
// working scale, before the fitted scale multiplies it: Poisson plus a
// share of the mean squared for counts, binomial with the same for
// ratios, one for latency (whose scale is then its log-scale deviation).
func noiseVar(kind Kind, mu, disp, hits float64) float64 {
	switch kind {
	case Latency:
		return 1
	case ErrorRatio:
		p := math.Min(math.Max(mu, 0.5/hits), 1-0.5/hits)
		return p * (1 - p) / hits * (1 + disp*(hits-1))
	}
	m := mu
	if !(m >= 0.05) {
		m = 0.05
	}
	return m + disp*disp*m*m
}
