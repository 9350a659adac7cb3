package forecast

import "time"

// Persistence says when a run of buckets makes an incident though none
// of them alone is beyond Single: the sum of the scores of the last K to
// N scored buckets, the newest out of band, far enough out for a sum of
// as many (persistMin deviations of it, allowing for how the series'
// errors follow each other). One noisy 5-s bucket is not an anomaly; two
// or three far out together are. The buckets of an incident count toward
// no later one once it ends.
type Persistence struct {
	K, N int
}

// Config tunes FitWithConfig. The zero value of every field means its
// default.
type Config struct {
	// Kind of the values; Counts by default.
	Kind Kind
	// Context lends the daily and weekly shape of coarser precisions.
	Context Context
	// Persistence of a flag; DefaultPersistence(Step) when zero.
	Persistence Persistence
	// Band is the score (a normal quantile) beyond which a bucket is out of
	// band for flagging. Default DefaultBandFor(Step).
	Band float64
	// Single is the score that flags one bucket alone, without waiting
	// for K of N. Default DefaultSingleFor(Step).
	Single float64
	// RunSum is the sum of the last three scores, on one side, that flags
	// a count bucket ending them though none of them is out of band, for
	// independent scores; where the series' errors follow each other it
	// is scaled to as many deviations of their sum. Default
	// DefaultRunSumFor(Step); negative: never.
	RunSum float64
	// ShiftRun is the run of buckets out of band on one side that makes a
	// count incident a level shift. Default DefaultShiftRun.
	ShiftRun int
	// CloseAfter is the run of buckets back in band that ends an
	// incident. Default DefaultCloseAfter.
	CloseAfter int
	// Relevel is the run of buckets left out of the fit on one side after
	// which the level moves to them: a change that lasts is the new
	// normal. Default DefaultRelevel.
	Relevel int
	// FutureHits are the hits assumed per future bucket of an ErrorRatio
	// forecast. Default: the median hits of the last day of buckets, at
	// most the last 24.
	FutureHits float64
	// FlagsOnly leaves the bands of the history's buckets out (NaN) but
	// for the flagged ones: a scan for anomalies across many series does
	// not draw them, and they are a fair share of the cost.
	FlagsOnly bool

	off guards // tests switch parts off to show they matter
}

// guards are the parts of the model that tests switch off one by one.
type guards struct {
	clean       bool // no cleaning: every bucket updates the fit
	discrete    bool // counts and errors scored and banded as normal, whatever their mean
	season      bool // no season, own or borrowed
	persistence bool // every bucket out of band flags
	runSum      bool // no flag from the sum of a run of scores
	window      bool // a flagged run's buckets count toward the next flag after it ends
	floor       bool // a bucket's expectation may fall to zero
	steepTrend  bool // at 1 d, no steeper trend gain among the parameters
	calibrate   bool // the noise model's quantiles as they are, not calibrated on the window's errors
	week        bool // no Week lent: the 1 h and 1 d series lend their shapes
}

// Defaults of Config.
const (
	DefaultBand       = 2.5
	DefaultFineBand   = 2.25
	DefaultDailyBand  = 2.6
	DefaultSingle     = 5.0
	DefaultShiftRun   = 4
	DefaultRunSum     = 6.5
	DefaultRelevel    = 6
	DefaultCloseAfter = 2
)

// DefaultPersistence is two of the last three buckets at every
// precision: one bucket out of band is not an anomaly, whatever its width.
func DefaultPersistence(step time.Duration) Persistence {
	return Persistence{K: 2, N: 3}
}

// DefaultBandFor is the score beyond which a bucket is out of band:
// DefaultFineBand below a day, DefaultDailyBand at a day, where a trend
// over months leaves the expectation less sure. Scores are calibrated on
// the series' own errors, so one band serves every precision below it.
func DefaultBandFor(step time.Duration) float64 {
	if step >= 24*time.Hour {
		return DefaultDailyBand
	}
	return DefaultFineBand
}

// DefaultSingleFor is the score that flags one bucket alone:
// DefaultSingle at every precision. Scores are calibrated on the series'
// own errors, so one that far out is a break, not the series' noise.
func DefaultSingleFor(step time.Duration) float64 {
	return DefaultSingle
}

// runLen is the run of scores RunSum adds up.
const runLen = 3

// DefaultRunSumFor is the sum of three scores that flags a count bucket:
// DefaultRunSum from 1 h up, where the expectation leans on seasons
// estimated from a few of their cycles (or, at 5 h, lent by the 1 h
// series) and each bucket's score is blurred; never below, where the
// borrowed shape is sure enough that two of three catch what a sum would.
func DefaultRunSumFor(step time.Duration) float64 {
	if step >= time.Hour {
		return DefaultRunSum
	}
	return -1
}

func (c Config) withDefaults(step time.Duration) Config {
	if c.Persistence.K <= 0 || c.Persistence.N <= 0 {
		c.Persistence = DefaultPersistence(step)
	}
	c.Persistence.K = min(c.Persistence.K, c.Persistence.N)
	if c.Band <= 0 {
		c.Band = DefaultBandFor(step)
	}
	if c.Single <= 0 {
		c.Single = DefaultSingleFor(step)
	}
	if c.RunSum == 0 {
		c.RunSum = DefaultRunSumFor(step)
	}
	if c.ShiftRun <= 0 {
		c.ShiftRun = DefaultShiftRun
	}
	if c.CloseAfter <= 0 {
		c.CloseAfter = DefaultCloseAfter
	}
	if c.Relevel <= 0 {
		c.Relevel = DefaultRelevel
	}
	return c
}
