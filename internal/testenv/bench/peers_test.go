package bench

import (
	"strings"
	"testing"
)

// The peer lines compare pulse with each peer round by round, throughput
// and CPU per request, and hold pulse's CPU against the timed control.
func TestPeerGoals(t *testing.T) {
	r := &Report{}
	add := func(v Variant, rps []float64, cpu float64) {
		for round, x := range rps {
			r.Runs = append(r.Runs, RunResult{Variant: v, Round: round + 1, Load: LoadResult{RPS: x}, CPURatioToBare: cpu})
		}
	}
	add(Pulse, []float64{100, 100, 100, 100}, 1.05)
	add(EchoPrometheus, []float64{90, 95, 99, 101}, 1.10)
	add(OTel, []float64{120, 110, 105, 101}, 1.04)
	add(Timed, []float64{100, 100, 100, 100}, 1.01)
	lines := strings.Join(r.peerGoals(func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}), "\n")
	for _, want := range []string{
		"pulse ahead of echoprometheus: throughput met",
		"CPU per request met (median 0.955",
		"pulse ahead of otel: throughput MISSED",
		"pulse CPU per request <= 1.03 × timed: MISSED (pulse ÷ timed: median 1.040",
	} {
		if !strings.Contains(lines, want) {
			t.Errorf("peer lines lack %q:\n%s", want, lines)
		}
	}
}
