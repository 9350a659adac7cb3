// Package proc runs the server binaries that tests and the load benchmark
// start for themselves: redis-server (internal/redistest, internal/bench),
// postgres (internal/pgtest) and mariadbd (internal/mariadbtest). It knows
// nothing of any of them; a harness says how to run its server with a
// Config and keeps only what is specific to it: arguments, init steps such
// as initdb, the readiness probe, DSN building.
//
// Start picks a free loopback port from internal/ports (so a Redis Cluster
// node's bus port, port+10000, is free too), starts the binary in a
// directory the caller owns, with its output in a log file there, and
// waits until the Ready probe passes:
//
//	p, err := proc.Start(ctx, proc.Config{
//		Binary: "redis-server",
//		Dir:    dir,
//		Args: func(port int) []string {
//			return []string{"--port", strconv.Itoa(port), "--dir", dir}
//		},
//		Ready: func(ctx context.Context, port int) error {
//			return ping(ctx, port) // nil once it answers
//		},
//	})
//	if err != nil {
//		return err // names the log's tail when the server failed
//	}
//	defer p.Stop()
//
// Each process has its own process group and is killed with the program
// that started it (Pdeathsig), so none outlives a crashed test. Faults
// and lifecycle:
//
//	p.Stop()              // SIGTERM, SIGKILL after StopTimeout
//	p.Kill()              // SIGKILL now, as a crash would
//	err = p.Restart(ctx)  // same port, same directory
//	err = p.Pause()       // SIGSTOP, returns once stopped: a hung host
//	p.Resume()            // SIGCONT
package proc
