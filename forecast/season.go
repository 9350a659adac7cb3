package forecast

import (
	"fmt"
	"math"
	"slices"
	"time"
)

const (
	day  = 24 * time.Hour
	week = 7 * day
)

// Season describes one season the fit considered: fitted from the series
// itself, borrowed from a coarser precision, or refused and why.
type Season struct {
	Name    string `json:"name"`             // "daily" or "weekly"
	Period  int    `json:"period,omitempty"` // in buckets, when own
	Source  string `json:"source"`           // "own", "1h", "1d", "week" (Context.Week) or "none"
	Refused string `json:"refused,omitempty"`
}

// ownSeason picks the season a series can show itself: the shortest of a
// day or a week that its history holds twice. A step that does not divide
// the season (5 h into a day) sees it through phases that repeat every
// lcm(step, season): 24 buckets of 5 h, five days.
func ownSeason(step time.Duration, n int) (period int, seasons []Season) {
	for _, c := range []struct {
		name string
		len  time.Duration
	}{{"daily", day}, {"weekly", week}} {
		if step >= c.len {
			continue
		}
		s := Season{Name: c.name, Source: "none"}
		p := int(lcm(int64(step/time.Second), int64(c.len/time.Second)) / int64(step/time.Second))
		switch {
		case n < 2*p:
			s.Refused = fmt.Sprintf("%d buckets of history, a %s season of %d buckets needs 2 seasons (%d)", n, c.name, p, 2*p)
		case period == 0:
			period = p
			s.Period, s.Source = p, "own"
		default:
			continue // a longer season than the one fitted; not modelled
		}
		seasons = append(seasons, s)
	}
	return period, seasons
}

// minPhaseHits is the least hits a count series must hold per phase of
// a season for the season to be fitted: fewer, and the phases' means are
// mostly noise, some of them zero, where a hit would be beyond any band.
const minPhaseHits = 10

// tooSparse says why a count series w cannot show a season of period
// phases, or returns "" if it can.
func tooSparse(kind Kind, w []float64, period int) string {
	if kind != Counts || period == 0 {
		return ""
	}
	sum := 0.0
	for _, v := range w {
		if !math.IsNaN(v) {
			sum += v
		}
	}
	if sum >= minPhaseHits*float64(period) {
		return ""
	}
	return fmt.Sprintf("%.0f hits over %d phases, a season needs %d a phase", sum, period, minPhaseHits)
}

// refuseSparse refuses the own season of a count series too sparse to
// show it.
func refuseSparse(kind Kind, w []float64, period int, seasons []Season) (int, []Season) {
	why := tooSparse(kind, w, period)
	if why == "" {
		return period, seasons
	}
	for i := range seasons {
		if seasons[i].Source == "own" {
			seasons[i] = Season{Name: seasons[i].Name, Source: "none", Refused: why}
		}
	}
	return 0, seasons
}

func lcm(a, b int64) int64 {
	x, y := a, b
	for y != 0 {
		x, y = y, x%y
	}
	return a / x * b
}

// phase returns the position of the bucket starting at t in a season of
// period buckets of step. Seasons are aligned to UTC midnight (and the
// week to the Unix epoch's), so every precision agrees on them.
func phase(t time.Time, step time.Duration, period int) int {
	k := t.Unix() / int64(step/time.Second)
	p := int(k % int64(period))
	if p < 0 {
		p += period
	}
	return p
}

// profile is a seasonal profile on the working scale: factors around 1
// (mult) or offsets around 0 (additive).
type profile struct {
	period  int
	mult    bool
	s       []float64 // per phase, normalized
	sum     []float64 // per phase, of the cleaned ratios, for leave-one-out
	cnt     []int
	norm    float64   // the normalizing factor or offset applied to s
	r       []float64 // per bucket, its cleaned ratio (NaN when none)
	keep    []float64 // per phase, the share of its own mean kept against its neighbours'; nil: not smoothed
	ph      []int     // per bucket, its phase
	cleaned int
}

// flatProfile is no season at all.
func flatProfile(n int, mult bool) *profile {
	p := &profile{period: 1, mult: mult, s: []float64{neutral(mult)}, r: make([]float64, n), ph: make([]int, n)}
	for i := range p.r {
		p.r[i] = math.NaN()
	}
	return p
}

func neutral(mult bool) float64 {
	if mult {
		return 1
	}
	return 0
}

// decompose returns the trend (a moving median one season wide, robust to
// a spike or an outage) and the raw ratios (mult) or differences of each
// bucket to it.
func decompose(w []float64, width int, mult bool) (trend, raw []float64) {
	trend = movingMedian(w, max(width, 5))
	raw = make([]float64, len(w))
	for t, v := range w {
		switch {
		case math.IsNaN(v) || math.IsNaN(trend[t]):
			raw[t] = math.NaN()
		case mult && trend[t] <= 0:
			raw[t] = math.NaN()
		case mult:
			raw[t] = v / trend[t]
		default:
			raw[t] = v - trend[t]
		}
	}
	return trend, raw
}

