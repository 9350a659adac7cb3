package timeseries

import (
	"fmt"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/timeseries/internal/latency"
)

// catchUp takes and settles rounds until nothing is pending, and returns
// the entries each round looked at and the increments and durations
// the rounds carried.
func catchUp(t *testing.T, l *ledger) (visits []int64, incr, durations int64) {
	t.Helper()
	for len(l.pending) > 0 || len(l.pendingDurations) > 0 {
		if len(visits) == 1000 {
			t.Fatalf("still %d entries pending after 1000 rounds", len(l.pending))
		}
		before := l.visited
		out, _, took, _ := l.takeRound()
		visits = append(visits, l.visited-before)
		if !took {
			t.Fatalf("round %d took nothing with %d entries pending", len(visits), len(l.pending))
		}
		for _, b := range out {
			incr += b.incr
			durations += b.durationsN
			l.settle(b, scriptReply{})
		}
	}
	return visits, incr, durations
}

// A round stops walking pending once every marker in use is full, so a
// catch-up over n entries looks at about n of them, not at all that is
// left in each of its rounds (n²/maxBatchDeltas in all).
func TestLedgerCatchUpWalksPendingOnce(t *testing.T) {
	for _, markers := range []int{1, 2, 4} {
		t.Run(fmt.Sprintf("%d markers", markers), func(t *testing.T) {
			groups := make([][]int, markers)
			for g := range groups {
				groups[g] = []int{g}
			}
			l := testLedger([]int{1}, groups...)
			// Marker 0 holds eight full batches and some; each other one
			// and a half, so they are done long before it is.
			n := 0
			for g := range markers {
				secs := maxBatchDeltas * 3 / 2
				if g == 0 {
					secs = 8*maxBatchDeltas + 100
				}
				for sec := range secs {
					l.add(int32(g), int64(sec), 1)
					n++
				}
			}
			visits, incr, _ := catchUp(t, l)
			if incr != int64(n) || len(visits) != 9 {
				t.Fatalf("%d rounds carried %d increments, want 9 rounds carrying %d", len(visits), incr, n)
			}
			// A round looks at the entries it takes, and one more per
			// marker that refuses one. Only the first two may look at
			// more: until a walk has found the other markers empty, a
			// round goes on while they take the rest.
			first := 0
			if markers > 1 {
				first = 2
			}
			for i, v := range visits[first:] {
				if limit := int64(maxBatchDeltas + markers); v > limit {
					t.Errorf("round %d looked at %d pending entries, want at most %d", first+i+1, v, limit)
				}
			}
		})
	}
}

// A round whose only marker has a batch in flight looks at one entry.
func TestLedgerBusyMarkerStopsTheWalk(t *testing.T) {
	l := testLedger([]int{5, 60}, []int{0, 0})
	l.add(0, 1, 1)
	first, _ := l.take()
	const n = 1000
	for sec := range int64(n) {
		l.add(0, 10+sec, 1)
	}
	l.visited = 0
	out, leftover := l.take()
	if len(out) != 1 || out[0] != first[0] || !leftover || len(l.pending) != n {
		t.Fatalf("take: %d batches, leftover %v, %d pending; want the batch in flight again and all %d entries left", len(out), leftover, len(l.pending), n)
	}
	if l.visited != 1 {
		t.Errorf("looked at %d pending entries, want 1", l.visited)
	}
	l.settle(first[0], scriptReply{})
	if _, incr, _ := catchUp(t, l); incr != 2*n {
		t.Errorf("after the batch in flight: %d increments carried, want %d", incr, 2*n)
	}
}

// Durations wait while counts fill every batch, and then all go.
func TestLedgerDurationsAfterFullRounds(t *testing.T) {
	m, err := latency.NewMapping(latency.Config{})
	if err != nil {
		t.Fatal(err)
	}
	l := testLedger([]int{1}, []int{0})
	l.durationMapping, l.durationStep = m, 1
	l.series[0].lat = []string{"lat:1:s0:"}
	const secs = maxBatchDeltas + 500
	for sec := range int64(secs) {
		l.add(0, sec, 1)
	}
	for sec := range int64(2000) {
		l.addDuration(0, sec, time.Duration(sec+1)*time.Millisecond)
	}
	visits, incr, durations := catchUp(t, l)
	if incr != secs || durations != 2000 {
		t.Errorf("%d rounds carried %d increments and %d durations, want %d and 2000", len(visits), incr, durations, secs)
	}
	if want := 1 + (500+2000*latWeight+maxBatchDeltas-1)/maxBatchDeltas; len(visits) != want {
		t.Errorf("%d rounds, want %d", len(visits), want)
	}
}

func BenchmarkLedgerCatchUp(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run(fmt.Sprintf("%d", n), func(b *testing.B) {
			b.ReportAllocs()
			var visited int64
			for range b.N {
				b.StopTimer()
				groups := make([][]int, n/100)
				for s := range groups {
					groups[s] = make([]int, 6) // one server
				}
				l := testLedger([]int{1, 5, 60, 300, 3600, 86400}, groups...)
				for s := range groups {
					for sec := range int64(100) {
						l.add(int32(s), sec, 1)
					}
				}
				b.StartTimer()
				for len(l.pending) > 0 {
					out, _ := l.take()
					for _, bt := range out {
						l.settle(bt, scriptReply{})
					}
				}
				visited += l.visited
			}
			b.ReportMetric(float64(visited)/float64(b.N)/float64(n), "visits/entry")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/entry")
		})
	}
}
