package bench

import (
	"fmt"
	"slices"
	"strings"

	"github.com/pulse-dev/pulse/timeseries"
)

// commandsPerFlush is the median over v's runs (the extra ones if any) of
// Redis commands per flush script, the script's own call and the commands
// it runs; 0 when there were none.
func (r *Report) commandsPerFlush(v Variant) float64 {
	var runs []RunResult
	for _, run := range r.Runs {
		if run.Variant == v && run.Calls["eval"]+run.Calls["evalsha"] > 0 {
			runs = append(runs, run)
		}
	}
	if extra := slices.DeleteFunc(slices.Clone(runs), func(x RunResult) bool { return x.Round > 0 }); len(extra) > 0 {
		runs = extra
	}
	return medianOf(runs, func(x RunResult) float64 {
		return float64(x.CallsTotal) / float64(x.Calls["eval"]+x.Calls["evalsha"])
	})
}

// PulseRatio is the median over rounds of Pulse's throughput over bare's.
func (r *Report) PulseRatio() float64 {
	return medianOf(r.roundRuns(Pulse), func(x RunResult) float64 { return x.RatioToBare })
}

// ClusterRatio is the median over rounds of pulse-cluster's throughput
// over bare's; 0 when it did not run.
func (r *Report) ClusterRatio() float64 {
	return medianOf(r.roundRuns(PulseCluster), func(x RunResult) float64 { return x.RatioToBare })
}

// pairedRatios is a's throughput over b's in each round that ran both.
func (r *Report) pairedRatios(a, b Variant) []float64 {
	var out []float64
	for _, x := range r.roundRuns(a) {
		for _, y := range r.roundRuns(b) {
			if x.Round == y.Round && y.Load.RPS > 0 {
				out = append(out, x.Load.RPS/y.Load.RPS)
			}
		}
	}
	return out
}

// goals says, one line each, whether the goals were met.
func (r *Report) goals() []string {
	verdict := func(ok bool) string {
		if ok {
			return "met"
		}
		return "MISSED"
	}
	var out []string
	pulse := r.PulseRatio()
	if pulse > 0 {
		cpu := medianOf(r.roundRuns(Pulse), func(x RunResult) float64 { return x.CPURatioToBare })
		out = append(out, fmt.Sprintf("pulse >= 0.97 × bare: %s (%s)", verdict(pulse >= 0.97), ratioSummary(r.roundRuns(Pulse))),
			fmt.Sprintf("pulse CPU per request <= 1.05 × bare: %s (median %.2f)", verdict(cpu <= 1.05), cpu))
	}
	if runs := r.roundRuns(BareMiddleware); len(runs) > 0 {
		out = append(out, fmt.Sprintf("control: bare with a middleware that does nothing: throughput %s; CPU per request %.2f × bare",
			ratioSummary(runs), medianOf(runs, func(x RunResult) float64 { return x.CPURatioToBare })))
	}
	out = append(out, r.frameworkGoals(verdict)...)
	out = append(out, r.peerGoals(verdict)...)
	var rates, cmds []float64
	for _, run := range r.Runs {
		if run.Variant == Pulse && run.Round == 0 {
			rates = append(rates, run.Load.RPS)
			cmds = append(cmds, run.CommandsPerSecond())
		}
	}
	if len(rates) > 1 {
		out = append(out, fmt.Sprintf("Redis cmds/s flat as the request rate grows (extra pulse runs): request rate %.0f…%.0f/s (×%.0f), Redis commands %.1f…%.1f/s",
			slices.Min(rates), slices.Max(rates), slices.Max(rates)/slices.Min(rates), slices.Min(cmds), slices.Max(cmds)))
	}
	out = append(out, r.flushBudgets(verdict)...)
	out = append(out, r.clusterGoals(verdict, pulse)...)
	if wt := medianOf(r.roundRuns(PulseWriteThrough), func(x RunResult) float64 { return x.RatioToBare }); wt > 0 {
		out = append(out, fmt.Sprintf("write-through costs: %.2f × bare throughput, %.0f Redis cmds/s", wt,
			medianOf(r.roundRuns(PulseWriteThrough), RunResult.CommandsPerSecond)))
	}
	return out
}

