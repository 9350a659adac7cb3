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
// continuous value would. It is not bounded: a bucket further out scores
// further out, so buckets far beyond any band still rank.
func (d countDist) z(y float64) float64 {
	if !d.discrete() {
		return gammaZ(y, d.mu, d.v)
	}
	y = math.Round(y)
	w := d.walk()
	if y > float64(w.limit) { // beyond the summed range: the normal's reading
		return (y - d.mu) / math.Sqrt(math.Max(d.v, d.mu))
	}
	below := 0.0
	k := 0
	for ; float64(k) < y; k++ {
		below += w.p
		w.next(k)
	}
	if below < 0.5 {
		if x := below + w.p/2; x > 0 {
			return -upperZ(math.Log(x))
		}
		return (y - d.mu) / math.Sqrt(math.Max(d.v, d.mu)) // beyond every digit: the normal's reading
	}
	// Above the middle the upper tail is summed itself: 1 - below would
	// lose its digits, and far buckets would all read +Inf.
	upper := w.p / 2
	for ; k < w.limit; k++ {
		w.next(k)
		upper += w.p
		if w.p < upper*1e-17 {
			break
		}
	}
	if upper > 0 {
		return upperZ(math.Log(upper))
	}
	return (y - d.mu) / math.Sqrt(math.Max(d.v, d.mu))
}

// gammaZ is the normal score of y under a gamma distribution of mean mu
// and variance v, by Wilson and Hilferty's cube root: a count of many
// hits with noise as a share of its mean is skewed, and a fall to zero
// is further out than a normal curve says (with noise of 70 % of the
// mean, four deviations, not 1.4).
func gammaZ(y, mu, v float64) float64 {
	if mu <= 0 || v <= 0 {
		return (y - mu) / math.Sqrt(math.Max(v, 1e-12))
	}
	c := v / (9 * mu * mu) // 1/(9 shape)
	return (math.Cbrt(math.Max(y, 0)/mu) - (1 - c)) / math.Sqrt(c)
}

// gammaQuantile is the q quantile of that gamma distribution.
func gammaQuantile(q, mu, v float64) float64 {
	if mu <= 0 || v <= 0 {
		return math.Max(0, mu+normQuantile(q)*math.Sqrt(math.Max(v, 0)))
	}
	c := v / (9 * mu * mu)
	b := math.Max(0, 1-c+normQuantile(q)*math.Sqrt(c))
	return mu * b * b * b
}

// quantile is the smallest count whose distribution function reaches q.
func (d countDist) quantile(q float64) float64 {
	if !d.discrete() {
		return gammaQuantile(q, d.mu, d.v)
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

// pair returns the lo and hi quantiles (lo < hi) in one walk.
func (d countDist) pair(lo, hi float64) (float64, float64) {
	if !d.discrete() {
		return d.quantile(lo), d.quantile(hi)
	}
	// A count is inside when its mid-distribution value, P(X < k) +
	// P(X = k)/2, is: whole counts cannot hold exactly p, and this holds
	// p on average where the smallest band holding at least p would hold
	// more every time.
	qlo, qhi := math.NaN(), math.NaN()
	cdf := 0.0
	d.terms(func(k int, p float64) bool {
		mid := cdf + p/2
		cdf += p
		if math.IsNaN(qlo) && mid >= lo {
			qlo = float64(k)
		}
		if mid > hi {
			qhi = float64(k - 1)
			return false
		}
		return true
	})
	if qhi < qlo {
		qhi = qlo
	}
	if math.IsNaN(qlo) {
		qlo = d.mu + normQuantile(lo)*math.Sqrt(d.v)
	}
	if math.IsNaN(qhi) {
		qhi = d.mu + normQuantile(hi)*math.Sqrt(d.v)
	}
	return qlo, qhi
}

// predictive is one bucket's forecast on the working scale (mu, v) with
// what is needed to turn it into the observed scale.
type predictive struct {
	kind   Kind
	mu, v  float64
	hits   float64 // ErrorRatio: the hits the ratio is over
	normal bool    // counts as normal whatever their mean
	cal    calibration
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
		return (w - p.mu) / math.Sqrt(p.v)
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

// bands returns the 80 % and 95 % bands: the model's quantiles with its
// deviation widened as the calibration says for each.
func (p predictive) bands() (b80, b95 Band) {
	b80.Lo, b80.Hi = p.widened(p.cal.m80()).edges(0.1, 0.9)
	b95.Lo, b95.Hi = p.widened(p.cal.m95()).edges(0.025, 0.975)
	return b80, b95
}

// widened is p with its standard deviation times m.
func (p predictive) widened(m float64) predictive {
	p.v *= m * m
	return p
}

// edges returns the lo and hi quantiles on the observed scale.
func (p predictive) edges(lo, hi float64) (float64, float64) {
	switch p.kind {
	case Counts:
		return p.counts().pair(lo, hi)
	case ErrorRatio:
		if p.hits <= 0 {
			return math.NaN(), math.NaN()
		}
		a, b := p.counts().pair(lo, hi)
		return math.Min(1, a/p.hits), math.Min(1, b/p.hits)
	}
	return p.quantile(lo), p.quantile(hi)
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
