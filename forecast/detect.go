package forecast

import "math"

// detector walks the scores of a history, oldest first, and finds its
// incidents as they happen: each bucket is judged on the buckets before
// it, as a scan at that bucket would have judged it.
//
// An incident begins at a bucket out of band (beyond Band, on a side its
// kind flags) that is either beyond Single alone, or ends a run of K to N
// scored buckets whose scores together are far out (persists); or at a
// bucket beyond runFloor that ends such a run, or (counts, from 1 h up) a
// run of three whose scores sum beyond RunSum: a shift or a spike a
// little under the band in each bucket shows in the sum. It begins at the first of those buckets, and
// goes on while buckets break out on its side; CloseAfter buckets in a
// row that do not close it. Within the recovery after it (as many buckets
// as it lasted, at least CloseAfter) a break to the other side is the
// return to normal, not an incident, and a break to its own side opens it
// again.
type detector struct {
	cfg  Config
	z    []float64
	warm int
	at   int // the bucket being judged
	// returns marks the buckets out of band that were taken for the
	// return to normal after an incident, when not nil.
	returns []bool
	// rho is the correlation of a score with the one before it in the
	// window: where the errors run in long waves, as real traffic's do,
	// two buckets out in a row say less than where they are independent.
	rho float64
	// obs, exp and fac are the buckets' values, one-step expectations and
	// seasonal factors on the working scale, when known: a break back to
	// where an incident left from is its end, not a new incident.
	obs, exp, fac []float64
	// far holds how far out each bucket is were the errors' tail normal:
	// an incident that far out is a clear break, kept out of the
	// calibration, though the series' own tail scores it milder.
	far []float64

	out          []span
	cur          *span
	recent       []int // sides of the last N scored buckets
	since        int   // where the window of the next onset starts
	recoverUntil int   // the last bucket of the recovery after out[len-1]
	back         bool  // the series came back to where out[len-1] left from since it closed
	started      bool
}

// sideOf is the side z is out of band on for flagging, 0 if none.
func (d *detector) sideOf(z float64) int {
	if math.IsNaN(z) || math.Abs(z) < d.cfg.Band || (z < 0 && d.cfg.Kind != Counts) {
		return 0
	}
	return sign(z)
}

// spans finds the incidents of the whole history.
func (d *detector) spans() []span {
	for t := d.warm; t < len(d.z); t++ {
		d.step(t)
	}
	return d.out
}

// step judges bucket t, the newest so far, whose score is d.z[t].
func (d *detector) step(t int) {
	if !d.started {
		d.started, d.since, d.recoverUntil = true, d.warm, -1
		d.recent = make([]int, 0, d.cfg.Persistence.N)
	}
	z := d.z[t]
	if math.IsNaN(z) || t < d.warm {
		return
	}
	side := d.sideOf(z)
	d.at = t
	if d.cur != nil {
		if !d.cont(d.cur, t, side) {
			d.recoverUntil = t + max(d.cfg.CloseAfter, d.cur.last-d.cur.first+1)
			d.back = d.near(t, *d.cur)
			if !d.cfg.off.window { // its buckets count toward no later onset
				d.since, d.recent = t+1, d.recent[:0]
			}
			d.cur = nil
		}
		return
	}
	sum := d.runSum(t, d.since)
	if side == 0 && !d.cfg.off.runSum && math.Abs(z) >= runFloor && (z > 0 || d.cfg.Kind == Counts) &&
		(sum || d.persists(sign(z), d.cfg.Persistence.N)) {
		side, sum = sign(z), true // a run whose sum breaks out, though this bucket is within the band
	}
	if n := len(d.out); n > 0 && !d.back && d.near(t, d.out[n-1]) {
		d.back = true // the series came back to where the last incident left from
	}
	if n := len(d.out); n > 0 && side != 0 && (t <= d.recoverUntil || d.backToNormal(t, side) || (side == d.out[n-1].side && !d.back)) {
		last := &d.out[n-1]
		if side == last.side { // the same event again, the series not back since: it goes on
			last.open, last.run = true, 0
			last.extend(t, d.z)
			d.cur = last
			return
		}
		if d.returns != nil {
			d.returns[t] = true
		}
		side = 0 // the return to normal
	}
	if len(d.recent) == d.cfg.Persistence.N { // slide in place
		d.recent = d.recent[:copy(d.recent, d.recent[1:])]
	}
	d.recent = append(d.recent, side)
	if side == 0 || !d.onset(d.recent, side, z, sum) {
		return
	}
	d.out = append(d.out, d.begin(t, side, len(d.recent)))
	d.cur = &d.out[len(d.out)-1]
}

