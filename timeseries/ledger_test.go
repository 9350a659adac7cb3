package timeseries

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// testLedger is a ledger over series s0, s1, ... whose count key at
// precision i is in flush group groups[s][i]; a group's marker is "m<g>".
func testLedger(precisions []int, groups ...[]int) *ledger {
	l := newLedger(series.Keys{Precisions: precisions}, 600, func(g int) (string, bool) { return fmt.Sprintf("m%d", g), false }, nil)
	for s, gs := range groups {
		var k seriesKeys
		for i, p := range precisions {
			name := fmt.Sprintf("s%d", s)
			k.keys = append(k.keys, fmt.Sprintf("count:%d:%s", p, name))
			k.members = append(k.members, series.Member(p, name))
			k.groups = append(k.groups, gs[i])
		}
		l.addSeries(k)
	}
	return l
}

// deltas describes batches as "marker: key/field=delta ..." lines,
// sorted, so that map order does not matter.
func deltas(batches []*batch) []string {
	var out []string
	for _, b := range batches {
		var ds []string
		for i := range b.Keys {
			ds = append(ds, fmt.Sprintf("%s/%s=%d", b.Keys[i], b.Fields[i], b.Deltas[i]))
		}
		slices.Sort(ds)
		out = append(out, b.Marker+": "+strings.Join(ds, " "))
	}
	slices.Sort(out)
	return out
}

type hit struct {
	series int32
	sec, n int64
}

func TestLedgerTakeGroupsPerSlot(t *testing.T) {
	tests := []struct {
		name   string
		groups [][]int // per series, per precision
		hits   []hit
		want   []string
	}{
		{
			name:   "one server: one batch for every series and precision",
			groups: [][]int{{0, 0}, {0, 0}},
			hits:   []hit{{0, 100, 2}, {0, 104, 1}, {1, 100, 5}},
			want: []string{
				"m0: count:5:s0/100=3 count:5:s1/100=5 count:60:s0/60=3 count:60:s1/60=5",
			},
		},
		{
			name:   "cluster: one batch per slot",
			groups: [][]int{{7, 9}, {9, 9}},
			hits:   []hit{{0, 100, 2}, {1, 106, 1}},
			want: []string{
				"m7: count:5:s0/100=2",
				"m9: count:5:s1/105=1 count:60:s0/60=2 count:60:s1/60=1",
			},
		},
		{
			name:   "seconds apart land in their own buckets",
			groups: [][]int{{0, 0}},
			hits:   []hit{{0, 59, 1}, {0, 60, 1}},
			want: []string{
				"m0: count:5:s0/55=1 count:5:s0/60=1 count:60:s0/0=1 count:60:s0/60=1",
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := testLedger([]int{5, 60}, tt.groups...)
			var total int64
			for _, h := range tt.hits {
				l.add(h.series, h.sec, h.n)
				total += 2 * h.n
			}
			out, leftover := l.take()
			if got := deltas(out); !slices.Equal(got, tt.want) {
				t.Errorf("batches\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			if leftover || len(l.pending) != 0 {
				t.Errorf("leftover %v, %d pending entries: want all taken", leftover, len(l.pending))
			}
			if got := l.unsettledIncr(); got != total {
				t.Errorf("unsettled %d increments, want %d", got, total)
			}
			seqs := map[int64]bool{}
			for _, b := range out {
				if l.outstanding[b.Marker] != b || seqs[b.Seq] {
					t.Errorf("batch %s/%d not outstanding under its marker, or its seq repeats", b.Marker, b.Seq)
				}
				seqs[b.Seq] = true
			}
		})
	}
}

// A full batch leaves the rest pending for the next round.
func TestLedgerTakeFullBatch(t *testing.T) {
	l := testLedger([]int{1}, []int{0})
	for sec := range int64(maxBatchDeltas + 1) {
		l.add(0, sec, 1)
	}
	out, leftover := l.take()
	if len(out) != 1 || len(out[0].Keys) != maxBatchDeltas || !leftover || len(l.pending) != 1 {
		t.Fatalf("%d batches, leftover %v, %d pending: want one full batch and one hit left", len(out), leftover, len(l.pending))
	}
	l.settle(out[0], scriptReply{})
	if out, leftover = l.take(); len(out) != 1 || len(out[0].Keys) != 1 || leftover {
		t.Errorf("next round: %d batches, leftover %v: want the one hit left", len(out), leftover)
	}
}

// While a marker's batch is in flight its group takes no new batch: the
// same batch is sent again, and the new hits wait.
func TestLedgerOneBatchPerMarkerInFlight(t *testing.T) {
	tests := []struct {
		name     string
		groups   [][]int
		wantNew  []string // batches of the second take besides the resent one
		wantLeft bool
	}{
		{"one server", [][]int{{0, 0}, {0, 0}}, nil, true},
		{"other slot goes on", [][]int{{0, 0}, {1, 1}}, []string{"m1: count:5:s1/200=1 count:60:s1/180=1"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := testLedger([]int{5, 60}, tt.groups...)
			l.add(0, 100, 1)
			first, _ := l.take()
			if len(first) != 1 {
				t.Fatalf("first take: %d batches, want 1", len(first))
			}
			l.add(0, 200, 1)
			l.add(1, 200, 1)
			out, leftover := l.take()
			if len(out) == 0 || out[0] != first[0] {
				t.Fatalf("second take does not resend the batch in flight first: %v", deltas(out))
			}
			if got := deltas(out[1:]); !slices.Equal(got, tt.wantNew) || leftover != tt.wantLeft {
				t.Errorf("new batches %v leftover %v, want %v leftover %v", got, leftover, tt.wantNew, tt.wantLeft)
			}
			l.settle(first[0], scriptReply{})
			out, _ = l.take()
			for _, b := range out {
				if b.Marker == first[0].Marker && b.Seq <= first[0].Seq {
					t.Errorf("after settling, marker %s took seq %d, want after %d", b.Marker, b.Seq, first[0].Seq)
				}
			}
			if len(l.pending) != 0 {
				t.Errorf("after settling, %d entries still pending", len(l.pending))
			}
		})
	}
}

func TestLedgerSettle(t *testing.T) {
	tests := []struct {
		name        string
		refused     []int64
		wantDropped int64
		wantKeys    []string
	}{
		{"applied", nil, 0, nil},
		{"one key refused", []int64{2}, 3, []string{"count:60:s0"}},
		{"known set refused", []int64{3}, 0, []string{"known:"}},
		{"index out of range", []int64{0, 4}, 0, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := testLedger([]int{5, 60}, []int{0, 0})
			l.add(0, 100, 3)
			out, _ := l.take()
			file, keys := l.settle(out[0], readReply(out[0], append([]int64{statusApplied}, tt.refused...)))
			if file != "" || !slices.Equal(keys, tt.wantKeys) || l.dropped != tt.wantDropped {
				t.Errorf("settle = %q %v, dropped %d; want no file, %v, dropped %d", file, keys, l.dropped, tt.wantKeys, tt.wantDropped)
			}
			if len(l.outstanding) != 0 || l.unsettledIncr() != 0 {
				t.Errorf("after settle: %d outstanding, %d increments unsettled", len(l.outstanding), l.unsettledIncr())
			}
		})
	}
}

