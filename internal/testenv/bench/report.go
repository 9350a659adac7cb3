package bench

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// table renders as aligned text or as Markdown.
type table struct {
	header []string
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

func (t *table) text() string {
	widths := make([]int, len(t.header))
	for _, r := range append([][]string{t.header}, t.rows...) {
		for i, c := range r {
			widths[i] = max(widths[i], len(c))
		}
	}
	var b strings.Builder
	line := func(r []string) {
		for i, c := range r {
			if i > 0 {
				b.WriteString("  ")
			}
			fmt.Fprintf(&b, "%-*s", widths[i], c)
		}
		b.WriteString("\n")
	}
	line(t.header)
	for _, r := range t.rows {
		line(r)
	}
	return b.String()
}

func (t *table) markdown() string {
	var b strings.Builder
	b.WriteString("| " + strings.Join(t.header, " | ") + " |\n")
	b.WriteString("|" + strings.Repeat("---|", len(t.header)) + "\n")
	for _, r := range t.rows {
		b.WriteString("| " + strings.Join(r, " | ") + " |\n")
	}
	return b.String()
}

func fmtDur(d time.Duration) string {
	switch {
	case d <= 0:
		return "-"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0fµs", float64(d)/float64(time.Microsecond))
	case d < time.Second:
		return fmt.Sprintf("%.2fms", float64(d)/float64(time.Millisecond))
	default:
		return fmt.Sprintf("%.2fs", d.Seconds())
	}
}

// fmtCPU shows a CPU time per request, in µs with one decimal.
func fmtCPU(d time.Duration) string {
	if d <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.1fµs", float64(d)/float64(time.Microsecond))
}

func fmtRatio(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}

// runsTable lists every run.
func (r *Report) runsTable() *table {
	t := &table{header: []string{"round", "variant", "load", "req/s", "× bare", "p50", "p99", "errors",
		"served", "hits in Redis", "server cores busy", "wrk cores busy", "server CPU/req", "Redis CPU/req", "CPU × bare",
		"total_commands_processed", "commandstats calls", "cmds/s", "cmds/s per node"}}
	for _, run := range r.Runs {
		round := "extra"
		if run.Round > 0 {
			round = strconv.Itoa(run.Round)
		}
		hits := "-"
		if run.Variant.records() {
			hits = strconv.FormatInt(run.HitsInRedis, 10)
			if run.Failure != "" {
				hits += " MISMATCH"
			}
		}
		server, redis := run.CPUPerRequest()
		t.add(round, string(run.Variant), loadLabel(run.Connections, run.Pause), fmt.Sprintf("%.0f", run.Load.RPS),
			fmtRatio(run.RatioToBare), fmtDur(run.Load.P50), fmtDur(run.Load.P99), strconv.FormatInt(run.Load.Errors, 10),
			strconv.FormatInt(run.Server.Served, 10), hits, fmt.Sprintf("%.2f", run.ServerCores()), fmt.Sprintf("%.2f", run.ClientCores()), fmtCPU(server), fmtCPU(redis), fmtRatio(run.CPURatioToBare),
			strconv.FormatInt(run.Processed, 10),
			strconv.FormatInt(run.CallsTotal, 10), fmt.Sprintf("%.0f", run.CommandsPerSecond()), perNodeLabel(run))
	}
	return t
}

// perNodeLabel is a cluster run's commands/s on each node, "-" for a run
// on one server.
func perNodeLabel(run RunResult) string {
	if len(run.Nodes) < 2 {
		return "-"
	}
	return fmtRates(run.NodeCommandsPerSecond())
}

// fmtRates shows rates as "12.0 / 4.0 / 6.0".
func fmtRates(xs []float64) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = fmt.Sprintf("%.1f", x)
	}
	return strings.Join(parts, " / ")
}

// roundRuns returns the runs of v in the rounds, in order.
func (r *Report) roundRuns(v Variant) []RunResult {
	var out []RunResult
	for _, run := range r.Runs {
		if run.Round > 0 && run.Variant == v {
			out = append(out, run)
		}
	}
	return out
}

func medianOf(runs []RunResult, f func(RunResult) float64) float64 {
	xs := make([]float64, len(runs))
	for i, run := range runs {
		xs[i] = f(run)
	}
	return median(xs)
}

