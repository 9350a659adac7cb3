package forecast

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// MaxSamples bounds the history one fit reads. Pulse keeps 120 buckets
// per precision; the bound only guards against a caller's mistake.
const MaxSamples = 100000

// Kind says what a series measures, and so which noise its buckets have.
type Kind int

const (
	// Counts are hits, routes or status classes per bucket: non-negative
	// integers whose noise is Poisson at low volume.
	Counts Kind = iota
	// ErrorRatio is errors over hits: Series.Values hold the error counts
	// and Series.Hits the hits, so the noise is binomial given the hits.
	ErrorRatio
	// Latency is one latency quantile per bucket (p50, p90, p99). It is
	// skewed and multiplicative, so it is modelled on a log scale.
	Latency
)

// String returns "counts", "error_ratio" or "latency".
func (k Kind) String() string {
	switch k {
	case Counts:
		return "counts"
	case ErrorRatio:
		return "error_ratio"
	case Latency:
		return "latency"
	}
	return fmt.Sprintf("kind(%d)", int(k))
}

// Series is one series' buckets at one precision, oldest first.
//
// A bucket with no data is NaN. For Counts a bucket with no hits is 0, not
// NaN: Pulse writes nothing for an idle bucket, and idle is a value. For
// Latency a bucket of 0 or NaN (no requests) is treated as missing. For
// ErrorRatio a bucket with no hits is missing.
type Series struct {
	Name   string        // carried into flags
	Step   time.Duration // bucket width, the precision
	Start  time.Time     // start of the bucket of Values[0]
	Values []float64     // counts, error counts, or latencies
	Hits   []float64     // ErrorRatio only: the hits of each bucket
}

// Time returns the start of bucket i; i may run past the history.
func (s Series) Time(i int) time.Time {
	return s.Start.Add(time.Duration(i) * s.Step)
}

// Context holds the same series at coarser precisions. A precision whose
// window is shorter than a day cannot see a daily season itself; it
// borrows the daily profile from Hourly and the day-of-week factor from
// Daily. Either may be nil.
type Context struct {
	Hourly *Series // the series at 1 h
	Daily  *Series // the series at 1 d
	// Week is the series' hour-of-week shape, kept beyond the window.
	// When ready it lends a count series at 1 h each weekday's shape in
	// place of Daily's day-of-week factor; nil or not ready, or at other
	// precisions, Daily lends it.
	Week *Week

	lent *lentShapes // fitted once by Prepare
}

// lentShapes are the shapes a Context lends, fitted from its series.
type lentShapes struct {
	kind            Kind
	hourly, daily   *Series
	daily24         []float64
	weekly7         []float64
	errHour, errDay error
	week            *Week
	weekly168       []float64
}

// Prepare returns cx with the shapes it lends to a series of kind fitted
// once, for the many fits that share it: a scan that fits a series every
// few seconds borrows the same 1 h and 1 d series for an hour. Fits with
// the prepared Context are those with cx; the series must not change
// after Prepare.
func (cx Context) Prepare(kind Kind) Context {
	l := &lentShapes{kind: kind, hourly: cx.Hourly, daily: cx.Daily}
	if cx.Hourly != nil {
		l.daily24, l.errHour = lend(cx.Hourly, kind, time.Hour, 24)
	}
	if cx.Daily != nil {
		l.weekly7, l.errDay = lend(cx.Daily, kind, day, 7)
	}
	l.week, l.weekly168 = cx.Week, cx.Week.profile()
	cx.lent = l
	return cx
}

// weekProfile is the hour-of-week profile cx.Week lends: prepared, or
// computed now; nil when there is none or it is not ready.
func (cx Context) weekProfile() []float64 {
	if l := cx.lent; l != nil && l.week == cx.Week {
		return l.weekly168
	}
	return cx.Week.profile()
}

// shape is what c lends at step with period phases: prepared, or fitted
// now.
func (cx Context) shape(c *Series, kind Kind, step time.Duration, period int) ([]float64, error) {
	if l := cx.lent; l != nil && l.kind == kind {
		switch {
		case step == time.Hour && c == l.hourly:
			return l.daily24, l.errHour
		case step == day && c == l.daily:
			return l.weekly7, l.errDay
		}
	}
	return lend(c, kind, step, period)
}

// ErrTooShort is returned for a series with too few buckets with a
// value to fit: a route seen for the first time, or a quiet one.
var ErrTooShort = errors.New("forecast: too little history")

var errNoValues = fmt.Errorf("%w: no values", ErrTooShort)

func (s Series) validate(kind Kind) error {
	if s.Step < time.Second || s.Step%time.Second != 0 {
		return fmt.Errorf("forecast: series %q: step %v is not a whole number of seconds", s.Name, s.Step)
	}
	if len(s.Values) == 0 {
		return fmt.Errorf("%w in series %q", errNoValues, s.Name)
	}
	if len(s.Values) > MaxSamples {
		return fmt.Errorf("forecast: series %q: %d values, at most %d", s.Name, len(s.Values), MaxSamples)
	}
	if kind == ErrorRatio && len(s.Hits) != len(s.Values) {
		return fmt.Errorf("forecast: series %q: %d hits for %d error counts", s.Name, len(s.Hits), len(s.Values))
	}
	for i, v := range s.Values {
		if math.IsInf(v, 0) || v < 0 {
			return fmt.Errorf("forecast: series %q: value %v at bucket %d", s.Name, v, i)
		}
		if kind == ErrorRatio && !math.IsNaN(v) && s.Hits[i] < v {
			return fmt.Errorf("forecast: series %q: %v errors over %v hits at bucket %d", s.Name, v, s.Hits[i], i)
		}
	}
	return nil
}

// working returns the values on the scale the model works on: counts as
// they are, latency as its logarithm, errors as a ratio of the hits.
func working(s Series, kind Kind) []float64 {
	if kind == Counts {
		// Counts are their own working scale, NaN included: the fit only
		// reads them, and the Fitted keeps the series anyway.
		return s.Values
	}
	w := make([]float64, len(s.Values))
	for i, v := range s.Values {
		switch {
		case math.IsNaN(v):
			w[i] = math.NaN()
		case kind == Latency:
			if v <= 0 {
				w[i] = math.NaN()
			} else {
				w[i] = math.Log(v)
			}
		case kind == ErrorRatio:
			if s.Hits[i] <= 0 || math.IsNaN(s.Hits[i]) {
				w[i] = math.NaN()
			} else {
				w[i] = v / s.Hits[i]
			}
		default:
			w[i] = v
		}
	}
	return w
}

func errorf(format string, args ...any) error {
	return fmt.Errorf("forecast: "+format, args...)
}