// frameworkGoals are the Echo v5 and net/http variants' goals: each
// against its own framework's bare server.
func (r *Report) frameworkGoals(verdict func(bool) string) []string {
	var out []string
	for _, v := range []Variant{PulseV5, PulseHTTP} {
		if x := medianOf(r.roundRuns(v), func(x RunResult) float64 { return x.RatioToBare }); x > 0 {
			out = append(out, fmt.Sprintf("%s >= 0.97 × %s: %s (%s)", v, v.bare(), verdict(x >= 0.97), ratioSummary(r.roundRuns(v))))
		}
	}
	return out
}

// flushBudgets are the commands per active series and precision of one
// flush: at most 2 for hits alone (pulse-counts), at most 6 with request
// durations (pulse: 4 more per duration hash).
func (r *Report) flushBudgets(verdict func(bool) string) []string {
	var out []string
	// The load runs keep the precisions of a zero Schema.
	schema, _ := timeseries.Schema{}.Normalize()
	precisions := len(schema.Precisions)
	for _, b := range []struct {
		v      Variant
		budget float64
		what   string
	}{{PulseCounts, 2, "hits only"}, {Pulse, 6, "with durations"}} {
		perFlush := r.commandsPerFlush(b.v)
		if perFlush == 0 {
			continue
		}
		perSP := perFlush / float64(seriesPerRequest*precisions)
		out = append(out, fmt.Sprintf("%s: at most %.0f Redis cmds per active series and precision per flush (%s): %s (%.2f: %.1f cmds per flush for %d series × %d precisions)",
			b.v, b.budget, b.what, verdict(perSP <= b.budget), perSP, perFlush, seriesPerRequest, precisions))
	}
	return out
}

// clusterGoals are pulse-cluster's lines: its throughput against 0.97 ×
// bare, its control (bare-cluster), and its Redis commands per second on
// each node as the request rate grows. pulse is pulse's own ratio.
func (r *Report) clusterGoals(verdict func(bool) string, pulse float64) []string {
	var out []string
	if cl := r.ClusterRatio(); cl > 0 {
		runs := r.roundRuns(PulseCluster)
		out = append(out, fmt.Sprintf("pulse-cluster >= 0.97 × bare: %s (%s; pulse on one server: %.2f), %.1f Redis cmds/s over all nodes",
			verdict(cl >= 0.97), ratioSummary(runs), pulse, medianOf(runs, RunResult.CommandsPerSecond)))
	}
	if xs := r.pairedRatios(PulseCluster, BareCluster); len(xs) > 0 {
		lo, hi := medianInterval(xs)
		out = append(out, fmt.Sprintf("control: bare-cluster (bare holding the same cluster client) %.2f × bare; pulse-cluster × bare-cluster: median %.2f, 90 %% interval %.2f–%.2f over %d rounds",
			medianOf(r.roundRuns(BareCluster), func(x RunResult) float64 { return x.RatioToBare }), median(xs), lo, hi, len(xs)))
	}
	if extra := r.extraRuns(PulseCluster); len(extra) > 1 {
		first, last := extra[0], extra[len(extra)-1]
		var nodes []string
		for i := range first.Nodes {
			var xs []float64
			for _, run := range extra {
				if i < len(run.Nodes) {
					xs = append(xs, run.NodeCommandsPerSecond()[i])
				}
			}
			nodes = append(nodes, fmt.Sprintf("%.1f…%.1f", slices.Min(xs), slices.Max(xs)))
		}
		out = append(out, fmt.Sprintf("Redis cmds/s on each cluster node flat as the request rate grows (extra pulse-cluster runs): request rate %.0f…%.0f/s (×%.0f), per node %s/s",
			first.Load.RPS, last.Load.RPS, last.Load.RPS/max(first.Load.RPS, 1), strings.Join(nodes, ", ")))
	}
	return out
}