// summaryTable has one row per variant: medians over the rounds.
func (r *Report) summaryTable() *table {
	t := &table{header: []string{"variant", "req/s", "× bare (throughput)", "p50", "p99", "server cores busy", "wrk cores busy",
		"CPU/req, server + Redis", "× bare (CPU/req)", "Redis cmds/s under load", "Redis cmds per 1000 requests", "hits == served"}}
	for _, v := range r.Config.Variants {
		runs := r.roundRuns(v)
		if len(runs) == 0 {
			continue
		}
		exact := "-"
		if v.records() {
			exact = "yes, every round"
			for _, run := range runs {
				if run.Failure != "" {
					exact = "NO"
				}
			}
		}
		perK := medianOf(runs, func(x RunResult) float64 {
			if x.Server.Served == 0 {
				return 0
			}
			return 1000 * float64(x.CallsTotal) / float64(x.Server.Served)
		})
		t.add(string(v),
			fmt.Sprintf("%.0f", medianOf(runs, func(x RunResult) float64 { return x.Load.RPS })),
			fmtRatio(medianOf(runs, func(x RunResult) float64 { return x.RatioToBare })),
			fmtDur(time.Duration(medianOf(runs, func(x RunResult) float64 { return float64(x.Load.P50) }))),
			fmtDur(time.Duration(medianOf(runs, func(x RunResult) float64 { return float64(x.Load.P99) }))),
			fmt.Sprintf("%.2f", medianOf(runs, RunResult.ServerCores)),
			fmt.Sprintf("%.2f", medianOf(runs, RunResult.ClientCores)),
			fmtCPU(time.Duration(medianOf(runs, func(x RunResult) float64 { return float64(x.cpuPerRequest()) }))),
			fmtRatio(medianOf(runs, func(x RunResult) float64 { return x.CPURatioToBare })),
			fmt.Sprintf("%.0f", medianOf(runs, RunResult.CommandsPerSecond)),
			fmt.Sprintf("%.1f", perK),
			exact)
	}
	return t
}

// commandsTable shows which commands each variant's Redis ran, from the
// median round by total.
func (r *Report) commandsTable() *table {
	t := &table{header: []string{"variant", "commands Redis ran in one run (INFO commandstats, scripts' included; pulse-cluster: all nodes)"}}
	for _, v := range r.Config.Variants {
		runs := r.roundRuns(v)
		if len(runs) == 0 || !v.records() {
			continue
		}
		slices.SortFunc(runs, func(a, b RunResult) int { return int(a.CallsTotal - b.CallsTotal) })
		run := runs[len(runs)/2]
		var names []string
		for name := range run.Calls {
			names = append(names, name)
		}
		slices.Sort(names)
		var parts []string
		for _, name := range names {
			parts = append(parts, fmt.Sprintf("%s %d", strings.ToUpper(name), run.Calls[name]))
		}
		t.add(string(v), strings.Join(parts, ", ")+fmt.Sprintf(" (total_commands_processed %d, over %s)", run.Processed, fmtDur(run.Load.Duration)))
	}
	return t
}

// seriesPerRequest is how many series the Pulse variants record each
// request in: hits, the route, the status class, the route's status class.
const seriesPerRequest = 4

func (r *Report) settings() string {
	threads := "?"
	loader := "Go client"
	if w, ok := r.Config.Loader.(Wrk); ok {
		loader = "wrk"
		threads = strconv.Itoa(max(w.Threads, 1))
	}
	procs := "default"
	if r.Config.GOMAXPROCS > 0 {
		procs = strconv.Itoa(r.Config.GOMAXPROCS)
	}
	extra := "no extra pulse runs"
	if len(r.Config.ScaleConnections) > 0 {
		who := "pulse"
		if slices.Contains(r.Config.Variants, PulseCluster) {
			who = "pulse and pulse-cluster"
		}
		extra = fmt.Sprintf("extra %s runs of %s each at c=%v with a %s pause per connection between requests, and at c=%d without",
			who, r.Config.ScaleDuration, r.Config.ScaleConnections, r.Config.ScalePause, r.Config.Connections)
	}
	if slices.Contains(r.Config.Variants, PulseCluster) {
		extra += "; pulse-cluster writes to a Redis Cluster of 3 masters without replicas"
	}
	warm := "no warm-up"
	if r.Config.Warmup > 0 {
		warm = fmt.Sprintf("after an untimed %s warm-up", r.Config.Warmup)
	}
	return fmt.Sprintf("%s -t%s -c%d, %s per run %s, %d rounds (variant order shuffled each round, seed %d); %s; server GOMAXPROCS=%s; GET %s on route %s",
		loader, threads, r.Config.Connections, r.Config.Duration, warm, r.Config.Rounds, r.Config.Seed, extra, procs, Path, Route)
}

