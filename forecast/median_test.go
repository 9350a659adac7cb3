package forecast

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// The selection and the sliding window agree with sorting.
func TestMedians(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for n := 1; n < 60; n++ {
		x := make([]float64, n)
		for i := range x {
			x[i] = float64(rng.IntN(10)) // ties on purpose
			if rng.IntN(9) == 0 {
				x[i] = math.NaN()
			}
		}
		for _, width := range []int{1, 2, 5, 7, 24} {
			got := movingMedian(x, width)
			w := min(width, n)
			for t0 := range x {
				lo := max(0, min(t0-w/2, n-w))
				var win []float64
				for _, v := range x[lo : lo+w] {
					if !math.IsNaN(v) {
						win = append(win, v)
					}
				}
				slices.Sort(win)
				want := sortedMedian(win)
				if got[t0] != want && !(math.IsNaN(want) && math.IsNaN(got[t0])) {
					t.Fatalf("n %d width %d t %d: %v, want %v", n, width, t0, got[t0], want)
				}
				if m := medianInPlace(slices.Clone(win)); m != want && len(win) > 0 {
					t.Fatalf("medianInPlace(%v) = %v, want %v", win, m, want)
				}
			}
		}
	}
}
