package bench

import (
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redisstat"
)

// RunResult is one server process under one load.
type RunResult struct {
	Round       int // from 1; 0 for the extra runs
	Variant     Variant
	Connections int
	Pause       time.Duration // each connection's pause between requests
	Load        LoadResult
	Server      ServerReport
	// HitsInRedis is the sum of count:86400:hits after the server exited,
	// read through the cluster client for pulse-cluster.
	HitsInRedis int64
	// Processed, Calls, CallsTotal and LoadCalls are the sums over Nodes
	// (see NodeResult).
	Processed  int64
	Calls      map[string]int64
	CallsTotal int64
	LoadCalls  int64
	// Nodes are the Redis servers of the run, each with its own command
	// counts: the one server, or the three masters for pulse-cluster.
	Nodes []NodeResult
	// ServerCPU and RedisCPU are the CPU time the server process and
	// Redis (every node) used while the measured load ran, warm-up,
	// start and exit left out: a cost per request that other processes
	// on the machine disturb far less than throughput.
	ServerCPU, RedisCPU time.Duration
	// RatioToBare is this run's requests per second over bare's in the
	// same round, CPURatioToBare its CPU time per request (server and
	// Redis) over bare's; 0 when the round has no bare run.
	RatioToBare, CPURatioToBare float64
	// Failure says why the run's count check failed; "" when it passed.
	Failure string
	// ServerLog is what the server process wrote to stderr, e.g. a
	// recorder's flush error.
	ServerLog string
}

// CPUPerRequest is the CPU time the server and Redis used per request
// answered, over the measured load.
func (r RunResult) CPUPerRequest() (server, redis time.Duration) {
	if r.Load.Requests == 0 {
		return 0, 0
	}
	return r.ServerCPU / time.Duration(r.Load.Requests), r.RedisCPU / time.Duration(r.Load.Requests)
}

// ServerCores is the server's CPU time over the load's duration: how
// many cores it kept busy. Near GOMAXPROCS the server was the bottleneck;
// well below, the client or other processes were.
func (r RunResult) ServerCores() float64 {
	if r.Load.Duration <= 0 {
		return 0
	}
	return r.ServerCPU.Seconds() / r.Load.Duration.Seconds()
}

// ClientCores is the load generator's CPU time over the load's duration;
// near its thread count, the client was the bottleneck.
func (r RunResult) ClientCores() float64 {
	if r.Load.Duration <= 0 {
		return 0
	}
	return r.Load.ClientCPU.Seconds() / r.Load.Duration.Seconds()
}

// CommandsPerSecond is the commands Redis ran, scripts' included, per
// second while the load ran; on a cluster, all nodes together.
func (r RunResult) CommandsPerSecond() float64 {
	return perSecond(r.LoadCalls, r.Load.Duration)
}

// NodeCommandsPerSecond is CommandsPerSecond of each of Nodes.
func (r RunResult) NodeCommandsPerSecond() []float64 {
	out := make([]float64, len(r.Nodes))
	for i, n := range r.Nodes {
		out[i] = perSecond(n.LoadCalls, r.Load.Duration)
	}
	return out
}

func perSecond(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// NodeResult is what one Redis server ran during a run.
type NodeResult struct {
	Addr string
	// Processed is INFO stats total_commands_processed over the whole
	// run, from server start to exit (Redis 7 counts the commands a
	// script runs as well as the script); Calls is INFO commandstats, the
	// commands Redis ran by name, scripts' included, and CallsTotal their
	// sum. LoadCalls is CallsTotal while the load ran, without the flush
	// at Close.
	Processed  int64
	Calls      map[string]int64
	CallsTotal int64
	LoadCalls  int64
	// CPU is the node's used_cpu_* while the measured load ran.
	CPU time.Duration
}

func (r RunResult) cpuPerRequest() time.Duration {
	server, redis := r.CPUPerRequest()
	return server + redis
}

// median of xs; 0 for none.
func median(xs []float64) float64 { return redisstat.Median(xs) }
