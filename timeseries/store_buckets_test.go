package timeseries_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// bucketTarget is a Redis to read buckets from: a server or a cluster,
// with a way to run a command on the node of a key and to count the
// calls of a command.
type bucketTarget struct {
	name  string
	start func(t *testing.T) (timeseries.Pool, func(key, cmd string, args ...any) any, func(cmd string) int)
}

var bucketTargets = []bucketTarget{
	{"server", func(t *testing.T) (timeseries.Pool, func(string, string, ...any) any, func(string) int) {
		srv := redistest.Start(t)
		do := func(_, cmd string, args ...any) any { return srv.Do(cmd, args...) }
		return srv.Pool(), do, srv.Calls
	}},
	{"cluster", func(t *testing.T) (timeseries.Pool, func(string, string, ...any) any, func(string) int) {
		cl := redistest.SharedCluster(t)
		cl.Reset(t)
		do := func(key, cmd string, args ...any) any { return cl.Do(t, key, cmd, args...) }
		calls := func(cmd string) int {
			n := 0
			for _, m := range cl.Masters() {
				n += m.Calls(cmd)
			}
			return n
		}
		return cl.Client(t), do, calls
	}},
}

// store starts the target and returns a store of the default schema on it.
func (b bucketTarget) store(t *testing.T) (*timeseries.Store, func(key, cmd string, args ...any) any, func(cmd string) int) {
	pool, do, calls := b.start(t)
	store, err := timeseries.NewStore(pool, timeseries.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return store, do, calls
}

// TestBucketsMany: each query's buckets come back in its order, absent
// ones as not present, a field that is not an integer as present with
// count zero (as Samples skips it), and an empty query reads nothing.
func TestBucketsMany(t *testing.T) {
	for _, target := range bucketTargets {
		t.Run(target.name, func(t *testing.T) {
			store, do, calls := target.store(t)
			a, b := store.Schema().CountKey(5, "a"), store.Schema().CountKey(5, "b")
			do(a, "HSET", a, 100, 3, 105, "-2", 110, "x", 115, "99999999999999999999", 120, "")
			do(b, "HSET", b, 100, 8)
			cases := []struct {
				q       timeseries.BucketQuery
				counts  []int64
				present []bool
			}{
				{timeseries.BucketQuery{Name: "a", Times: []int64{115, 100, 95, 105, 110, 120}}, []int64{0, 3, 0, -2, 0, 0}, []bool{true, true, false, true, true, true}},
				{timeseries.BucketQuery{Name: "none", Times: []int64{100}}, []int64{0}, []bool{false}},
				{timeseries.BucketQuery{Name: "b"}, nil, nil},
				{timeseries.BucketQuery{Name: "b", Times: []int64{100}}, []int64{8}, []bool{true}},
			}
			queries := make([]timeseries.BucketQuery, len(cases))
			for i, c := range cases {
				queries[i] = c.q
			}
			before := calls("hmget")
			got, err := store.BucketsMany(context.Background(), 5, queries)
			if err != nil {
				t.Fatal(err)
			}
			if n := calls("hmget") - before; n != 3 {
				t.Errorf("%d HMGETs, want 3: none for the empty query", n)
			}
			for i, c := range cases {
				if !slices.Equal(got[i].Counts, c.counts) || !slices.Equal(got[i].Present, c.present) {
					t.Errorf("%v: got %v %v, want %v %v", c.q, got[i].Counts, got[i].Present, c.counts, c.present)
				}
			}
		})
	}
}

// TestBucketsManyErrors: a precision the schema lacks and a key Redis
// refuses are errors, named as the store's.
func TestBucketsManyErrors(t *testing.T) {
	for _, target := range bucketTargets {
		t.Run(target.name, func(t *testing.T) {
			store, do, _ := target.store(t)
			key := store.Schema().CountKey(5, "s")
			do(key, "SET", key, "x")
			cases := []struct {
				p    int
				name string
				want string
			}{
				{7, "a", "precision"},
				{5, "s", "timeseries: buckets many: WRONGTYPE"},
			}
			for _, c := range cases {
				_, err := store.BucketsMany(context.Background(), c.p, []timeseries.BucketQuery{{Name: c.name, Times: []int64{100}}})
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Errorf("precision %d, %q: error %v, want one saying %q", c.p, c.name, err, c.want)
				}
			}
		})
	}
}
