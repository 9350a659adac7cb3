package fleet

import (
	"context"
)

// Saturate finds the most instances cfg's fleet can have and still hold
// (Result.Holds): it doubles cfg.Instances from its value until a run
// falls behind or reaches limit instances, and returns every run, the
// last holding one being the capacity. Each run starts from the state the
// one before left: the series exist already, as in a fleet that grew.
func Saturate(ctx context.Context, cfg Config, limit int) ([]Result, error) {
	var runs []Result
	for n := max(cfg.Instances, 1); n <= limit; n *= 2 {
		c := cfg
		c.Instances = n
		r, err := Run(ctx, c)
		if err != nil {
			return runs, err
		}
		runs = append(runs, r)
		if !r.Holds() {
			break
		}
	}
	return runs, nil
}

// Capacity is the instance series (each instance's series, summed: each
// is flushed once a second while it has hits) that the last holding run
// of runs carried, and, scaled to its busiest master's CPU reaching one full
// core, what the masters could carry if nothing else ran on them: a
// machine shared by the load generator and other work saturates before
// Redis does.
func Capacity(runs []Result) (held, atFullCore float64) {
	for _, r := range runs {
		if !r.Holds() {
			break
		}
		held = float64(r.Series)
		if r.BusiestCPU > 0 {
			atFullCore = held / r.BusiestCPU
		}
	}
	return held, atFullCore
}
