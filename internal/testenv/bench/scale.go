package bench

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"time"
)

// extraRuns are the extra runs of v, slowest request rate first.
func (r *Report) extraRuns(v Variant) []RunResult {
	var runs []RunResult
	for _, run := range r.Runs {
		if run.Round == 0 && run.Variant == v {
			runs = append(runs, run)
		}
	}
	slices.SortFunc(runs, func(a, b RunResult) int { return cmp.Compare(a.Load.RPS, b.Load.RPS) })
	return runs
}

// scaleTable shows the extra runs, pulse's then pulse-cluster's, slowest
// request rate first. On the cluster a flush is one script per node its
// keys hash to, so "per flush" there is per script.
func (r *Report) scaleTable() *table {
	t := &table{header: []string{"variant", "load", "req/s", "Redis cmds/s under load", "flush scripts (EVAL)", "Redis cmds per flush script", "Redis cmds per 1000 requests"}}
	for _, run := range append(r.extraRuns(Pulse), r.extraRuns(PulseCluster)...) {
		evals := run.Calls["eval"] + run.Calls["evalsha"]
		perFlush, perK := "-", "-"
		if evals > 0 {
			perFlush = fmt.Sprintf("%.1f", float64(run.CallsTotal)/float64(evals))
		}
		if run.Server.Served > 0 {
			perK = fmt.Sprintf("%.2f", 1000*float64(run.CallsTotal)/float64(run.Server.Served))
		}
		t.add(string(run.Variant), loadLabel(run.Connections, run.Pause), fmt.Sprintf("%.0f", run.Load.RPS),
			fmt.Sprintf("%.1f", run.CommandsPerSecond()), strconv.FormatInt(evals, 10), perFlush, perK)
	}
	return t
}

// clusterTable shows pulse-cluster's Redis commands per second on each
// node: the median over the rounds, then every extra run, slowest first.
func (r *Report) clusterTable() *table {
	rounds := r.roundRuns(PulseCluster)
	extra := r.extraRuns(PulseCluster)
	all := append(slices.Clone(rounds), extra...)
	if len(all) == 0 {
		return &table{}
	}
	var addrs []string
	for _, n := range all[0].Nodes {
		addrs = append(addrs, "node "+n.Addr)
	}
	t := &table{header: append(append([]string{"pulse-cluster, load", "req/s"}, addrs...), "all nodes", "Redis cmds per 1000 requests")}
	row := func(label string, runs []RunResult) {
		cells := []string{label, fmt.Sprintf("%.0f", medianOf(runs, func(x RunResult) float64 { return x.Load.RPS }))}
		for i := range addrs {
			cells = append(cells, fmt.Sprintf("%.1f", medianOf(runs, func(x RunResult) float64 {
				if i >= len(x.Nodes) {
					return 0
				}
				return x.NodeCommandsPerSecond()[i]
			})))
		}
		cells = append(cells, fmt.Sprintf("%.1f", medianOf(runs, RunResult.CommandsPerSecond)),
			fmt.Sprintf("%.2f", medianOf(runs, func(x RunResult) float64 {
				if x.Server.Served == 0 {
					return 0
				}
				return 1000 * float64(x.CallsTotal) / float64(x.Server.Served)
			})))
		t.add(cells...)
	}
	if len(rounds) > 0 {
		row(fmt.Sprintf("%s (median of %d rounds)", loadLabel(r.Config.Connections, 0), len(rounds)), rounds)
	}
	for _, run := range extra {
		row(loadLabel(run.Connections, run.Pause)+" (extra run)", []RunResult{run})
	}
	return t
}

// loadLabel names a load: "32" or "4, 1ms pause".
func loadLabel(conns int, pause time.Duration) string {
	if pause > 0 {
		return fmt.Sprintf("c=%d, %s pause", conns, pause)
	}
	return fmt.Sprintf("c=%d", conns)
}
