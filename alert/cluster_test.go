package alert

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// writeRouted stores tr through a router, each key on the node that
// serves it, under prefix.
func (tr traffic) writeRouted(t *testing.T, r *redisconn.Router, prefix string) {
	t.Helper()
	hashes := make(map[string]map[string]int64, len(tr))
	for key, buckets := range tr {
		hashes[prefix+key] = buckets
	}
	writeRoutedHashes(t, r, hashes, prefix)
}

// writeRoutedHashes stores hashes through a router; with a known prefix
// (the schema's plus "count:"), it lists their series in the known set.
func writeRoutedHashes(t *testing.T, r *redisconn.Router, hashes map[string]map[string]int64, known string) {
	t.Helper()
	var cmds []redisconn.Cmd
	for key, fields := range hashes {
		args := []any{key}
		for f, n := range fields {
			args = append(args, f, n)
		}
		cmds = append(cmds, redisconn.Cmd{Key: key, Name: "HSET", Args: args})
		if member, ok := strings.CutPrefix(key, known+"count:"); ok {
			cmds = append(cmds, redisconn.Cmd{Key: known + "known:", Name: "ZADD", Args: []any{known + "known:", 0, member}})
		}
	}
	for _, rep := range r.Do(cmds, redisconn.Options{Timeout: 10 * time.Second}) {
		if rep.Err != nil {
			t.Fatal(rep.Err)
		}
	}
}

// TestCluster: on a Redis Cluster the series of the routes spread over
// the masters; the reads (counts and durations), the lease and the
// state scripts work there as on one server, with the same burn rates.
func TestCluster(t *testing.T) {
	c := redistest.SharedCluster(t)
	c.Reset(t)
	client := c.Client(t)
	tr := steadyTraffic("GET /posts/:id", 10, 50)
	for k, v := range steadyTraffic("GET /users/:id", 0, 0) {
		tr[k] = v
	}
	for k, v := range steadyTraffic(App, 10, 50) {
		tr[k] = v
	}
	tr.writeRouted(t, redisconn.NewRouter(client), "ct:")
	tm := slowBurst("GET /posts/:id", 10)
	for k, v := range slowBurst("GET /users/:id", 0) {
		tm[k] = v
	}
	writeRoutedHashes(t, redisconn.NewRouter(client), tm.hashes("ct:"), "")
	clock := timeseries.NewManualClock(time.Unix(burnNow, 0))
	e, err := New(Config{Pool: client, Schema: timeseries.Schema{Prefix: "ct:"}, Clock: clock, Instance: "a",
		Rules: []Rule{{Name: "SLO", Kind: Availability, Series: App}, {Name: "RouteSLO", Kind: Availability, Series: EveryRoute},
			{Name: "RouteLatency", Kind: Latency, Series: EveryRoute, Threshold: Duration(500 * time.Millisecond)}}})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close(context.Background())
	e.tick(context.Background())
	if h := e.Health(); !h.Leader || h.LastError != "" {
		t.Fatalf("%+v", h)
	}
	states, _, err := e.st.load(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]State{
		"SLO\x00page\x00hits": Firing, "SLO\x00ticket\x00hits": Firing,
		"RouteSLO\x00page\x00GET /posts/:id": Firing, "RouteSLO\x00page\x00GET /users/:id": Inactive,
		"RouteLatency\x00page\x00GET /posts/:id": Firing, "RouteLatency\x00page\x00GET /users/:id": Inactive,
	} {
		s := states[key]
		if s == nil || s.State != want {
			t.Errorf("%q: %+v, want %s", key, s, want)
		}
	}
	if s := states["SLO\x00page\x00hits"]; s != nil && (s.Value < 83.33 || s.Value > 83.34) {
		t.Errorf("page burn %v, want 83.33 as on one server", s.Value)
	}
	if s := states["RouteLatency\x00page\x00GET /posts/:id"]; s != nil && (s.Value < 16.66 || s.Value > 16.67) {
		t.Errorf("latency page burn %v, want 16.67 as on one server", s.Value)
	}
}
