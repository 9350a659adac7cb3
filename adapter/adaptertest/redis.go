package adaptertest

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/timeseries"
)

// flush writes what rec holds to Redis.
func flush(t testing.TB, rec *timeseries.Recorder) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := rec.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

// do runs one command on a connection of the pool.
func (k *kit) do(t testing.TB, cmd string, args ...any) any {
	t.Helper()
	c := k.pool.Get()
	defer c.Close()
	v, err := c.Do(cmd, args...)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return v
}

// totals flushes rec and returns, for every series it lists at every
// precision of its schema, the sum of its buckets: series → precision →
// count. A series with no count at a precision is absent there.
func (k *kit) totals(t testing.TB, rec *timeseries.Recorder) map[string]map[int]int64 {
	t.Helper()
	flush(t, rec)
	schema := rec.Store().Schema()
	members, err := redis.Strings(k.do(t, "ZRANGE", schema.KnownKey(), 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[int]int64{}
	for _, m := range members {
		p, name, ok := timeseries.ParseKnownMember(m)
		if !ok {
			t.Fatalf("known member %q", m)
		}
		counts, err := redis.Int64Map(k.do(t, "HGETALL", schema.MemberKey(m)), nil)
		if err != nil {
			t.Fatal(err)
		}
		if out[name] == nil {
			out[name] = map[int]int64{}
		}
		for _, n := range counts {
			out[name][p] += n
		}
	}
	return out
}

// daily flushes rec and returns every series' total at 1 day.
func (k *kit) daily(t testing.TB, rec *timeseries.Recorder) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for name, byPrecision := range k.totals(t, rec) {
		out[name] = byPrecision[86400]
	}
	return out
}

// exact checks that every series of want counts exactly its count at
// every precision of rec's schema, and that no other series has any.
func (k *kit) exact(t testing.TB, rec *timeseries.Recorder, want map[string]int64) {
	t.Helper()
	got := k.totals(t, rec)
	precisions := rec.Store().Schema().Precisions
	for name, n := range want {
		for _, p := range precisions {
			if got[name][p] != n {
				t.Errorf("%s at %d s: %d, want %d", name, p, got[name][p], n)
			}
		}
	}
	for name, byPrecision := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("series %q counted %v, want none", name, byPrecision)
		}
	}
}

// forget deletes every key under the row's prefix.
func (k *kit) forget(t testing.TB) {
	c := k.pool.Get()
	defer c.Close()
	cursor := "0"
	for {
		v, err := redis.Values(c.Do("SCAN", cursor, "MATCH", k.prefix+"*", "COUNT", 1000))
		if err != nil {
			t.Errorf("deleting the table's keys: %v", err)
			return
		}
		keys, _ := redis.Strings(v[1], nil)
		for _, key := range keys {
			if _, err := c.Do("DEL", key); err != nil {
				t.Errorf("deleting %s: %v", key, err)
				return
			}
		}
		if cursor, _ = redis.String(v[0], nil); cursor == "0" {
			return
		}
	}
}
