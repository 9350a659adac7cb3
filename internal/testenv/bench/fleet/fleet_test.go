package fleet_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/bench/fleet"
)

// TestSmallFleet runs two instances of five routes against a private
// server and a private cluster: every series is written (the hits series
// in Redis holds every request), the flushes hold, and the measured window
// saw commands, round trips and bytes.
func TestSmallFleet(t *testing.T) {
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Skip("redis-server not installed")
	}
	for _, cluster := range []bool{false, true} {
		ctx := context.Background()
		target, err := fleet.StartTarget(ctx, cluster)
		if err != nil {
			t.Fatal(err)
		}
		defer target.Stop()
		r, err := fleet.Run(ctx, fleet.Config{Addrs: target.Addrs, Cluster: target.Cluster, Instances: 2, Routes: 5,
			RPS: 200, Warmup: 1500 * time.Millisecond, Window: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		fleet.WriteTable(&b, "smoke", []fleet.Result{r})
		t.Logf("cluster %v:\n%s", cluster, b.String())
		// Each instance made each route and at least its 2xx class, the
		// hits series and its 2xx class.
		if min := 2 * (2*5 + 2); r.Series < min {
			t.Errorf("%d series, want at least %d", r.Series, min)
		}
		if r.Commands <= 0 || r.RoundTrips <= 0 || r.BytesIn <= 0 || r.Memory <= 0 || r.Keys < 6*5 {
			t.Errorf("window saw nothing: %+v", r)
		}
		// Flushes run every second on both instances: at least one a
		// second each, wherever the keys live.
		if nodes := float64(len(target.Addrs)); r.RoundTrips < 2*0.5 || r.RoundTrips > 2*nodes*20 {
			t.Errorf("%.1f round trips a second for 2 instances on %v nodes", r.RoundTrips, nodes)
		}
	}
}