// A failed send of a batch that may have landed keeps the batch exactly
// as it is; one that surely did not goes back to pending, unless an
// earlier send may have landed or it came from a spill file.
func TestLedgerFail(t *testing.T) {
	tests := []struct {
		name     string
		fails    []bool // maybeLanded of each failed send, in order
		spilled  bool
		wantSame bool // the next take resends the same batch
	}{
		{"lost reply: resent unchanged", []bool{true}, false, true},
		{"error reply: back to pending", []bool{false}, false, false},
		{"error reply after a lost one: resent unchanged", []bool{true, false}, false, true},
		{"error reply of a spilled batch: resent unchanged", []bool{false}, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := testLedger([]int{5, 60}, []int{0, 0})
			if tt.spilled {
				l.queue("a.spill", []*batch{{Marker: "m0", Seq: 4, Keys: []string{"k"}, Fields: []string{"100"}, Deltas: []int64{2}, Members: []string{"5:k"}, incr: 2}})
			} else {
				l.add(0, 100, 2)
			}
			out, _ := l.take()
			b := out[0]
			before := deltas(out)
			for _, maybe := range tt.fails {
				l.fail(b, maybe)
			}
			l.add(0, 107, 1) // recorded meanwhile
			again, _ := l.take()
			if same := again[0] == b; same != tt.wantSame {
				t.Fatalf("next take resends the same batch: %v, want %v", same, tt.wantSame)
			}
			if tt.wantSame {
				if got := deltas(again[:1]); !slices.Equal(got, before) || again[0].Seq != b.Seq || len(again) != 1 {
					t.Errorf("resent %v seq %d (of %d batches), want %v seq %d alone", got, again[0].Seq, len(again), before, b.Seq)
				}
				return
			}
			want := []string{"m0: count:5:s0/100=2 count:5:s0/105=1 count:60:s0/60=3"}
			if got := deltas(again); !slices.Equal(got, want) || again[0].Seq <= b.Seq {
				t.Errorf("rebuilt %v seq %d, want %v after seq %d", got, again[0].Seq, want, b.Seq)
			}
		})
	}
}

