package forecast

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// borrowed holds the shape lent by coarser precisions, on the working
// scale: the daily profile of the 1 h series (24 phases) and the
// day-of-week profile of the 1 d series (7 phases). nil when not lent.
type borrowed struct {
	mult   bool
	daily  []float64
	weekly []float64
	// week is each hour of the week's share of that hour's mean over the
	// seven days, from a Context.Week: in place of weekly, it tells a
	// Saturday night from a Tuesday night by shape, not only by level.
	week []float64
	// replaced is the period of the own season the lent daily profile
	// stands in for (24 at 5 h), 0 if none: the lead of the ahead scale
	// stays the one that season would have set.
	replaced int
}

// lend fits the profile of a coarser series of the given step and period,
// or says why it cannot.
func lend(c *Series, kind Kind, step time.Duration, period int) ([]float64, error) {
	if c.Step != step {
		return nil, fmt.Errorf("step %v, want %v", c.Step, step)
	}
	if err := c.validate(kind); err != nil {
		return nil, err
	}
	w := working(*c, kind)
	valid := 0
	for _, v := range w {
		if !math.IsNaN(v) {
			valid++
		}
	}
	if valid < 2*period {
		return nil, fmt.Errorf("%d buckets, need 2 seasons (%d)", valid, 2*period)
	}
	if why := tooSparse(kind, w, period); why != "" {
		return nil, errors.New(why)
	}
	mult := kind == Counts
	ph := make([]int, len(w))
	for t := range w {
		ph[t] = phase(c.Time(t), step, period)
	}
	_, raw := decompose(w, period, mult)
	med := phaseMedians(raw, ph, period, mult)
	// One scale for all phases: a spike in the coarser series is cleaned
	// if it is far beyond the spread of the other seasons.
	res := make([]float64, len(raw))
	for t, r := range raw {
		res[t] = math.Abs(r - med[ph[t]])
	}
	scale := madToSigma * median(res, nil)
	p := fitProfile(raw, ph, med, mult, true, func(t int) bool { return res[t] > 5*scale })
	return p.s, nil
}

// borrow decides what a series of step takes from its context, records it
// in seasons and returns the shape.
func borrow(cx Context, kind Kind, step time.Duration, seasons []Season) (borrowed, []Season, []string) {
	b := borrowed{mult: kind == Counts}
	var notes []string
	if step >= day || kind == ErrorRatio {
		return b, seasons, notes
	}
	need := func(name string) (int, bool) {
		for i, s := range seasons {
			if s.Name == name {
				return i, s.Source != "own"
			}
		}
		return -1, false
	}
	if i, ok := need("daily"); ok && cx.Hourly != nil {
		p, err := cx.shape(cx.Hourly, kind, time.Hour, 24)
		if err != nil {
			notes = append(notes, "1 h series not borrowed: "+err.Error())
		} else {
			b.daily = p
			seasons[i].Source, seasons[i].Refused = "1h", ""
		}
	}
	if i, ok := need("weekly"); ok && kind == Counts && step == weekStep {
		if p := cx.weekProfile(); p != nil {
			b.week = p
			seasons[i].Source, seasons[i].Refused = "week", ""
			return b, seasons, notes
		}
	}
	if i, ok := need("weekly"); ok && cx.Daily != nil {
		p, err := cx.shape(cx.Daily, kind, day, 7)
		if err != nil {
			notes = append(notes, "1 d series not borrowed: "+err.Error())
		} else {
			b.weekly = p
			seasons[i].Source, seasons[i].Refused = "1d", ""
		}
	}
	return b, seasons, notes
}

// weekStep is the precision a Context.Week lends to. At 1 h the window's
// five days cannot tie the day's shape to the weekday, and the week's
// shape per weekday halves the false incidents of Saturdays on real
// traffic; at 5 s to 5 min and at 5 h it was measured to begin more
// false incidents than the 1 d series' factor (the hour's mean there is
// what matters, and last weeks' hours are a noisier guide to it than
// the window's own level), so there the 1 d series lends as before.
const weekStep = time.Hour

