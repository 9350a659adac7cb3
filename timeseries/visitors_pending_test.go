package timeseries

import (
	"testing"

	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// Pending ids are bounded: past maxPendingVisitors, or older than the
// cutoff, an id is dropped and counted, never kept without bound.
func TestVisitorPendingBounds(t *testing.T) {
	schema, err := series.Keys{}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	c := &Counter{id: 1, name: "hits"}
	counters := []*Counter{{id: 0, name: "other"}, c}
	const now = 1800000000
	tests := []struct {
		name        string
		npending    int64 // already pending
		sec, cutoff int64
		wantDropped int64
		wantPending int64 // added
	}{
		{"room", 0, now, now - 900, 0, 4},
		{"over the cap", maxPendingVisitors - 3, now, now - 900, 1, 0},
		{"older than the cutoff", 0, now - 901, now - 900, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := newVisitorState(visitorEnv{schema: schema})
			u.npending = tt.npending
			s := &u.stripes[0]
			s.add(c.id, series.BucketStart(tt.sec, int(u.step)), tt.sec, 42)
			u.drain(new([numStripes]stripeLock), schema, tt.cutoff, counters)
			if u.dropped != tt.wantDropped || u.npending-tt.npending != tt.wantPending {
				t.Errorf("dropped %d, pending +%d; want %d, +%d", u.dropped, u.npending-tt.npending, tt.wantDropped, tt.wantPending)
			}
		})
	}
	// A key left pending ages out once its newest id passes the cutoff.
	u := newVisitorState(visitorEnv{schema: schema})
	u.stripes[0].add(c.id, series.BucketStart(now, int(u.step)), now, 42)
	u.drain(new([numStripes]stripeLock), schema, now-900, counters)
	u.drain(new([numStripes]stripeLock), schema, now+1, counters)
	if len(u.pending) != 0 || u.npending != 0 || u.dropped != 4 {
		t.Errorf("after aging: %d keys, %d pending, %d dropped; want 0, 0, 4", len(u.pending), u.npending, u.dropped)
	}
}