// backTolerance is how far, as a share of the level an incident left
// from, the forecast must have followed it for a later break back to
// that level (nearer it than to the forecast) to be its end.
const backTolerance = 0.3

// backToNormal reports whether bucket t, out on side, comes back from the
// last incident to the level it left from: a fall to a trickle that lasts
// long enough becomes the level the forecast expects, and the traffic's
// return is then a break up, but not an incident of its own.
func (d *detector) backToNormal(t, side int) bool {
	if d.obs == nil || d.cfg.Kind != Counts || math.IsNaN(d.obs[t]) {
		return false
	}
	last := d.out[len(d.out)-1]
	from := d.exp[last.first] / d.fac[last.first] * d.fac[t] // the level it left from, at t's season
	moved := d.exp[t] - from                                 // how far the forecast followed the incident
	past := (from - d.obs[t]) * math.Copysign(1, moved)
	return side == -last.side && from > 0 && math.Abs(moved) > backSlack(from) &&
		math.Abs(d.obs[t]-from) < math.Abs(moved)/2 && past < backSlack(from)
}

// backSlack is how far from a level of counts a bucket may lie and still
// be at it: backTolerance of it, or three Poisson deviations of a few.
func backSlack(level float64) float64 {
	return math.Max(backTolerance*level, 3*math.Sqrt(level))
}

// near reports whether bucket t is back at the level incident sp left
// from (within backSlack), as far as the values say; true when they are
// not known.
func (d *detector) near(t int, sp span) bool {
	back, known := d.backAt(t, sp)
	return back || !known
}

// backAt reports whether bucket t is back at the level incident sp left
// from, and whether the values can say: counts only.
func (d *detector) backAt(t int, sp span) (back, known bool) {
	if d.obs == nil || d.cfg.Kind != Counts || math.IsNaN(d.obs[t]) {
		return false, false
	}
	from := d.exp[sp.first] / d.fac[sp.first] * d.fac[t] // the level it left from, at t's season
	return math.Abs(d.obs[t]-from) <= backSlack(from), true
}

// returned reports whether bucket u was taken for the return to normal
// after an incident.
func (d *detector) returned(u int) bool { return d.returns != nil && d.returns[u] }

// inClear reports whether bucket u belongs to an incident found so far
// whose peak is beyond Single, or to the return to normal after one: a
// clear break, not the series' noise.
func (d *detector) inClear(u int) bool {
	for i := len(d.out) - 1; i >= 0; i-- {
		sp := d.out[i]
		clear := d.far[sp.peak] >= d.cfg.Single
		if u >= sp.first && u <= sp.last {
			return clear
		}
		if sp.last < u {
			return clear && d.returns[u]
		}
	}
	return false
}

// cont extends the open span cur by bucket t out on side, or judges
// whether t ends it: a bucket back at the level the incident left from
// ends it at once; buckets in band but away from that level (a fall to
// a trickle the forecast has come to expect) leave it open; where the
// values cannot say, CloseAfter buckets in a row not out on its side end
// it. It reports whether cur is still open.
func (d *detector) cont(cur *span, t, side int) bool {
	if side == cur.side {
		cur.extend(t, d.z)
		return true
	}
	cur.run = 0
	back, known := d.backAt(t, *cur)
	switch {
	case back:
		cur.open = false
	case known:
		cur.away++
		cur.open = cur.away < awayMax
	default:
		cur.quiet++
		cur.open = cur.quiet < d.cfg.CloseAfter
	}
	return cur.open
}

