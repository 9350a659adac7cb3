// Package forecast forecasts a series of buckets from its trend and
// season, and flags the buckets that break from what was expected.
//
// It is pure Go with no Redis: give it a Series of timestamped values at
// one precision (Pulse keeps 120 buckets of each), and optionally the same
// series at 1 h and 1 d as a Context.
//
//	fd, err := forecast.FitWithConfig(s, forecast.Config{Kind: forecast.Counts})
//	next := fd.Forecast(12)  // expected value, 80 % and 95 % bands
//	for _, f := range fd.Flags { ... } // spikes, drops, level shifts
//
// # What is modelled
//
// A robust damped-trend exponential smoothing of the level, times a
// seasonal profile (counts) or plus one on a log scale (latency). A
// season is fitted only where the history holds two of it: the daily
// season of 24 buckets at 1 h, the weekly one of 7 at 1 d, the daily one
// seen through 5 h buckets every 5 days. Precisions whose window is
// shorter than a day (5 s, 1 min, 5 min) borrow the daily profile of the
// 1 h series and the day-of-week factor of the 1 d series from the
// Context. Model says what was fitted, borrowed or refused, and why.
//
// A Week keeps a series' shape over the 168 hours of the week beyond the
// window, updated as each hour closes, in under a kilobyte (package
// fromstore keeps it in Redis). Given as Context.Week at 1 h, it lends
// each weekday's own shape in place of the 1 d series' factor per day.
//
// # Kinds
//
// Counts are Poisson at low volume, with extra noise fitted as a share of
// the mean: a route with 3 hits a bucket gets bands from its own count
// noise and raises no flag from it. ErrorRatio is errors given hits:
// binomial, so a bucket with few hits may carry a high ratio without a
// flag. Latency quantiles are skewed, so they are modelled on a log scale.
//
// # Robustness
//
// The season is averaged after outliers are replaced; the level ignores
// buckets far out of band and shrinks the pull of those near it; scales
// are medians. One spike or outage in the history neither bends the
// forecast nor widens its bands. A change that lasts (Config.Relevel
// buckets on one side) becomes the new level.
//
// # Bands and scores
//
// Each past bucket gets the one-step-ahead expectation made before it was
// seen (its season's profile computed without it), its bands, and a score.
// The bands are calibrated on the series' own errors: the noise model's
// deviation widened to the weighted conformal quantiles of the buckets
// before it (the newest weighing most, a clear incident's left out), at
// 80 % and 95 % apart, so they hold those shares of real traffic, which is
// burstier than any one-scale model. The score is the bucket's place
// among those errors as a normal quantile: ±1.96 is the 95 % band's edge,
// and beyond it the errors' own tail, taken as exponential, says how rare
// a bucket is, so 5 is as rare for a bursty series as for a calm one. It
// is not bounded, so sorting by |score| puts the least likely first.
// Future buckets get bands that widen as the history's own errors at
// longer leads say they must.
//
// # Incidents
//
// Flags are the buckets of Incidents: one per event, with its start, end
// or Open, peak, kind and Direction. One begins at a bucket out of band
// that alone is beyond Config.Single, or that ends a run whose scores sum
// far out (Persistence, allowing for how the series' errors follow each
// other); it ends when the series is back where it left from. The return
// to normal after it is not an incident. Counts break as a spike, a drop
// or, lasting Config.ShiftRun buckets, a level shift; latency as a
// latency regression; error ratios as an error surge. Faster or cleaner
// buckets are not flagged.
package forecast
