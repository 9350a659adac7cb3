// Command pulse-loadsim simulates a fleet of app instances recording into
// Redis and reports what Redis spends on them (see package fleet):
//
//	go run ./internal/testenv/bench/cmd/pulse-loadsim -instances 10 -routes 100
//	go run ./internal/testenv/bench/cmd/pulse-loadsim -saturate 64 -routes 200
//
// It starts a private redis-server and a private 3-master cluster unless
// -addr names masters to write to (with -cluster for a cluster's).
// -saturate doubles the instances from -instances until the flushes fall
// behind, on one server and on the cluster alike, run after run
// alternated, and prints the capacity of each and its ratio.
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/bench/fleet"
)

func main() {
	var cfg fleet.Config
	addr := flag.String("addr", "", "comma-separated Redis masters to write to; empty: start private ones")
	flag.BoolVar(&cfg.Cluster, "cluster", false, "with -addr: the masters are a cluster's")
	target := flag.String("target", "both", "with no -addr: server, cluster or both")
	flag.IntVar(&cfg.Instances, "instances", 1, "app instances")
	flag.IntVar(&cfg.Routes, "routes", 100, "routes per instance")
	flag.IntVar(&cfg.RPS, "rps", 0, "requests a second per instance (0: 20 per route)")
	flag.DurationVar(&cfg.Warmup, "warmup", 3*time.Second, "time before the measured window")
	flag.DurationVar(&cfg.Window, "window", 5*time.Second, "measured window")
	flag.BoolVar(&cfg.NoDurations, "no-durations", false, "record no durations")
	flag.BoolVar(&cfg.NoVisitors, "no-visitors", false, "count no visitors")
	saturate := flag.Int("saturate", 0, "double the instances up to this many until the flushes fall behind")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, cfg, *addr, *target, *saturate); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, cfg fleet.Config, addr, target string, saturate int) error {
	if addr != "" {
		cfg.Addrs = strings.Split(addr, ",")
		runs, err := runs(ctx, cfg, saturate)
		fleet.WriteTable(os.Stdout, "given", runs)
		return err
	}
	var held [2]float64
	for i, cluster := range []bool{false, true} {
		if target == "server" && cluster || target == "cluster" && !cluster {
			continue
		}
		t, err := fleet.StartTarget(ctx, cluster)
		if err != nil {
			return err
		}
		c := cfg
		c.Addrs, c.Cluster = t.Addrs, t.Cluster
		rs, err := runs(ctx, c, saturate)
		t.Stop()
		label := map[bool]string{false: "server", true: "3 masters"}[cluster]
		fleet.WriteTable(os.Stdout, label, rs)
		if err != nil {
			return err
		}
		h, full := fleet.Capacity(rs)
		held[i] = full
		if saturate > 0 {
			fmt.Printf("%s: held %.0f instance series; %.0f at the busiest master's full core\n", label, h, full)
		}
	}
	if saturate > 0 && held[0] > 0 && held[1] > 0 {
		fmt.Printf("3 masters ÷ one server, at full core: %.2f\n", held[1]/held[0])
	}
	return nil
}

func runs(ctx context.Context, cfg fleet.Config, saturate int) ([]fleet.Result, error) {
	if saturate > 0 {
		return fleet.Saturate(ctx, cfg, saturate)
	}
	r, err := fleet.Run(ctx, cfg)
	return []fleet.Result{r}, err
}
