package redisstat

import (
	"fmt"
	"math/rand/v2"
	"slices"
)

// Median is the median of xs, 0 for none.
func Median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(xs))
	if n := len(s); n%2 == 1 {
		return s[n/2]
	} else {
		return (s[n/2-1] + s[n/2]) / 2
	}
}

// Interval is a 90 % bootstrap interval of the median of xs: the 5th and
// 95th percentiles of the medians of 2,000 resamples drawn with
// replacement. The seed is fixed, so the same rounds give the same
// interval.
func Interval(xs []float64) (lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	const resamples = 2000
	rng := rand.New(rand.NewPCG(1, 2))
	medians := make([]float64, resamples)
	sample := make([]float64, len(xs))
	for i := range medians {
		for j := range sample {
			sample[j] = xs[rng.IntN(len(xs))]
		}
		medians[i] = Median(sample)
	}
	slices.Sort(medians)
	return medians[resamples*5/100], medians[resamples*95/100-1]
}

// Summary says the median of xs and its interval, e.g. "1.08 (90 %
// interval 1.02–1.15, 11 rounds)".
func Summary(xs []float64) string {
	lo, hi := Interval(xs)
	return fmt.Sprintf("%.3g (90 %% interval %.3g–%.3g, %d rounds)", Median(xs), lo, hi, len(xs))
}