// Text is the report for a terminal. Its last line is
// "pulse/bare throughput ratio: X.XX".
func (r *Report) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "\nload: %s\n", r.settings())
	fmt.Fprintf(&b, "machine: %s\n\n", r.Machine.line())
	b.WriteString(r.runsTable().text())
	b.WriteString("\n")
	b.WriteString(r.summaryTable().text())
	b.WriteString("\n")
	if t := r.scaleTable(); len(t.rows) > 0 {
		b.WriteString(t.text())
		b.WriteString("\n")
	}
	if t := r.clusterTable(); len(t.rows) > 0 {
		b.WriteString(t.text())
		b.WriteString("\n")
	}
	b.WriteString(r.commandsTable().text())
	b.WriteString("\n")
	for _, g := range r.goals() {
		b.WriteString("goal: " + g + "\n")
	}
	if err := r.Failed(); err != nil {
		fmt.Fprintf(&b, "COUNT CHECK FAILED:\n%v\n", err)
	}
	if cl := r.ClusterRatio(); cl > 0 {
		fmt.Fprintf(&b, "pulse-cluster/bare throughput ratio: %.2f\n", cl)
	}
	fmt.Fprintf(&b, "pulse/bare throughput ratio: %.2f\n", r.PulseRatio())
	return b.String()
}

// Markdown is the generated part of BENCHMARKS.md: machine, command, the
// Go benchmarks (goBench is `go test -bench` output, may be empty) and
// the load tables.
func (r *Report) Markdown(command, goBench string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Made by `%s` on %s; the HTTP load comparison took %s.\n\n", command, r.Started.UTC().Format("2006-01-02 15:04 MST"), r.Elapsed.Round(time.Second))
	machine := r.Machine.line()
	if cpu := goBenchCPU(goBench); cpu != "" && cpu != r.Machine.CPU {
		machine += fmt.Sprintf(" (the CPU as Go names it: %s)", cpu)
	}
	fmt.Fprintf(&b, "Machine: %s. The load average is the whole machine's: other processes shared the CPUs during the run, so compare ratios within a round, not absolute figures across reports.\n\n",
		machine)
	if goBench != "" {
		b.WriteString("### Go benchmarks\n\n")
		b.WriteString("`go test -run '^$' -bench . -benchmem` over every package (scripts/bench.sh adds `-p 1 -count 3 -benchtime 300ms` by default); each figure is the median of a benchmark's runs.\n\n")
		b.WriteString(GoBenchTable(ParseGoBench(goBench)).markdown())
		b.WriteString("\n")
	}
	b.WriteString("### HTTP load\n\n")
	fmt.Fprintf(&b, "%s.\n\n", r.settings())
	b.WriteString("Medians over the rounds:\n\n")
	b.WriteString(r.summaryTable().markdown())
	if t := r.scaleTable(); len(t.rows) > 0 {
		b.WriteString("\nRedis commands as the request rate changes (the extra runs):\n\n")
		b.WriteString(t.markdown())
	}
	if t := r.clusterTable(); len(t.rows) > 0 {
		b.WriteString("\nRedis Cluster (pulse-cluster): commands per second on each master while the load ran, from its own INFO commandstats:\n\n")
		b.WriteString(t.markdown())
	}
	b.WriteString("\n")
	b.WriteString(r.commandsTable().markdown())
	b.WriteString("\nEvery run:\n\n")
	b.WriteString(r.runsTable().markdown())
	b.WriteString("\n")
	for _, g := range r.goals() {
		b.WriteString("- goal: " + g + "\n")
	}
	if err := r.Failed(); err != nil {
		fmt.Fprintf(&b, "\n**Count check failed:** %v\n", err)
	}
	if cl := r.ClusterRatio(); cl > 0 {
		fmt.Fprintf(&b, "\n`pulse-cluster/bare throughput ratio: %.2f`\n", cl)
	}
	fmt.Fprintf(&b, "\n`pulse/bare throughput ratio: %.2f`\n", r.PulseRatio())
	return b.String()
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-(\d+))?\s+\d+\s+(.*)$`)

// Markers around the generated part of BENCHMARKS.md.
const (
	BeginMarker = "<!-- make bench: generated from here -->"
	EndMarker   = "<!-- make bench: generated up to here -->"
)
