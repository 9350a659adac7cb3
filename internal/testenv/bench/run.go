package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Config is one comparison. Zero fields take the defaults.
type Config struct {
	// Variants run in every round, each round in an order of its own
	// drawn from Seed, so that no variant always runs first or always
	// follows the same one (default: all of Variants).
	Variants []Variant
	// Seed draws the rounds' orders; the same Seed gives the same orders.
	Seed uint64
	// Rounds is how many times each variant runs (default 20).
	Rounds int
	// Duration is the length of every run in the rounds (default 1 s:
	// short runs, many rounds, so the runs compared in one round are
	// close in time).
	Duration time.Duration
	// Warmup is an untimed load before every measured one, so that what
	// is measured is a running server, not one starting (default 300 ms;
	// negative: none).
	Warmup time.Duration
	// Connections is the load's keep-alive connection count (default 32).
	Connections int
	// ScaleConnections are extra runs of the Pulse variant (and of
	// pulse-cluster, when it is one of Variants) after the rounds, at
	// these connection counts with each connection pausing ScalePause
	// between requests, then one more at Connections without pauses:
	// request rates far apart, to show the Redis commands per second do
	// not follow the request rate. None when empty.
	ScaleConnections []int
	// ScalePause is the pause of the paced extra runs (default 1 ms).
	ScalePause time.Duration
	// ScaleDuration is the length of every extra run (default 5 s: long
	// enough for several flushes).
	ScaleDuration time.Duration
	// GOMAXPROCS is the server process's; 0 leaves the runtime's default.
	GOMAXPROCS int
	// FlushInterval is the Pulse recorder's; 0 leaves its default (1 s).
	FlushInterval time.Duration
	// Loader sends the requests (default Wrk{Threads: 1}).
	Loader Loader
	// ServerCommand returns the command that runs Serve(args) in a new
	// process; required.
	ServerCommand func(args []string) *exec.Cmd
	// RedisAddr is a Redis this run owns and may flush; "" starts one
	// with StartRedis for the length of the run.
	RedisAddr string
	// ClusterAddrs are the master nodes of a Redis Cluster this run owns
	// and may flush, for pulse-cluster; none starts one with
	// StartCluster for the length of the run, when pulse-cluster runs.
	ClusterAddrs []string
	// Progress receives a line per run; nil discards them.
	Progress io.Writer
}

func (c Config) withDefaults() (Config, error) {
	if c.ServerCommand == nil {
		return c, errors.New("bench: Config.ServerCommand is nil")
	}
	if len(c.Variants) == 0 {
		c.Variants = Variants
	}
	for _, v := range c.Variants {
		if !v.valid() {
			return c, fmt.Errorf("bench: unknown variant %q", v)
		}
	}
	if c.Rounds <= 0 {
		c.Rounds = 20
	}
	if c.Duration <= 0 {
		c.Duration = time.Second
	}
	if c.Warmup == 0 {
		c.Warmup = 300 * time.Millisecond
	}
	if c.Connections <= 0 {
		c.Connections = 32
	}
	if c.ScalePause <= 0 {
		c.ScalePause = time.Millisecond
	}
	if c.ScaleDuration <= 0 {
		c.ScaleDuration = 5 * time.Second
	}
	if c.Loader == nil {
		c.Loader = Wrk{Threads: 1}
	}
	if c.Progress == nil {
		c.Progress = io.Discard
	}
	return c, nil
}

// Report is a whole comparison.
type Report struct {
	Config  Config
	Machine Machine
	Runs    []RunResult
	Started time.Time
	Elapsed time.Duration
}

// Failed returns the count checks that failed, nil when all passed.
func (r *Report) Failed() error {
	var errs []error
	for _, run := range r.Runs {
		if run.Failure != "" {
			round := "extra run"
			if run.Round > 0 {
				round = "round " + strconv.Itoa(run.Round)
			}
			errs = append(errs, fmt.Errorf("bench: %s, %s at %s: %s", round, run.Variant, loadLabel(run.Connections, run.Pause), run.Failure))
		}
	}
	return errors.Join(errs...)
}