// Hits older than maxAge are dropped, counted by the increments still
// due; batches of this process go too, spilled ones are kept.
func TestLedgerAge(t *testing.T) {
	const now = 10000 // the cutoff is now-600
	tests := []struct {
		name        string
		setup       func(l *ledger)
		wantDropped int64
		wantLeft    int64 // increments still unsettled
	}{
		{"pending just young enough", func(l *ledger) { l.add(0, now-600, 2) }, 0, 4},
		{"pending too old", func(l *ledger) { l.add(0, now-601, 2); l.add(0, now, 1) }, 4, 2},
		{"pending due at one precision only", func(l *ledger) {
			l.pending[pendingKey{counter: 0, sec: now - 700, due: 2}] = 3
		}, 3, 0},
		{"outstanding batch too old", func(l *ledger) { l.add(0, now-700, 2); l.take() }, 4, 0},
		{"outstanding batch with a young hit", func(l *ledger) { l.add(0, now-700, 2); l.add(0, now-5, 1); l.take() }, 0, 6},
		{"spilled batch kept", func(l *ledger) {
			l.queue("a.spill", []*batch{{Marker: "m9", Seq: 1, Keys: []string{"k"}, Fields: []string{"0"}, Deltas: []int64{5}, Members: []string{"5:k"}, incr: 5}})
			l.take()
		}, 0, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := testLedger([]int{5, 60}, []int{0, 0})
			tt.setup(l)
			l.age(now)
			if l.dropped != tt.wantDropped || l.unsettledIncr() != tt.wantLeft {
				t.Errorf("dropped %d, %d left; want %d dropped, %d left", l.dropped, l.unsettledIncr(), tt.wantDropped, tt.wantLeft)
			}
		})
	}
}

// Spilled batches go out one per marker, in seq order, and their file is
// done once the last is settled.
func TestLedgerQueuedSpill(t *testing.T) {
	l := testLedger([]int{5}, []int{0})
	mk := func(m string, seq int64) *batch {
		return &batch{Marker: m, Seq: seq, Keys: []string{"k"}, Fields: []string{"0"}, Deltas: []int64{1}, Members: []string{"5:k"}, incr: 1}
	}
	l.queue("a.spill", []*batch{mk("x", 2), mk("y", 1), mk("x", 1)})
	// x/1 fails once with its outcome unknown: x/2 must wait behind it.
	rounds := []struct {
		want  []string
		files []string
	}{{[]string{"x/1", "y/1"}, nil}, {[]string{"x/1"}, nil}, {[]string{"x/2"}, []string{"a.spill"}}}
	for i, round := range rounds {
		out, _ := l.take()
		var got, files []string
		for _, b := range out {
			got = append(got, fmt.Sprintf("%s/%d", b.Marker, b.Seq))
			if i == 0 && b.Marker == "x" {
				l.fail(b, true)
				continue
			}
			if file, _ := l.settle(b, scriptReply{}); file != "" {
				files = append(files, file)
			}
		}
		slices.Sort(got)
		if !slices.Equal(got, round.want) || !slices.Equal(files, round.files) {
			t.Errorf("round %d sent %v finishing files %v, want %v and %v", i, got, files, round.want, round.files)
		}
	}
	if len(l.queued) != 0 || len(l.outstanding) != 0 || len(l.spillLeft) != 0 {
		t.Error("spilled batches left after all were settled")
	}
}

// The hand-off to a spill takes everything and leaves the ledger empty:
// unsettled batches as they are, pending in new batches numbered after
// them, each marker's batches in seq order.
func TestLedgerHandOff(t *testing.T) {
	l := testLedger([]int{5, 60}, []int{0, 0}, []int{1, 1})
	l.queue("old.spill", []*batch{
		{Marker: "old", Seq: 51, Keys: []string{"k"}, Fields: []string{"0"}, Deltas: []int64{7}, Members: []string{"5:k"}, incr: 7},
		{Marker: "old", Seq: 50, Keys: []string{"k"}, Fields: []string{"0"}, Deltas: []int64{1}, Members: []string{"5:k"}, incr: 1},
	})
	l.add(1, 100, 1)
	sent, _ := l.take() // old/50 and m1/1 in flight
	for _, b := range sent {
		l.fail(b, true)
	}
	l.add(0, 100, 1)
	l.add(0, 200, 2)
	l.add(1, 200, 2)
	all, files := l.handOff()
	var got []string
	var incr int64
	for _, b := range all {
		got = append(got, fmt.Sprintf("%s/%d", b.Marker, b.Seq))
		incr += b.incr
	}
	// m0's new batch is numbered 2 or 3 by map order; m1's new one must
	// follow m1/1.
	if want := []string{"m0/", "m1/1", "m1/", "old/50", "old/51"}; len(got) != len(want) || !prefixes(got, want) {
		t.Errorf("handed off %v, want %v", got, want)
	}
	for i := 1; i < len(all); i++ {
		if a, b := all[i-1], all[i]; a.Marker == b.Marker && a.Seq >= b.Seq {
			t.Errorf("batches out of order: %v", got)
		}
	}
	if want := int64(8 + 1*2 + 3*2 + 2*2); incr != want {
		t.Errorf("handed off %d increments, want %d", incr, want)
	}
	if !slices.Equal(files, []string{"old.spill"}) {
		t.Errorf("files %v, want old.spill", files)
	}
	if l.unsettledIncr() != 0 || len(l.spillLeft) != 0 || len(l.outstanding) != 0 {
		t.Errorf("ledger not empty after the hand-off: %d increments", l.unsettledIncr())
	}
}

func prefixes(got, want []string) bool {
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			return false
		}
	}
	return true
}
