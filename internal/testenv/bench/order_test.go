package bench

import (
	"os"
	"slices"
	"testing"
	"time"
)

// TestRoundOrder checks that every round runs every variant once, that
// the same seed gives the same orders, and that over the rounds a
// variant follows more than one other: a fixed rotation would have bare
// after the same variant in every round.
func TestRoundOrder(t *testing.T) {
	vs := []Variant{Bare, BareMiddleware, Pulse, PulseCluster, EchoPrometheus}
	before := map[Variant]map[Variant]bool{}
	for round := 1; round <= 20; round++ {
		got := roundOrder(vs, 1, round)
		sorted := slices.Clone(got)
		slices.Sort(sorted)
		want := slices.Clone(vs)
		slices.Sort(want)
		if !slices.Equal(sorted, want) {
			t.Fatalf("round %d: order %v is not a permutation of %v", round, got, vs)
		}
		if again := roundOrder(vs, 1, round); !slices.Equal(again, got) {
			t.Fatalf("round %d: seed 1 gave %v, then %v", round, got, again)
		}
		for i := 1; i < len(got); i++ {
			if before[got[i]] == nil {
				before[got[i]] = map[Variant]bool{}
			}
			before[got[i]][got[i-1]] = true
		}
	}
	for _, v := range vs {
		if len(before[v]) < 3 {
			t.Errorf("in 20 rounds %s only ever followed %v", v, before[v])
		}
	}
	if slices.Equal(roundOrder(vs, 1, 1), roundOrder(vs, 2, 1)) && slices.Equal(roundOrder(vs, 1, 2), roundOrder(vs, 2, 2)) {
		t.Error("seeds 1 and 2 give the same orders")
	}
	if !slices.Equal(vs, []Variant{Bare, BareMiddleware, Pulse, PulseCluster, EchoPrometheus}) {
		t.Errorf("roundOrder changed its input: %v", vs)
	}
}

// TestProcessCPU checks the CPU time read from /proc against work this
// process does: it grows by about the time spent spinning, to within what
// the scheduler and the rest of the test binary add.
func TestProcessCPU(t *testing.T) {
	before, err := processCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	const spin = 200 * time.Millisecond
	for start := time.Now(); time.Since(start) < spin; {
	}
	after, err := processCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// The spin is wall time; on a busy machine it gets less CPU than that.
	if d := after - before; d < spin/4 || d > 3*spin {
		t.Errorf("CPU time grew %v over a %v spin", d, spin)
	}
	if _, err := processCPU(1 << 30); err == nil {
		t.Error("no error for a process that does not exist")
	}
}
