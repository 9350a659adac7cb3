package bench

import (
	"os"
	"slices"
	"syscall"
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
// process does, as getrusage counts it: the spin lasts until the kernel
// has given the process 200 ms of CPU, however busy the machine, and the
// two readings must agree to within what the scheduler's bookkeeping and
// threads that come and go add.
func TestProcessCPU(t *testing.T) {
	before, err := processCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	ruBefore := rusageCPU(t)
	const spin = 200 * time.Millisecond
	for deadline := time.Now().Add(time.Minute); rusageCPU(t)-ruBefore < spin && time.Now().Before(deadline); {
	}
	after, err := processCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	ru := rusageCPU(t) - ruBefore
	if d := after - before; d < ru/2 || d > 2*ru {
		t.Errorf("CPU time grew %v while getrusage counted %v", d, ru)
	}
	if _, err := processCPU(1 << 30); err == nil {
		t.Error("no error for a process that does not exist")
	}
}

// rusageCPU is the process's user and system time by getrusage.
func rusageCPU(t *testing.T) time.Duration {
	t.Helper()
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		t.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