// at returns the borrowed factor of the bucket of step starting at t.
func (b borrowed) at(t time.Time, step time.Duration) float64 {
	if step >= time.Hour && step < day {
		return b.overHours(t, step)
	}
	v := neutral(b.mult)
	if b.daily != nil {
		v = b.combine(v, b.dailyAt(t, step))
	}
	switch {
	case b.week != nil:
		v = b.combine(v, b.weekAt(t, step))
	case b.weekly != nil:
		mid := t.Add(step / 2)
		v = b.combine(v, b.weekly[phase(mid, day, 7)])
	}
	return v
}

// overHours is the factor of a bucket of whole hours: the mean of each
// hour's, daily and weekly together, so a bucket that straddles midnight
// takes each day's factor for its own hours, weighted by their traffic.
func (b borrowed) overHours(t time.Time, step time.Duration) float64 {
	hours := int(step / time.Hour)
	h0, w0 := phase(t, time.Hour, 24), phase(t, time.Hour, WeekHours)
	sum := 0.0
	for h := range hours {
		v := neutral(b.mult)
		if b.daily != nil {
			v = b.combine(v, b.daily[(h0+h)%24])
		}
		if b.week != nil {
			v = b.combine(v, b.week[(w0+h)%WeekHours])
		} else if b.weekly != nil {
			mid := t.Add(time.Duration(h)*time.Hour + time.Hour/2)
			v = b.combine(v, b.weekly[phase(mid, day, 7)])
		}
		sum += v
	}
	return sum / float64(hours)
}

func (b borrowed) combine(a, f float64) float64 {
	if b.mult {
		return a * f
	}
	return a + f
}

// dailyAt interpolates the hourly profile at the middle of a bucket
// shorter than an hour.
func (b borrowed) dailyAt(t time.Time, step time.Duration) float64 {
	mid := t.Add(step / 2).Unix()
	sec := ((mid % 86400) + 86400) % 86400
	x := float64(sec)/3600 - 0.5 // hour profiles sit at the middle of their hour
	i0 := int(math.Floor(x))
	f := x - float64(i0)
	return b.daily[(i0+24)%24]*(1-f) + b.daily[(i0+1+24)%24]*f
}

func (b borrowed) any() bool { return b.daily != nil || b.weekly != nil || b.week != nil }

// borrowFirst is borrow, except that a step which does not divide a day
// (5 h) takes its daily season from the 1 h series when lent, in place of
// its own: its own phases repeat only every few days, each estimated from
// a handful of buckets, where the 1 h series sees each hour every day.
// Without a usable 1 h series the own season stays.
func borrowFirst(cx Context, kind Kind, step time.Duration, period int, seasons []Season) (borrowed, int, []Season, []string) {
	daily := -1
	for i, s := range seasons {
		if s.Name == "daily" && s.Source == "own" && day%step != 0 && cx.Hourly != nil {
			daily = i
		}
	}
	if daily < 0 {
		b, seasons, notes := borrow(cx, kind, step, seasons)
		return b, period, seasons, notes
	}
	own := seasons[daily]
	seasons[daily] = Season{Name: own.Name, Source: "none"}
	b, seasons, notes := borrow(cx, kind, step, seasons)
	if b.daily == nil {
		seasons[daily] = own
		return b, period, seasons, notes
	}
	b.replaced = period
	return b, 0, seasons, notes
}

// weekAt is the hour-of-week factor at the middle of a bucket shorter
// than an hour, interpolated between the middles of its hours.
func (b borrowed) weekAt(t time.Time, step time.Duration) float64 {
	const weekSec = WeekHours * 3600
	mid := t.Add(step / 2).Unix()
	x := float64(((mid%weekSec)+weekSec)%weekSec)/3600 - 0.5
	i0 := int(math.Floor(x))
	f := x - float64(i0)
	return b.week[(i0+WeekHours)%WeekHours]*(1-f) + b.week[(i0+1)%WeekHours]*f
}