// phaseMedians returns the median raw ratio of each phase.
func phaseMedians(raw []float64, ph []int, period int, mult bool) []float64 {
	// The values of each phase lie side by side in one buffer: a slice
	// per phase grown by append costs several allocations each.
	end := make([]int, period+1)
	for t, r := range raw {
		if !math.IsNaN(r) {
			end[ph[t]+1]++
		}
	}
	for j := range period {
		end[j+1] += end[j]
	}
	buf := make([]float64, end[period])
	next := slices.Clone(end[:period])
	for t, r := range raw {
		if !math.IsNaN(r) {
			buf[next[ph[t]]] = r
			next[ph[t]]++
		}
	}
	m := make([]float64, period)
	for j := range m {
		m[j] = medianInPlace(buf[end[j]:end[j+1]])
		if math.IsNaN(m[j]) {
			m[j] = neutral(mult)
		}
	}
	return m
}

// fitProfile averages the ratios of each phase after replacing those an
// outlier test rejects by the phase's median. The mean is kept, not the
// median, because the median of a handful of seasons is noisy; the
// cleaning is what makes it robust.
func fitProfile(raw []float64, ph []int, med []float64, mult, clean bool, outlier func(t int) bool) *profile {
	period := len(med)
	p := &profile{period: period, mult: mult, s: make([]float64, period), sum: make([]float64, period),
		cnt: make([]int, period), r: make([]float64, len(raw)), ph: ph}
	for t, r := range raw {
		p.r[t] = r
		if math.IsNaN(r) {
			continue
		}
		if clean && outlier(t) {
			p.r[t] = med[ph[t]]
			p.cleaned++
		}
		p.sum[ph[t]] += p.r[t]
		p.cnt[ph[t]]++
	}
	total := 0.0
	for j := range p.s {
		p.s[j] = neutral(mult)
		if p.cnt[j] > 0 {
			p.s[j] = p.sum[j] / float64(p.cnt[j])
		}
		total += p.s[j]
	}
	p.norm = total / float64(period)
	if mult && p.norm <= 0 {
		p.norm = 1
	}
	for j := range p.s {
		p.s[j] = p.normalize(p.s[j])
	}
	return p
}

// smooth shrinks each phase of a profile whose neighbouring phases are
// neighbouring times of day toward the mean of its neighbours, as far as
// its own noise (nv, the variance of each phase's mean) exceeds the
// curvature the profile shows: a handful of days of a quiet route gives a
// ragged profile, and a real daily shape is smooth.
func (p *profile) smooth(nv []float64) {
	n := p.period
	sm := func(j int, own float64) float64 { return 0.25*p.s[(j+n-1)%n] + 0.5*own + 0.25*p.s[(j+1)%n] }
	d2, noise := 0.0, 0.0
	for j := range n {
		d := p.s[j] - sm(j, p.s[j])
		d2 += d * d
		noise += 0.375 * nv[j]
	}
	tau := math.Max(0, (d2-noise)/float64(n))
	p.keep = make([]float64, n)
	out := make([]float64, n)
	for j := range n {
		b := 0.375 * nv[j] / (0.375*nv[j] + tau)
		if math.IsInf(nv[j], 1) {
			b = 1 // a phase never seen takes its neighbours'
		} else if math.IsNaN(b) {
			b = 0
		}
		p.keep[j] = 1 - b
		m := sm(j, p.s[j])
		out[j] = m + p.keep[j]*(p.s[j]-m)
	}
	p.s = out
}

func (p *profile) shrink(j int, own float64) float64 {
	if p.keep == nil {
		return own
	}
	n := p.period
	m := 0.25*p.s[(j+n-1)%n] + 0.5*own + 0.25*p.s[(j+1)%n]
	return m + p.keep[j]*(own-m)
}

func (p *profile) normalize(v float64) float64 {
	if p.mult {
		return math.Max(v/p.norm, 0.01)
	}
	return v - p.norm
}

// at returns the factor of phase j.
func (p *profile) at(j int) float64 { return p.s[j%p.period] }

// without returns the factor of bucket t's phase as if bucket t had not
// been seen, so a bucket is scored against an expectation it did not make.
func (p *profile) without(t int) float64 {
	j := p.ph[t]
	r := p.r[t]
	if p.period == 1 || math.IsNaN(r) || p.cnt[j] < 2 {
		return p.s[j%p.period]
	}
	return p.shrink(j, p.normalize((p.sum[j]-r)/float64(p.cnt[j]-1)))
}
