package dashboard_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
)

// A stopped (SIGSTOP) Redis: once the recorder's flush has failed,
// api/health says so at once, from that known state; on an idle recorder
// the probe after one that found Redis silent is quick too.
func TestHealthPausedRedis(t *testing.T) {
	tests := []struct {
		name string
		// prepare brings the state the timed probe meets.
		prepare func(t *testing.T, f *dashtest.Fixture)
		problem string
	}{
		{"flush failed", func(t *testing.T, f *dashtest.Fixture) {
			c, _ := f.Rec.Counter("hits")
			c.Inc()
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if err := f.Rec.Flush(ctx); err == nil {
				t.Fatal("flush to a paused Redis succeeded")
			}
		}, "last flush failed"},
		// Nothing failed yet: the probe's own ping must give up in time.
		{"idle recorder", func(*testing.T, *dashtest.Fixture) {}, "does not answer"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := dashtest.New(t, dashtest.Options{})
			if r := dashtest.Get(t, f.Root+"api/health"); r.Status != http.StatusOK {
				t.Fatalf("before the pause: %d %s", r.Status, r.Body)
			}
			f.Srv.Pause()
			t.Cleanup(f.Srv.Resume)
			tt.prepare(t, f)
			start := time.Now()
			r := dashtest.Get(t, f.Root+"api/health")
			took := time.Since(start)
			if r.Status != http.StatusServiceUnavailable || !strings.Contains(r.Body, tt.problem) {
				t.Errorf("paused Redis: %d %s, want 503 saying %q", r.Status, r.Body, tt.problem)
			}
			// The probe's own bound (800 ms) and room for a loaded machine,
			// well short of the request Timeout (5 s) it waits without one.
			if took > 1500*time.Millisecond {
				t.Errorf("paused Redis: the probe took %v, want an answer within 1.5 s", took)
			}
			f.Srv.Resume()
			if err := f.Rec.Flush(context.Background()); err != nil {
				t.Fatal(err)
			}
			if r := dashtest.Get(t, f.Root+"api/health"); r.Status != http.StatusOK {
				t.Errorf("Redis resumed: %d %s", r.Status, r.Body)
			}
		})
	}
}
