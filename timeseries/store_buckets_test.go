package timeseries_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// bucketStore is a store of the default schema on a Redis of its own.
func bucketStore(t *testing.T) (*redistest.Server, *timeseries.Store) {
	srv := redistest.Start(t)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return srv, store
}

// TestBucketsMany: each query's buckets come back in its order, absent
// ones as not present, a field that is not an integer as present with
// count zero (as Samples skips it), and an empty query reads nothing.
func TestBucketsMany(t *testing.T) {
	srv, store := bucketStore(t)
	key := store.Schema().CountKey(5, "a")
	srv.Do("HSET", key, 100, 3, 105, "-2", 110, "x", 115, "99999999999999999999")
	srv.Do("HSET", store.Schema().CountKey(5, "b"), 100, 8)
	cases := []struct {
		q       timeseries.BucketQuery
		counts  []int64
		present []bool
	}{
		{timeseries.BucketQuery{Name: "a", Times: []int64{115, 100, 95, 105, 110}}, []int64{0, 3, 0, -2, 0}, []bool{true, true, false, true, true}},
		{timeseries.BucketQuery{Name: "none", Times: []int64{100}}, []int64{0}, []bool{false}},
		{timeseries.BucketQuery{Name: "b"}, nil, nil},
		{timeseries.BucketQuery{Name: "b", Times: []int64{100}}, []int64{8}, []bool{true}},
	}
	queries := make([]timeseries.BucketQuery, len(cases))
	for i, c := range cases {
		queries[i] = c.q
	}
	before := srv.Calls("hmget")
	got, err := store.BucketsMany(context.Background(), 5, queries)
	if err != nil {
		t.Fatal(err)
	}
	if n := srv.Calls("hmget") - before; n != 3 {
		t.Errorf("%d HMGETs, want 3: none for the empty query", n)
	}
	for i, c := range cases {
		if !slices.Equal(got[i].Counts, c.counts) || !slices.Equal(got[i].Present, c.present) {
			t.Errorf("%v: got %v %v, want %v %v", c.q, got[i].Counts, got[i].Present, c.counts, c.present)
		}
	}
}

// TestBucketsManyErrors: a precision the schema lacks and a key Redis
// refuses are errors, named as the store's.
func TestBucketsManyErrors(t *testing.T) {
	srv, store := bucketStore(t)
	srv.Do("SET", store.Schema().CountKey(5, "s"), "x")
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
}
