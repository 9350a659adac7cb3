package bench

import "fmt"

// peers are the other ways to monitor an Echo app that pulse is held
// against: it must be ahead of each in throughput and in CPU per request.
var peers = []Variant{EchoPrometheus, OTel}

// pairedCPURatios is a's CPU per request over b's in each round that ran
// both.
func (r *Report) pairedCPURatios(a, b Variant) []float64 {
	var out []float64
	for _, x := range r.roundRuns(a) {
		for _, y := range r.roundRuns(b) {
			if x.Round == y.Round && y.CPURatioToBare > 0 {
				out = append(out, x.CPURatioToBare/y.CPURatioToBare)
			}
		}
	}
	return out
}

// peerGoals are pulse's lines against each peer that ran, and against
// the timed control: pulse's CPU per request at most 3 % above what two
// clock reads and an atomic add cost. A goal missed by less than its own
// 90 % interval counts as met.
func (r *Report) peerGoals(verdict func(bool) string) []string {
	var out []string
	for _, p := range peers {
		rps := r.pairedRatios(Pulse, p)
		if len(rps) == 0 {
			continue
		}
		cpu := r.pairedCPURatios(Pulse, p)
		rlo, rhi := medianInterval(rps)
		clo, chi := medianInterval(cpu)
		out = append(out, fmt.Sprintf("pulse ahead of %s: throughput %s (pulse ÷ %s: median %.3f, 90 %% interval %.3f–%.3f), CPU per request %s (median %.3f, %.3f–%.3f) over %d rounds",
			p, verdict(rhi > 1), p, median(rps), rlo, rhi, verdict(clo < 1), median(cpu), clo, chi, len(rps)))
	}
	if cpu := r.pairedCPURatios(Pulse, Timed); len(cpu) > 0 {
		lo, hi := medianInterval(cpu)
		out = append(out, fmt.Sprintf("pulse CPU per request <= 1.03 × timed: %s (pulse ÷ timed: median %.3f, 90 %% interval %.3f–%.3f over %d rounds; timed %s × bare)",
			verdict(lo <= 1.03), median(cpu), lo, hi, len(cpu), ratioSummary(r.roundRuns(Timed))))
	}
	return out
}
