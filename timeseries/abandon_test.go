package timeseries

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Groups that share a node marker make one node batch between them.
func TestLedgerNodeBatch(t *testing.T) {
	l := testLedger([]int{5, 60}, []int{0, 1}, []int{2, 2})
	l.markerOf = func(g int) (string, bool) { return fmt.Sprintf("n%d", g/2), true }
	l.add(0, 100, 2)
	l.add(1, 100, 3)
	batches, leftover := l.take()
	want := []string{
		"n0: count:5:s0/100=2 count:60:s0/60=2",
		"n1: count:5:s1/100=3 count:60:s1/60=3",
	}
	if got := deltas(batches); leftover || !slices.Equal(got, want) {
		t.Fatalf("batches %q (leftover %v), want %q", got, leftover, want)
	}
	for _, b := range batches {
		if !b.Node {
			t.Errorf("batch of %s is not a node batch", b.Marker)
		}
	}
}

// An abandoned batch's writes go into new batches with new seqs: from
// pending, even after a send that may have landed (the fence says none
// did); a spilled one, per slot, still counting against its file.
func TestLedgerAbandon(t *testing.T) {
	l := testLedger([]int{5}, []int{0}, []int{1})
	l.markerOf = func(int) (string, bool) { return "n", true }
	l.add(0, 100, 2)
	l.add(1, 100, 3)
	batches, _ := l.take()
	first := batches[0]
	l.fail(first, true)
	bySlot := func(key string) string { return "slot-of-" + strings.TrimPrefix(key, "count:5:") }
	l.abandon(first, bySlot)
	again, _ := l.take()
	if len(again) != 1 || again[0].Seq <= first.Seq || !slices.Equal(deltas(again), deltas(batches)) {
		t.Fatalf("after abandon took %q seq %d, want %q with a seq above %d", deltas(again), again[0].Seq, deltas(batches), first.Seq)
	}

	spilled := &batch{Marker: "old", Seq: 1, Node: true, Keys: []string{"count:5:s0", "count:5:s1"},
		Fields: []string{"100", "100"}, Deltas: []int64{4, 5}, Members: []string{"5:s0", "5:s1"}, incr: 9}
	l.settle(again[0], scriptReply{})
	l.queue("f", []*batch{spilled})
	taken, _ := l.take()
	l.abandon(taken[0], bySlot)
	parts, _ := l.take()
	want := []string{"slot-of-s0: count:5:s0/100=4", "slot-of-s1: count:5:s1/100=5"}
	if got := deltas(parts); !slices.Equal(got, want) {
		t.Fatalf("spilled batch abandoned became %q, want %q", got, want)
	}
	var done []string
	for _, p := range parts {
		if p.Node || p.Seq <= again[0].Seq {
			t.Errorf("part %s: node %v, seq %d, want a per-slot batch with a fresh seq", p.Marker, p.Node, p.Seq)
		}
		f, _ := l.settle(p, scriptReply{})
		done = append(done, f)
	}
	if !slices.Equal(done, []string{"", "f"}) {
		t.Errorf("files done as the parts landed: %q, want the file once both did", done)
	}
}