// awayMax is the most buckets in band but away from where it left from
// an incident stays open through: by then the level it broke to is the
// series' own.
const awayMax = 24

// onset reports whether the bucket ending recent, out on side with score
// z, begins an incident: alone beyond Single, or with its run's sum, or
// with the buckets before it out with it, their scores together as
// unlikely as persistMin deviations of their sum.
func (d *detector) onset(recent []int, side int, z float64, sum bool) bool {
	if math.Abs(z) >= d.cfg.Single || sum || d.cfg.off.persistence {
		return true
	}
	return d.persists(side, len(recent))
}

// persistMin is the least score of the sum of the last buckets of a
// persistent break, in deviations of that sum.
const persistMin = 3.5

// persists reports whether the last K to m scored buckets sum on side to
// persistMin deviations of their sum, given rho: where the errors run in
// waves, a run of them out says less than where they are independent.
func (d *detector) persists(side, m int) bool {
	sum, k := 0.0, 0
	for u := d.at; u >= d.since && k < m; u-- {
		if d.returned(u) {
			break // the aftermath of the last incident is no evidence of a new one
		}
		if math.IsNaN(d.z[u]) {
			continue
		}
		sum += float64(side) * d.z[u]
		k++
		if k >= max(2, d.cfg.Persistence.K) && sum >= persistMin*math.Sqrt(sumVar(k, d.rho)) {
			return true
		}
	}
	return false
}

// sumVar is the variance of the sum of k unit scores whose correlation
// at lag j is rho^j.
func sumVar(k int, rho float64) float64 {
	v, r := float64(k), 1.0
	for j := 1; j < k; j++ {
		r *= rho
		v += 2 * float64(k-j) * r
	}
	return v
}

// begin opens a span ending at t, out on side, starting at the first
// bucket on its side among the last m scored ones that is at least half
// as far out as t: a noisy bucket just before a drop to zero is not the
// drop's beginning.
func (d *detector) begin(t, side, m int) span {
	first := t
	for u, seen := t, 0; u >= d.warm && seen < m && !d.returned(u); u-- {
		if math.IsNaN(d.z[u]) {
			continue
		}
		seen++
		if d.sideOf(d.z[u]) == side && 2*math.Abs(d.z[u]) >= math.Abs(d.z[t]) {
			first = u
		}
	}
	sp := span{side: side, first: first, peak: first, open: true}
	for u := first; u <= t; u++ {
		if (d.sideOf(d.z[u]) == side && 2*math.Abs(d.z[u]) >= math.Abs(d.z[t])) || u == t {
			sp.extend(u, d.z)
		}
	}
	return sp
}

// runFloor is the score a bucket needs of its own to complete a run
// whose sum flags it: a run ends out of band, not on an ordinary bucket.
const runFloor = 2.0

// runSum reports whether bucket t ends a run of runLen scored buckets
// (from since on) whose scores sum to at least RunSum on the side of t's.
// A spike of a few buckets or the start of a shift each move the score a
// little less than a band can catch alone, where the expectation is less
// sure; their sum shows them.
func (d *detector) runSum(t, since int) bool {
	c := d.cfg
	if c.RunSum <= 0 || c.off.runSum || c.Kind != Counts {
		return false
	}
	z := d.z[t]
	if math.Abs(z) < runFloor {
		return false
	}
	sum, m := 0.0, 0
	for u := t; u >= since && m < runLen && !d.returned(u); u-- {
		if !math.IsNaN(d.z[u]) {
			sum += d.z[u]
			m++
		}
	}
	// RunSum is set for independent scores; errors that run in waves
	// sum further out by themselves.
	need := c.RunSum * math.Sqrt(sumVar(runLen, d.rho)/runLen)
	return m == runLen && math.Abs(sum) >= need && sign(sum) == sign(z)
}

// mask marks the flagged buckets of the spans.
func mask(n int, spans []span) []bool {
	m := make([]bool, n)
	for _, sp := range spans {
		for t := sp.first; t <= sp.flaggedTo(n); t++ {
			m[t] = true
		}
	}
	return m
}
