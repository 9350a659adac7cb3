package cleaner_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// notCleaner are the commands a pass never sends that still show in
// INFO commandstats: the test's own, the cluster client's, replication's.
var notCleaner = []string{"info", "config|", "cluster|", "replconf", "ping", "command", "client|", "readonly"}

// cleanerCommands is how many commands the pass ran on s between two
// readings of redistest.Server.Commands, and how many of them were
// EVALSHA or EVAL.
func cleanerCommands(before, after map[string]int) (all, scripts int64) {
	for name, n := range after {
		if slices.ContainsFunc(notCleaner, func(p string) bool { return strings.HasPrefix(name, p) }) {
			continue
		}
		all += int64(n - before[name])
		if name == "evalsha" || name == "eval" {
			scripts += int64(n - before[name])
		}
	}
	return all, scripts
}

// writeSeries writes, for each name and precision, the oldest to-from of
// the newest to buckets at t0 and, when from is 0, lists the series;
// through a Router, one pipeline per node, each waiting for replicas
// acknowledgements.
func writeSeries(tb testing.TB, pool timeseries.Pool, replicas int, names []string, from, to int) {
	tb.Helper()
	schema, _ := timeseries.Schema{}.Normalize()
	r := redisconn.NewRouter(pool)
	var cmds []redisconn.Cmd
	for _, name := range names {
		for _, p := range schema.Precisions {
			key := schema.CountKey(p, name)
			args := []any{key}
			for _, ts := range buckets(t0, p, to, 0)[:to-from] {
				args = append(args, ts, 1)
			}
			cmds = append(cmds, redisconn.Cmd{Key: key, Name: "HSET", Args: args})
			if from == 0 {
				known := schema.KnownKey()
				cmds = append(cmds, redisconn.Cmd{Key: known, Name: "ZADD", Args: []any{known, 0, timeseries.KnownMember(p, name)}})
			}
		}
	}
	for i, rep := range r.Do(cmds, redisconn.Options{WaitReplicas: replicas, Timeout: harness.Hang}) {
		if rep.Err != nil {
			tb.Fatalf("write %v: %v", cmds[i].Args[0], rep.Err)
		}
	}
}

// A full pass costs two commands per hash (HKEYS, and HDEL since each
// has old fields) plus a script call per node and a page read per 1000
// hashes, and a round trip per 1000 hashes, each node served once in it.
// Every hash keeps exactly its newest 120 buckets.
func TestPassCommandsAndRoundTrips(t *testing.T) {
	srv := redistest.Start(t)
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	tests := []struct {
		name     string
		pool     timeseries.Pool
		replicas int
		nodes    []*redistest.Server
		do       func(key, cmd string, args ...any) any
	}{
		{"server", srv.Pool(), 0, []*redistest.Server{srv}, func(_, cmd string, args ...any) any { return srv.Do(cmd, args...) }},
		{"cluster", cl.Client(t), 1, cl.Masters(), func(key, cmd string, args ...any) any { return cl.Do(t, key, cmd, args...) }},
	}
	const numNames = 500
	names := make([]string, numNames)
	for i := range names {
		names[i] = fmt.Sprintf("GET /count/%d", i)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			writeSeries(t, tt.pool, tt.replicas, names, 0, 130)
			c := newCleaner(t, cleaner.Config{Pool: tt.pool, Clock: timeseries.NewManualClock(t0)})
			before := make([]map[string]int, len(tt.nodes))
			for i, s := range tt.nodes {
				before[i] = s.Commands()
			}
			st := pass(t, c)
			hashes := numNames * 6
			pages := (hashes + 999) / 1000
			var total int64
			for i, s := range tt.nodes {
				all, scripts := cleanerCommands(before[i], s.Commands())
				total += all
				// NOSCRIPT once per node, then the source: one more call;
				// and the incident trims, at most two calls per precision.
				if scripts > int64(pages)+3+12 {
					t.Errorf("node %s: %d script calls for %d pages", s.Addr, scripts, pages)
				}
			}
			t.Logf("%d hashes: %d commands (%.4f a hash), %d round trips", hashes, total, float64(total)/float64(hashes), st.RoundTrips)
			// Per node and page (and one more for the empty page after
			// a full one) a script call and on one node a page read;
			// once per node NOSCRIPT; the lock and its release: 5; the
			// incident trim of each of the six precisions, with its
			// NOSCRIPT the first time, and the two reads it makes of an
			// empty record: 24.
			if limit := int64(2*hashes + (pages+1)*(len(tt.nodes)+1) + len(tt.nodes) + 5 + 24); total > limit {
				t.Errorf("%d commands for %d hashes, want at most %d", total, hashes, limit)
			}
			if st.RoundTrips > pages+3 {
				t.Errorf("%d round trips for %d hashes", st.RoundTrips, hashes)
			}
			if st.Series != hashes || st.FieldsDeleted != int64(hashes*10) || st.Deferred != 0 {
				t.Errorf("stats %+v, want %d series, %d fields deleted", st, hashes, hashes*10)
			}
			for i, name := range names {
				if i%25 != 0 {
					continue
				}
				for _, p := range []int{5, 3600, 86400} {
					key := fmt.Sprintf("count:%d:%s", p, name)
					if got := sortedFields(t, tt.do(key, "HKEYS", key)); !slices.Equal(got, buckets(t0, p, 120, 0)) {
						t.Errorf("%s keeps %d fields %v…, want the newest 120", key, len(got), head(got))
					}
				}
			}
		})
	}
}

func sortedFields(t *testing.T, v any) []int64 {
	t.Helper()
	fs, err := redis.Strings(v, nil)
	if err != nil {
		t.Fatal(err)
	}
	out := make([]int64, len(fs))
	for i, f := range fs {
		if out[i], err = strconv.ParseInt(f, 10, 64); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(out)
	return out
}
