package forecast

import (
	"math"
	"slices"
)

// madToSigma turns a median absolute deviation into a normal standard
// deviation.
const madToSigma = 1.4826

// median returns the median of the non-NaN values of x, NaN when none.
// It sorts a copy held in buf, so callers can reuse the buffer.
func median(x []float64, buf []float64) float64 {
	buf = buf[:0]
	for _, v := range x {
		if !math.IsNaN(v) {
			buf = append(buf, v)
		}
	}
	return medianInPlace(buf)
}

// medianInPlace returns the median of b, reordering b.
func medianInPlace(b []float64) float64 {
	n := len(b)
	if n == 0 {
		return math.NaN()
	}
	hi := selectKth(b, n/2)
	if n%2 == 1 {
		return hi
	}
	// The largest of the lower half, which selection left below n/2.
	lo := b[0]
	for _, v := range b[1 : n/2] {
		lo = math.Max(lo, v)
	}
	return (lo + hi) / 2
}

// selectKth reorders b so that b[k] is its k-th smallest value, smaller
// ones before it and larger ones after, and returns it (Hoare's
// selection: linear on average, where sorting is not).
func selectKth(b []float64, k int) float64 {
	lo, hi := 0, len(b)-1
	for lo < hi {
		pivot := b[lo+(hi-lo)/2]
		i, j := lo, hi
		for i <= j {
			for b[i] < pivot {
				i++
			}
			for b[j] > pivot {
				j--
			}
			if i <= j {
				b[i], b[j] = b[j], b[i]
				i++
				j--
			}
		}
		switch {
		case k <= j:
			hi = j
		case k >= i:
			lo = i
		default:
			return b[k]
		}
	}
	return b[k]
}

// movingMedian returns, for each t, the median of the width values around
// it; windows are clamped at the ends so every point gets one. The window
// is kept sorted as it slides, one value out and one in.
func movingMedian(x []float64, width int) []float64 {
	n := len(x)
	out := make([]float64, n)
	width = min(width, n)
	win := make([]float64, 0, width)
	add := func(v float64) {
		if math.IsNaN(v) {
			return
		}
		i, _ := slices.BinarySearch(win, v)
		win = slices.Insert(win, i, v)
	}
	del := func(v float64) {
		if math.IsNaN(v) {
			return
		}
		if i, ok := slices.BinarySearch(win, v); ok {
			win = slices.Delete(win, i, i+1)
		}
	}
	start := -1
	for t := range x {
		lo := max(0, min(t-width/2, n-width))
		if start < 0 {
			for _, v := range x[lo : lo+width] {
				add(v)
			}
		} else if lo > start {
			del(x[start])
			add(x[start+width])
		}
		start = lo
		out[t] = sortedMedian(win)
	}
	return out
}

func sortedMedian(b []float64) float64 {
	n := len(b)
	switch {
	case n == 0:
		return math.NaN()
	case n%2 == 1:
		return b[n/2]
	}
	return (b[n/2-1] + b[n/2]) / 2
}

// dispersionFit finds the extra-noise parameter d >= 0 at which the
// residuals, each divided by its standard deviation sd(i, d), have a
// median absolute value of a standard normal's. sd must grow with d.
// Solving on the median keeps one spike or outage from moving the answer.
func dispersionFit(res []float64, sd func(i int, d float64) float64, hi float64) float64 {
	buf := make([]float64, 0, len(res))
	medAt := func(d float64) float64 {
		buf = buf[:0]
		for i, r := range res {
			if !math.IsNaN(r) {
				buf = append(buf, math.Abs(r)/sd(i, d))
			}
		}
		return medianInPlace(buf)
	}
	const target = 1 / madToSigma
	if m := medAt(0); math.IsNaN(m) || m <= target {
		return 0
	}
	lo := 0.0
	if medAt(hi) > target {
		return hi
	}
	for range 14 { // to a 16,000th of the bracket: finer than the data can say
		mid := (lo + hi) / 2
		if medAt(mid) > target {
			lo = mid
		} else {
			hi = mid
		}
	}
	return (lo + hi) / 2
}

// normCDF is the standard normal distribution function.
func normCDF(z float64) float64 { return 0.5 * math.Erfc(-z/math.Sqrt2) }

// normQuantile is its inverse.
func normQuantile(p float64) float64 {
	switch {
	case p <= 0:
		return math.Inf(-1)
	case p >= 1:
		return math.Inf(1)
	}
	return -math.Sqrt2 * math.Erfcinv(2*p)
}
