package forecast

import "math"

// floorShare is the least level of a count or error-ratio series, as a
// share of its mean level.
const floorShare = 0.3

// levelFloor is the least level of a series: a share of its mean level
// for counts (its hits over its seasons' factors, so a quiet night keeps
// its own share), and of its overall ratio (at least one failure over
// all its hits) for error ratios; none for latency. Without it a sparse
// series' level follows a run of zeros down to nothing, and every hit,
// or every error, after it is beyond any band.
func levelFloor(kind Kind, w, hits, fac []float64, off guards) float64 {
	sum, n := 0.0, 0.0
	for t, v := range w {
		if math.IsNaN(v) {
			continue
		}
		switch kind {
		case Counts:
			sum, n = sum+v, n+fac[t]
		case ErrorRatio:
			sum, n = sum+v*hits[t], n+hits[t]
		}
	}
	if n <= 0 || off.floor {
		return 0
	}
	if kind == ErrorRatio {
		return floorShare * max(sum, 1) / n
	}
	return floorShare * sum / n
}

// lifted is a level no lower than the floor, if there is one.
func (f *filter) lifted(level float64) float64 {
	if f.floor > 0 && level < f.floor {
		return f.floor
	}
	return level
}
