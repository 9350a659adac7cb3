package forecast

// holdout is the run of buckets left out of the level on one side: the
// deseasonalized values, the observations and their factors.
type holdout struct {
	side    int
	d, w, f []float64
}

func (h *holdout) reset(side int) {
	h.side, h.d, h.w, h.f = side, h.d[:0], h.w[:0], h.f[:0]
}

// add appends a bucket left out on side and returns the run's length.
func (h *holdout) add(side int, d, w, f float64) int {
	if side != h.side {
		h.reset(side)
	}
	h.d, h.w, h.f = append(h.d, d), append(h.w, w), append(h.f, f)
	return len(h.d)
}
