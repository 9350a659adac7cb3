package entity

import (
	"math/rand/v2"
)

// The shapes of ids the layouts are measured and tested with.

// idShape draws n distinct ids of one shape, always the same ones.
type idShape struct {
	name string
	draw func(n int) []int64
}

var (
	// denseShape is 1..n: an auto-increment column without gaps.
	denseShape = idShape{"dense", func(n int) []int64 { return ids(n, 1) }}
	// snowflakeShape is a snowflake generator's ids: a millisecond
	// timestamp (since 2010-11-04, Twitter's epoch) shifted left 22 bits,
	// a worker number (32 workers) shifted left 12, and a sequence within
	// the millisecond; one new id every 100 ms on average, from late 2023.
	snowflakeShape = idShape{"snowflake", snowflakeIDs}
	// randomShape is uniformly random non-negative 63-bit ids.
	randomShape = idShape{"random63", randomIDs}
)

func snowflakeIDs(n int) []int64 {
	r := rand.New(rand.NewPCG(22, 12))
	out := make([]int64, n)
	ms := int64(1_700_000_000_000 - 1_288_834_974_657)
	seq := map[int64]int64{} // per worker, within the current millisecond
	for i := range out {
		if gap := r.Int64N(200); gap > 0 {
			ms += gap
			clear(seq)
		}
		w := r.Int64N(32)
		out[i] = ms<<22 | w<<12 | seq[w]
		seq[w]++
	}
	return out
}

func randomIDs(n int) []int64 {
	r := rand.New(rand.NewPCG(63, 63))
	out := make([]int64, 0, n)
	seen := make(map[int64]bool, n)
	for len(out) < n {
		if id := r.Int64(); !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}
