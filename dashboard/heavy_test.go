package dashboard_test

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// heavyResult is what testdata/heavyreads prints.
type heavyResult struct {
	PeakRSS      int64   `json:"peak_rss_bytes"`
	SlowestMilli float64 `json:"slowest_ms"`
	Statuses     []int   `json:"statuses"`
	BodyBytes    int     `json:"body_bytes"`
}

// runHeavyReads builds testdata/heavyreads (without -race, so the peak is
// the dashboard's) and runs it against srv.
func runHeavyReads(t *testing.T, srv *redistest.Server, env ...string) heavyResult {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "heavyreads")
	if out, err := exec.Command("go", "build", "-o", bin, "./testdata/heavyreads").CombinedOutput(); err != nil {
		t.Fatalf("build heavyreads: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(append(os.Environ(), "REDIS_ADDR="+srv.Addr), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("heavyreads: %v\n%s", err, out)
	}
	var r heavyResult
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("heavyreads printed %q: %v", out, err)
	}
	return r
}

// TestHeavyOverviewReads: sixteen concurrent overview reads of the
// heaviest legal kind (120 buckets, 24 busiest and 24 pinned series, over
// the recorder's cap of 1000 series, each with 120 full buckets) stay
// under 100 MiB RSS and answer within 2 s.
func TestHeavyOverviewReads(t *testing.T) {
	srv := redistest.Start(t)
	schema := timeseries.Schema{}
	conn := srv.Pool().Get()
	defer conn.Close()
	current := timeseries.BucketStart(time.Now().Unix(), 5)
	for i := range 1000 { // the default MaxNames
		name := fmt.Sprintf("GET /route/%04d", i)
		args := []any{schema.CountKey(5, name)}
		for b := range int64(130) { // more than the window: the read must pick
			args = append(args, current-b*5, 1000+i)
		}
		if err := conn.Send("HSET", args...); err != nil {
			t.Fatal(err)
		}
		if err := conn.Send("ZADD", "known:", 0, timeseries.KnownMember(5, name)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := redis.DoWithTimeout(conn, harness.Hang, ""); err != nil {
		t.Fatal(err)
	}

	// Identical reads, as the open dashboards of a team poll one view,
	// share one read: the case, bounded in memory and time.
	// Distinct windows cannot share; ConcurrentReads bounds their memory.
	for _, tc := range []struct {
		name     string
		env      []string
		timeWant bool
	}{
		{"identical", nil, true},
		// Distinct reads are measured for memory, not time: on a loaded
		// machine the last turns may wait past the default 5 s timeout.
		{"distinct", []string{"DISTINCT=1", "TIMEOUT=1m"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := runHeavyReads(t, srv, tc.env...)
			t.Logf("16 concurrent heaviest overview reads (%s): peak RSS %.1f MiB, slowest answer %.0f ms, %d bytes each",
				tc.name, float64(r.PeakRSS)/(1<<20), r.SlowestMilli, r.BodyBytes)
			for _, s := range r.Statuses {
				if s != 200 {
					t.Errorf("statuses %v, want 16 × 200", r.Statuses)
					break
				}
			}
			if len(r.Statuses) != 16 || r.BodyBytes < 100_000 {
				t.Errorf("%d answers of up to %d bytes: the reads did not read the series", len(r.Statuses), r.BodyBytes)
			}
			if r.PeakRSS >= 100<<20 {
				t.Errorf("peak RSS %.1f MiB, want under 100 MiB", float64(r.PeakRSS)/(1<<20))
			}
			if tc.timeWant && r.SlowestMilli >= 2000 {
				t.Errorf("slowest answer %.0f ms, want under 2 s", r.SlowestMilli)
			}
		})
	}
}
