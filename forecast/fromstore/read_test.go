package fromstore

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestReadLast(t *testing.T) {
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(time.Unix(1700000000, 0)) // a 5 s bucket start, mid-minute
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, clock)
	if err != nil {
		t.Fatal(err)
	}
	srv.Do("HSET", "count:5:hits", "1699999990", 4, "1700000000", 2, "1699999000", 9, "1699999995", "junk")
	srv.Do("HSET", "count:60:hits", "1699999920", 7)
	srv.Do("ZADD", "known:", 0, "5:hits", 0, "60:hits")

	all, err := readLast(context.Background(), store, []string{"hits", "never"}, []int{5, 60, 3600, 7}, 3)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := all["never"]; ok || len(all) != 1 {
		t.Fatalf("read %v, want only hits", all)
	}
	got := all["hits"]
	// The last three buckets of each precision, the older ones outside
	// and a field Pulse did not write as zero; 1 h is not in the known set
	// and 7 s not in the schema: both left out.
	want := map[int]string{
		5:  "[{1699999990 4} {1699999995 0} {1700000000 2}]",
		60: "[{1699999860 0} {1699999920 7} {1699999980 0}]",
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for p, w := range want {
		if fmt.Sprint(got[p]) != w {
			t.Errorf("precision %d: %v, want %s", p, got[p], w)
		}
	}
}
