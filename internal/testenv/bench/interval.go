package bench

import (
	"fmt"

	"github.com/pulse-dev/pulse/internal/testenv/redisstat"
)

// medianInterval is a 90 % bootstrap interval of the median of xs: the
// 5th and 95th percentiles of the medians of resamples of xs drawn with
// replacement. A round's ratio swings by several percent on a shared
// machine, so a median alone does not say whether 0.96 and 0.97 differ;
// the interval does. The seed is fixed, so the same runs give the same
// interval.
func medianInterval(xs []float64) (lo, hi float64) { return redisstat.Interval(xs) }

// ratioSummary says the median of the runs' throughput ratios to bare
// and its interval, e.g. "median 0.97, 90 % interval 0.96–0.98 over 20
// rounds".
func ratioSummary(runs []RunResult) string {
	xs := make([]float64, len(runs))
	for i, run := range runs {
		xs[i] = run.RatioToBare
	}
	lo, hi := medianInterval(xs)
	return fmt.Sprintf("median %.2f, 90 %% interval %.2f–%.2f over %d rounds", median(xs), lo, hi, len(xs))
}
