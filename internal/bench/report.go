package bench

import (
	"bufio"
	"cmp"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pulse-dev/pulse/internal/series"
)

// Machine describes where a report was made.
type Machine struct {
	Cores     int
	CPU       string
	Kernel    string
	Go        string
	LoadStart string // /proc/loadavg when the run started
	LoadAfter string // and when it ended
}

// ReadMachine describes this machine.
func ReadMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), CPU: "unknown", Kernel: "unknown", LoadStart: loadAverage()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	return m
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

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
// request in: hits, the route, the status class.
const seriesPerRequest = 3

// commandsPerFlush is the median over the Pulse runs (the extra ones if
// any) of Redis commands per flush script, the script's own call and
// the commands it runs; 0 when there were none.
func (r *Report) commandsPerFlush() float64 {
	var runs []RunResult
	for _, run := range r.Runs {
		if run.Variant == Pulse && run.Calls["eval"]+run.Calls["evalsha"] > 0 {
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
		out = append(out, fmt.Sprintf("pulse >= 0.97 × bare: %s (median %.2f)", verdict(pulse >= 0.97), pulse))
	}
	for _, v := range []Variant{PulseV5, PulseHTTP} {
		if x := medianOf(r.roundRuns(v), func(x RunResult) float64 { return x.RatioToBare }); x > 0 {
			out = append(out, fmt.Sprintf("%s >= 0.97 × %s: %s (median %.2f)", v, v.bare(), verdict(x >= 0.97), x))
		}
	}
	if prom := medianOf(r.roundRuns(EchoPrometheus), func(x RunResult) float64 { return x.RatioToBare }); pulse > 0 && prom > 0 {
		ahead := 0
		for _, p := range r.roundRuns(Pulse) {
			for _, q := range r.roundRuns(EchoPrometheus) {
				if p.Round == q.Round && p.Load.RPS > q.Load.RPS {
					ahead++
				}
			}
		}
		out = append(out, fmt.Sprintf("pulse ahead of echoprometheus: %s (median %.2f vs %.2f × bare; ahead in %d of %d rounds)",
			verdict(pulse > prom), pulse, prom, ahead, len(r.roundRuns(Pulse))))
	}
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
	if perFlush := r.commandsPerFlush(); perFlush > 0 {
		perSP := perFlush / float64(seriesPerRequest*len(series.DefaultPrecisions))
		out = append(out, fmt.Sprintf("at most 2 Redis cmds per active series and precision per flush: %s (%.2f: %.1f cmds per flush for %d series × %d precisions)",
			verdict(perSP <= 2), perSP, perFlush, seriesPerRequest, len(series.DefaultPrecisions)))
	}
	if cl := r.ClusterRatio(); cl > 0 {
		runs := r.roundRuns(PulseCluster)
		out = append(out, fmt.Sprintf("pulse-cluster (3 masters) costs: %.2f × bare throughput (pulse on one server: %.2f), %.1f Redis cmds/s over all nodes",
			cl, pulse, medianOf(runs, RunResult.CommandsPerSecond)))
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
	if wt := medianOf(r.roundRuns(PulseWriteThrough), func(x RunResult) float64 { return x.RatioToBare }); wt > 0 {
		out = append(out, fmt.Sprintf("write-through costs: %.2f × bare throughput, %.0f Redis cmds/s", wt,
			medianOf(r.roundRuns(PulseWriteThrough), RunResult.CommandsPerSecond)))
	}
	return out
}

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
	return fmt.Sprintf("%s -t%s -c%d, %s per run, %d rounds (variant order rotated each round); %s; server GOMAXPROCS=%s; GET %s on route %s",
		loader, threads, r.Config.Connections, r.Config.Duration, r.Config.Rounds, extra, procs, Path, Route)
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

func (m Machine) line() string {
	return fmt.Sprintf("%d cores, %s, %s, %s; load average %s at start, %s at end",
		m.Cores, m.CPU, m.Kernel, m.Go, m.LoadStart, m.LoadAfter)
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

// goBenchCPU is the "cpu:" line of `go test -bench` output, "" if none.
func goBenchCPU(out string) string {
	for line := range strings.Lines(out) {
		if cpu, ok := strings.CutPrefix(line, "cpu: "); ok {
			return strings.TrimSpace(cpu)
		}
	}
	return ""
}

// GoBench is one benchmark's result: the median of its runs.
type GoBench struct {
	Pkg, Name   string // Name without the -GOMAXPROCS suffix
	Procs       int
	NsPerOp     float64
	BytesPerOp  float64
	AllocsPerOp float64
	Runs        int
}

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-(\d+))?\s+\d+\s+(.*)$`)

// ParseGoBench reads `go test -bench -benchmem` output, in the order the
// benchmarks first appear, each the median of its runs.
func ParseGoBench(out string) []GoBench {
	type key struct{ pkg, name string }
	samples := map[key][][3]float64{}
	procs := map[key]int{}
	var order []key
	pkg := ""
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var s [3]float64
		found := false
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				continue
			}
			switch f[i+1] {
			case "ns/op":
				s[0], found = v, true
			case "B/op":
				s[1] = v
			case "allocs/op":
				s[2] = v
			}
		}
		if !found {
			continue
		}
		k := key{pkg, m[1]}
		if _, ok := samples[k]; !ok {
			order = append(order, k)
		}
		samples[k] = append(samples[k], s)
		procs[k], _ = strconv.Atoi(m[2])
	}
	var out2 []GoBench
	for _, k := range order {
		col := func(i int) float64 {
			var xs []float64
			for _, s := range samples[k] {
				xs = append(xs, s[i])
			}
			return median(xs)
		}
		out2 = append(out2, GoBench{Pkg: k.pkg, Name: k.name, Procs: procs[k], NsPerOp: col(0), BytesPerOp: col(1),
			AllocsPerOp: col(2), Runs: len(samples[k])})
	}
	return out2
}

// GoBenchTable lists benchmarks; a sub-benchmark with a sibling named
// "bare" also shows its difference over bare.
func GoBenchTable(bs []GoBench) *table {
	t := &table{header: []string{"package", "benchmark", "ns/op", "B/op", "allocs/op", "over bare"}}
	bare := map[string]GoBench{}
	for _, b := range bs {
		if parent, sub, ok := cutLast(b.Name); ok && sub == "bare" {
			bare[b.Pkg+" "+parent] = b
		}
	}
	for _, b := range bs {
		over := ""
		if parent, sub, ok := cutLast(b.Name); ok && sub != "bare" {
			if base, ok := bare[b.Pkg+" "+parent]; ok {
				over = fmt.Sprintf("%+.0f ns, %+.0f allocs (× %.2f)", b.NsPerOp-base.NsPerOp, b.AllocsPerOp-base.AllocsPerOp, b.NsPerOp/base.NsPerOp)
			}
		}
		name := b.Name
		if b.Procs > 0 {
			name += "-" + strconv.Itoa(b.Procs)
		}
		t.add(strings.TrimPrefix(b.Pkg, "github.com/pulse-dev/pulse/"), name, fmtNs(b.NsPerOp),
			strconv.FormatFloat(b.BytesPerOp, 'f', -1, 64), strconv.FormatFloat(b.AllocsPerOp, 'f', -1, 64), over)
	}
	return t
}

func cutLast(name string) (parent, sub string, ok bool) {
	i := strings.LastIndexByte(name, '/')
	if i < 0 {
		return "", "", false
	}
	return name[:i], name[i+1:], true
}

func fmtNs(ns float64) string {
	if ns >= 100 {
		return strconv.FormatFloat(ns, 'f', 0, 64)
	}
	return strconv.FormatFloat(ns, 'f', 1, 64)
}

// Markers around the generated part of BENCHMARKS.md.
const (
	BeginMarker = "<!-- make bench: generated from here -->"
	EndMarker   = "<!-- make bench: generated up to here -->"
)

// Splice replaces what lies between the markers in doc with generated,
// keeping everything else; a doc without markers gets them appended.
func Splice(doc, generated string) string {
	block := BeginMarker + "\n\n" + strings.TrimSpace(generated) + "\n\n" + EndMarker
	i := strings.Index(doc, BeginMarker)
	j := strings.Index(doc, EndMarker)
	if i < 0 || j < i {
		if doc != "" && !strings.HasSuffix(doc, "\n") {
			doc += "\n"
		}
		return doc + "\n" + block + "\n"
	}
	return doc[:i] + block + doc[j+len(EndMarker):]
}