// Run runs the comparison. A failed count check does not stop it: it is
// recorded in the run and reported by Report.Failed.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	rep := &Report{Config: cfg, Started: time.Now()}
	rep.Machine = ReadMachine()
	targets, closeTargets, err := openTargets(ctx, &cfg)
	if err != nil {
		return nil, err
	}
	defer closeTargets()

	for round := 1; round <= cfg.Rounds; round++ {
		for _, v := range roundOrder(cfg.Variants, cfg.Seed, round) {
			res, err := runOne(ctx, cfg, targets[v.clustered()], v, LoadSpec{Connections: cfg.Connections, Duration: cfg.Duration})
			if err != nil {
				return nil, err
			}
			res.Round = round
			rep.Runs = append(rep.Runs, res)
			fmt.Fprintln(cfg.Progress, progressLine(res))
		}
	}
	var extra []LoadSpec
	for _, n := range cfg.ScaleConnections {
		extra = append(extra, LoadSpec{Connections: n, Duration: cfg.ScaleDuration, Pause: cfg.ScalePause})
	}
	if len(extra) > 0 {
		extra = append(extra, LoadSpec{Connections: cfg.Connections, Duration: cfg.ScaleDuration})
	}
	scaled := []Variant{Pulse}
	if slices.Contains(cfg.Variants, PulseCluster) {
		scaled = append(scaled, PulseCluster)
	}
	for _, spec := range extra {
		for _, v := range scaled {
			res, err := runOne(ctx, cfg, targets[v.clustered()], v, spec)
			if err != nil {
				return nil, err
			}
			rep.Runs = append(rep.Runs, res)
			fmt.Fprintln(cfg.Progress, progressLine(res))
		}
	}
	setRatios(rep.Runs)
	rep.Elapsed = time.Since(rep.Started)
	rep.Machine.LoadAfter = loadAverage()
	return rep, nil
}

// openTargets connects to the Redis the variants record into, starting a
// server (and a cluster, when pulse-cluster runs) when cfg names none:
// targets[true] is the cluster. closeAll stops what it started.
func openTargets(ctx context.Context, cfg *Config) (targets map[bool]*target, closeAll func(), err error) {
	var closers []func()
	closeAll = func() {
		for i := len(closers) - 1; i >= 0; i-- {
			closers[i]()
		}
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	if cfg.RedisAddr == "" {
		srv, err := StartRedis(ctx)
		if err != nil {
			return nil, nil, err
		}
		closers = append(closers, srv.Stop)
		cfg.RedisAddr = srv.Addr
	}
	single, err := newSingleTarget(cfg.RedisAddr)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, single.close)
	targets = map[bool]*target{false: single}
	if !slices.ContainsFunc(cfg.Variants, Variant.clustered) {
		return targets, closeAll, nil
	}
	if len(cfg.ClusterAddrs) == 0 {
		cluster, err := StartCluster(ctx)
		if err != nil {
			return nil, nil, err
		}
		closers = append(closers, cluster.Stop)
		cfg.ClusterAddrs = cluster.Addrs()
	}
	t, err := newClusterTarget(cfg.ClusterAddrs)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, t.close)
	targets[true] = t
	return targets, closeAll, nil
}

// roundOrder is the order the variants run in in round: a shuffle drawn
// from seed and round. A fixed rotation would have each variant follow
// the same one in every round, and whatever a run leaves behind on the
// machine (its Redis writing, its sockets closing) would then always
// weigh on the same variant.
func roundOrder(vs []Variant, seed uint64, round int) []Variant {
	out := slices.Clone(vs)
	rng := rand.New(rand.NewPCG(seed, uint64(round)))
	rng.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

func progressLine(r RunResult) string {
	round := "extra"
	if r.Round > 0 {
		round = "round " + strconv.Itoa(r.Round)
	}
	perNode := ""
	if len(r.Nodes) > 1 {
		perNode = "  per node cmds/s " + fmtRates(r.NodeCommandsPerSecond())
	}
	line := fmt.Sprintf("bench: %s %-19s %-16s %8.0f req/s  p50 %-9s p99 %-9s served %d  hits %d  redis cmds %d%s%s",
		round, r.Variant, loadLabel(r.Connections, r.Pause), r.Load.RPS, fmtDur(r.Load.P50), fmtDur(r.Load.P99),
		r.Server.Served, r.HitsInRedis, r.CallsTotal, perNode, failureSuffix(r))
	if log := strings.TrimSpace(r.ServerLog); log != "" {
		line += "\n  server stderr: " + strings.ReplaceAll(log, "\n", "\n  server stderr: ")
	}
	return line
}

func failureSuffix(r RunResult) string {
	if r.Failure == "" {
		return ""
	}
	return "  FAILED: " + r.Failure
}

// setRatios fills the ratios to the same framework's bare run of the
// same round.
func setRatios(runs []RunResult) {
	type roundBare struct {
		round int
		bare  Variant
	}
	bare := map[roundBare]RunResult{}
	for _, r := range runs {
		if r.Round > 0 && r.Variant.isBare() {
			bare[roundBare{r.Round, r.Variant}] = r
		}
	}
	for i := range runs {
		b, ok := bare[roundBare{runs[i].Round, runs[i].Variant.bare()}]
		if !ok || runs[i].Round == 0 {
			continue
		}
		if b.Load.RPS > 0 {
			runs[i].RatioToBare = runs[i].Load.RPS / b.Load.RPS
		}
		if bc := b.cpuPerRequest(); bc > 0 {
			runs[i].CPURatioToBare = float64(runs[i].cpuPerRequest()) / float64(bc)
		}
	}
}
