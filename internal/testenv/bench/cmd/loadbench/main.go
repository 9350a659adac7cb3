// Command loadbench compares the per-request cost of Pulse with a bare
// Echo server and with echoprometheus under wrk, against a redis-server
// and a 3-master Redis Cluster it starts itself. `make bench` runs it;
// see package bench.
//
//	loadbench [flags]                       run the comparison, print the tables
//	loadbench -markdown BENCHMARKS.md ...   also write them into BENCHMARKS.md
//	loadbench serve -variant pulse -redis ADDR   one server process (run by the above)
//	loadbench serve -variant pulse-cluster -cluster ADDR,ADDR,ADDR
//
// Its last line is "pulse/bare throughput ratio: X.XX", after
// "pulse-cluster/bare throughput ratio: X.XX" when that variant ran. It exits 1 when
// the hits Redis holds differ from the requests a server served.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/bench"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "serve" {
		if err := bench.Serve(context.Background(), os.Args[2:], os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

// options are the command line's settings that are not a bench.Config.
type options struct {
	goBench, markdown, command string
}

func run() error {
	cfg, o, err := parseFlags()
	if err != nil {
		return err
	}
	var goOut []byte
	if o.goBench != "" {
		if goOut, err = os.ReadFile(o.goBench); err != nil {
			return fmt.Errorf("loadbench: %w", err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	rep, err := bench.Run(ctx, cfg)
	if err != nil {
		return err
	}
	if o.markdown != "" {
		if err := writeMarkdown(o.markdown, rep.Markdown(o.command, string(goOut))); err != nil {
			return err
		}
	}
	fmt.Print(rep.Text())
	if err := rep.Failed(); err != nil {
		// The tables, the goals and the ratio line are out already; the
		// exit status carries the failure.
		os.Exit(1)
	}
	return nil
}

// parseFlags reads the command line into the comparison's Config, which
// runs this executable's serve for every server.
func parseFlags() (bench.Config, options, error) {
	var (
		rounds      = flag.Int("rounds", 20, "rounds; every variant runs once per round")
		duration    = flag.Duration("duration", time.Second, "length of every run")
		warmup      = flag.Duration("warmup", 300*time.Millisecond, "untimed load before every run (0: none)")
		seed        = flag.Uint64("seed", 1, "draws the order of the variants in each round")
		connections = flag.Int("connections", 32, "wrk connections (-c)")
		scale       = flag.String("scale", "1,8", "extra paced pulse (and pulse-cluster) runs at these connection counts, comma separated (\"\": none)")
		scalePause  = flag.Duration("scale-pause", time.Millisecond, "each connection's pause between requests in the paced extra runs")
		scaleTime   = flag.Duration("scale-duration", 5*time.Second, "length of every extra run")
		threads     = flag.Int("threads", 1, "wrk threads (-t)")
		procs       = flag.Int("gomaxprocs", 1, "the server's GOMAXPROCS (0: runtime default)")
		variants    = flag.String("variants", "", "variants to run, comma separated (default all)")
		o           options
	)
	flag.StringVar(&o.goBench, "gobench", "", "file with `go test -bench` output to put in the Markdown")
	flag.StringVar(&o.markdown, "markdown", "", "file whose generated section receives the report")
	flag.StringVar(&o.command, "command", "make bench", "the command named in the Markdown as the one that made it")
	flag.Parse()
	if _, err := exec.LookPath("wrk"); err != nil {
		return bench.Config{}, o, errors.New("loadbench: wrk not found in PATH: install it (apt-get install wrk) or run `make bench`, which does")
	}
	self, err := os.Executable()
	if err != nil {
		return bench.Config{}, o, fmt.Errorf("loadbench: %w", err)
	}
	cfg := bench.Config{
		Rounds: *rounds, Duration: *duration, Warmup: *warmup, Seed: *seed,
		Connections: *connections, GOMAXPROCS: *procs,
		ScalePause: *scalePause, ScaleDuration: *scaleTime,
		Loader:   bench.Wrk{Threads: *threads},
		Progress: os.Stderr,
		ServerCommand: func(args []string) *exec.Cmd {
			return exec.Command(self, append([]string{"serve"}, args...)...)
		},
	}
	if cfg.Warmup == 0 {
		cfg.Warmup = -1 // none, where Config's zero would take its default
	}
	if cfg.ScaleConnections, err = ints(*scale); err != nil {
		return bench.Config{}, o, err
	}
	if *variants != "" {
		for v := range strings.SplitSeq(*variants, ",") {
			cfg.Variants = append(cfg.Variants, bench.Variant(strings.TrimSpace(v)))
		}
	}
	return cfg, o, nil
}

// writeMarkdown puts generated into the generated section of the file at
// path, creating the file when there is none.
func writeMarkdown(path, generated string) error {
	doc, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("loadbench: %w", err)
	}
	if err := os.WriteFile(path, []byte(bench.Splice(string(doc), generated)), 0o644); err != nil {
		return fmt.Errorf("loadbench: %w", err)
	}
	return nil
}

func ints(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil || n <= 0 {
			return nil, fmt.Errorf("loadbench: -scale: %q is not a connection count", f)
		}
		out = append(out, n)
	}
	return out, nil
}
