package cleaner_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestPassTrims(t *testing.T) {
	tests := []struct {
		name       string
		precision  int
		past       int // buckets written up to and including the current one
		ahead      int // buckets written after the current one
		wantFields []int64
		wantListed bool
	}{
		{"under the cap is untouched", 5, 50, 0, buckets(t0, 5, 50, 0), true},
		{"130 samples keep the newest 120", 5, 130, 0, buckets(t0, 5, 120, 0), true},
		{"one-minute series", 60, 125, 0, buckets(t0, 60, 120, 0), true},
		{"day series", 86400, 121, 0, buckets(t0, 86400, 120, 0), true},
		// Fields stamped ahead of the cleaner's clock still count toward the cap.
		{"future fields count too", 5, 118, 5, buckets(t0, 5, 115, 5), true},
	}
	srv := redistest.Start(t)
	// Each case with one script call per node (Redis 7) and with one per
	// series (the fallback for older servers).
	for _, perKey := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/perKey=%v", tt.name, perKey), func(t *testing.T) {
				srv.FlushAll()
				fill(srv, "", tt.precision, "hits", buckets(t0, tt.precision, tt.past, tt.ahead))
				c := newCleaner(t, cleaner.Config{Pool: srv.Pool(), Clock: timeseries.NewManualClock(t0)})
				if perKey {
					cleaner.SetPerKey(c)
				}
				st := pass(t, c)
				key := fmt.Sprintf("count:%d:hits", tt.precision)
				if got := fields(t, srv, key); !slices.Equal(got, tt.wantFields) {
					t.Errorf("%s keeps %d fields %v…, want %d from %v", key, len(got), head(got), len(tt.wantFields), head(tt.wantFields))
				}
				if want := int64(tt.past + tt.ahead - len(tt.wantFields)); st.FieldsDeleted != want {
					t.Errorf("stats say %d fields deleted, want %d", st.FieldsDeleted, want)
				}
				if listed := slices.Contains(known(t, srv, ""), timeseries.KnownMember(tt.precision, "hits")); listed != tt.wantListed {
					t.Errorf("listed in known: = %v, want %v", listed, tt.wantListed)
				}
			})
		}
	}
}

func head(s []int64) []int64 { return s[:min(3, len(s))] }

// Fields are compared as numbers: as strings "90" sorts after "1000".
func TestPassComparesNumerically(t *testing.T) {
	srv := redistest.Start(t)
	srv.Do("HSET", "count:5:hits", "90", 1, "995", 1, "1000", 1, "note", "x")
	srv.Do("ZADD", "known:", 0, "5:hits")
	c := newCleaner(t, cleaner.Config{Pool: srv.Pool(), Samples: 2, Clock: timeseries.NewManualClock(time.Unix(1000, 0))})
	pass(t, c)
	got, _ := redis.Strings(srv.Do("HKEYS", "count:5:hits"), nil)
	slices.Sort(got)
	if want := []string{"1000", "995", "note"}; !slices.Equal(got, want) {
		t.Errorf("fields = %v, want %v (a field that is not a number is not ours to delete)", got, want)
	}
}

// Fields compare as numbers, also where the script first compares them as
// strings: with a cutoff of 1995, "200" sorts after it but is older. A
// field as long as the cutoff that sorts after it but is not a decimal
// integer is left alone, as any field Pulse does not write.
func TestFieldsCompareAsNumbers(t *testing.T) {
	tests := []struct {
		name   string
		now    int64 // the cutoff is now-5
		fields []string
		want   []string
	}{
		{"shorter but sorting after", 2000, []string{"200", "1995", "2000"}, []string{"1995", "2000"}},
		{"as long as the cutoff", 2000, []string{"1980", "1994", "1995"}, []string{"1995"}},
		{"longer with a leading zero", 2000, []string{"01994", "2000"}, []string{"2000"}},
		{"signed", 2000, []string{"+1994", "-3000", "1995"}, []string{"1995"}},
		{"not numbers", 2000, []string{"note", "1995"}, []string{"1995", "note"}},
		{"not spelled as Pulse does", 2000, []string{"19e2", "1995"}, []string{"1995", "19e2"}},
		// "-15" sorts after "-10" but is older.
		{"negative cutoff", -5, []string{"-15", "-10", "0"}, []string{"-10", "0"}},
	}
	srv := redistest.Start(t)
	for _, perKey := range []bool{false, true} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("%s/perKey=%v", tt.name, perKey), func(t *testing.T) {
				srv.FlushAll()
				args := []any{"count:5:hits"}
				for _, f := range tt.fields {
					args = append(args, f, 1)
				}
				srv.Do("HSET", args...)
				srv.Do("ZADD", "known:", 0, "5:hits")
				c := newCleaner(t, cleaner.Config{Pool: srv.Pool(), Samples: 2, Clock: timeseries.NewManualClock(time.Unix(tt.now, 0))})
				if perKey {
					cleaner.SetPerKey(c)
				}
				pass(t, c)
				got, _ := redis.Strings(srv.Do("HKEYS", "count:5:hits"), nil)
				slices.Sort(got)
				if !slices.Equal(got, tt.want) {
					t.Errorf("fields %v, want %v", got, tt.want)
				}
			})
		}
	}
}
