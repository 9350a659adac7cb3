package redistest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/proc"
)

// Options changes how StartWith launches redis-server.
type Options struct {
	// Args are extra redis-server arguments, e.g. "--maxmemory", "10mb".
	Args []string
	// Cluster starts the server with cluster-enabled yes, its nodes.conf
	// in its own directory and a 2 s cluster-node-timeout. StartCluster
	// uses it; a lone cluster node answers CLUSTERDOWN until it is part
	// of a cluster.
	Cluster bool
}

// Server is one redis-server process owned by a test.
type Server struct {
	Addr string

	proc *proc.Process
	dir  string
	opts Options

	// loading is set by the readiness probe when the server answered
	// LOADING, which counts as up.
	loading atomic.Bool

	mu sync.Mutex
	tb testing.TB // where failures of Server methods are reported
	id string     // cluster node ID, cached: nodes.conf keeps it
}

// Start launches redis-server for tb and stops it when tb ends. Data is
// kept in an append-only file fsynced on every write, so Stop then Restart
// keeps every acknowledged write, as a production server with AOF would.
//
// When redis-server is not installed the test fails with a message saying
// how to install it; `make test` installs it on a fresh machine.
func Start(tb testing.TB) *Server {
	tb.Helper()
	return StartWith(tb, Options{})
}

// StartWith is Start with extra arguments or in cluster mode.
func StartWith(tb testing.TB, o Options) *Server {
	tb.Helper()
	s, err := newServer(tb.TempDir(), o)
	if err != nil {
		tb.Fatal(err)
	}
	s.bind(tb)
	tb.Cleanup(s.Stop)
	return s
}

// newServer starts a server in dir, which the caller removes.
func newServer(dir string, o Options) (*Server, error) {
	if err := needBinary("redis-server"); err != nil {
		return nil, err
	}
	s := &Server{dir: dir, opts: o}
	p, err := proc.Start(context.Background(), proc.Config{
		Binary: "redis-server",
		Dir:    dir,
		Log:    "redis.log",
		Args:   func(port int) []string { return cmdline(dir, o, port) },
		Ready:  s.ready,
		// A fresh server: what the failed attempt left (nodes.conf
		// naming the old port) must not be read by the next one.
		BeforeRetry: func() error { return emptyDir(dir) },
	})
	if err != nil {
		return nil, fmt.Errorf("redistest: %w", err)
	}
	s.proc, s.Addr = p, p.Addr()
	return s, nil
}

func emptyDir(dir string) error {
	entries, err := os.ReadDir(dir)
	for _, e := range entries {
		if e.Name() != "redis.log" {
			err = errors.Join(err, os.RemoveAll(filepath.Join(dir, e.Name())))
		}
	}
	return err
}

func needBinary(name string) error {
	if _, err := exec.LookPath(name); err != nil {
		return fmt.Errorf("redistest: %s not found in PATH: install it (apt-get install redis-server, which brings redis-cli too) or run `make test`, which does", name)
	}
	return nil
}

// cmdline is the command line of a server in dir on port.
func cmdline(dir string, o Options, port int) []string {
	a := []string{
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(port),
		"--dir", dir,
		"--save", "",
		"--appendonly", "yes",
		"--appendfsync", "always",
		"--daemonize", "no",
		"--protected-mode", "yes",
		"--logfile", "",
		// Scripts longer than this make other clients get BUSY; short so
		// that Busy can show it quickly.
		"--busy-reply-threshold", "100",
		// Replicas sync at once rather than after the default 5 s wait
		// for more replicas to share the transfer.
		"--repl-diskless-sync-delay", "0",
	}
	if o.Cluster {
		a = append(a,
			"--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(dir, "nodes.conf"),
			"--cluster-node-timeout", "2000",
		)
	}
	return append(a, o.Args...)
}

// ready is the launcher's probe: PING answered, or LOADING, which counts
// as up and is remembered for Loading.
func (s *Server) ready(_ context.Context, port int) error {
	c, err := dial(net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 2*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = c.Do("PING")
	if err != nil && strings.HasPrefix(err.Error(), "LOADING") {
		s.loading.Store(true)
		return nil
	}
	return err
}

// relaunch starts a stopped or killed server again with extra arguments
// for this run; loading reports whether it answered LOADING at first.
func (s *Server) relaunch(extra ...string) (loading bool, err error) {
	s.loading.Store(false)
	if err := s.proc.Restart(context.Background(), extra...); err != nil {
		return false, fmt.Errorf("redistest: %w", err)
	}
	return s.loading.Load(), nil
}

// bind makes tb the test that Server methods report failures to.
func (s *Server) bind(tb testing.TB) {
	s.mu.Lock()
	s.tb = tb
	s.mu.Unlock()
}

func (s *Server) owner() testing.TB {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.tb == nil {
		panic("redistest: server " + s.Addr + " used outside of a test (SharedCluster binds its nodes to the test that called it)")
	}
	return s.tb
}

func (s *Server) fatalf(format string, args ...any) {
	tb := s.owner()
	tb.Helper()
	tb.Fatalf(format, args...)
}

// Stop shuts the server down (SIGTERM, then SIGKILL after 5 s). It is safe
// to call more than once, and on a paused or killed server.
func (s *Server) Stop() { s.proc.Stop() }

// Kill ends the server with SIGKILL, as a crash or the OOM killer would:
// no shutdown, nothing flushed beyond what appendfsync always already
// wrote. It returns once the process is reaped; Restart brings it back.
func (s *Server) Kill() { s.proc.Kill() }

// Restart starts the server again on the same port and directory. A
// running server is stopped first; a killed or stopped one is just started.
// It returns once the server has loaded its data and answers PING: a test
// that reads right after would otherwise meet LOADING on a loaded machine.
// Faults().Loading keeps a server answering LOADING.
func (s *Server) Restart() {
	s.owner().Helper()
	if _, err := s.relaunch(); err != nil {
		s.fatalf("%v", err)
	}
	if err := s.waitPing(30 * time.Second); err != nil {
		s.fatalf("redistest: Restart: %s did not load its data within 30 s: %v", s.Addr, err)
	}
}

// Pause freezes the server (SIGSTOP): connections stay open but nothing is
// answered, which is what a slow or hung Redis looks like to a client. On a
// cluster node, a pause longer than the 2 s node timeout starts a failover.
// It does nothing on a server that is not running.
func (s *Server) Pause() {
	if s.proc.Running() {
		if err := s.proc.Pause(); err != nil {
			s.fatalf("redistest: %v", err)
		}
	}
}

// Resume undoes Pause. It does nothing on a server that is not running.
func (s *Server) Resume() { _ = s.proc.Resume() }

// Port is the server's TCP port.
func (s *Server) Port() int { return s.proc.Port() }

// Pool returns a pool of connections to the server, closed when the test
// ends: a short read timeout (2 s), which a paused server trips, and
// harness.Hang for writes and the connect.
func (s *Server) Pool() *redis.Pool {
	p := &redis.Pool{
		MaxIdle:     16,
		IdleTimeout: time.Minute,
		Dial:        func() (redis.Conn, error) { return dial(s.Addr, 2*time.Second) },
	}
	s.owner().Cleanup(func() { p.Close() })
	return p
}

// dial connects to the server at addr, its reads bounded by timeout.
func dial(addr string, timeout time.Duration) (redis.Conn, error) {
	return redis.Dial("tcp", addr,
		// A live server's kernel accepts at once, a stopped one refuses
		// at once: the bound is for a loaded machine's scheduling.
		redis.DialConnectTimeout(harness.Hang),
		redis.DialReadTimeout(timeout),
		// A write only blocks while the server does not read: a
		// pipeline of megabytes to a server the machine's load keeps
		// off the CPU. It guards against a hang (harness.Hang); a
		// paused server is told by the read timeout.
		redis.DialWriteTimeout(harness.Hang))
}

// do runs one command on a fresh connection, within 2 s: the harness's
// own polling, which a paused node must not hold up.
func (s *Server) do(cmd string, args ...any) (any, error) {
	return doAt(s.Addr, 2*time.Second, cmd, args...)
}

// check runs one command a test must see succeed (its own reads and
// writes): harness.Hang guards it against a hang only, so a loaded
// machine does not fail the test.
func (s *Server) check(cmd string, args ...any) (any, error) {
	return doAt(s.Addr, harness.Hang, cmd, args...)
}

// doAt runs one command on a fresh connection to addr, its reads bounded
// by timeout.
func doAt(addr string, timeout time.Duration, cmd string, args ...any) (any, error) {
	c, err := dial(addr, timeout)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Do(cmd, args...)
}

// Do runs one command on a fresh connection and fails the test on error.
func (s *Server) Do(cmd string, args ...any) any {
	s.owner().Helper()
	v, err := s.check(cmd, args...)
	if err != nil {
		s.fatalf("redistest: %s on %s: %v", cmd, s.Addr, err)
	}
	return v
}

// FlushAll empties the server. Only ever called on a server this package started.
func (s *Server) FlushAll() {
	s.owner().Helper()
	s.Do("FLUSHALL")
}

// Dir is the server's data directory.
func (s *Server) Dir() string { return filepath.Clean(s.dir) }

// Installed reports whether redis-server can be found, for benchmarks that
// skip rather than fail.
func Installed() bool {
	_, err := exec.LookPath("redis-server")
	return err == nil
}

// HashSum adds up the integer values of a hash.
func (s *Server) HashSum(key string) int64 {
	s.owner().Helper()
	m, err := redis.Int64Map(s.check("HGETALL", key))
	if err != nil {
		s.fatalf("redistest: HGETALL %s: %v", key, err)
	}
	var sum int64
	for _, v := range m {
		sum += v
	}
	return sum
}

// CPU is the CPU time the server has used since it started, user and
// system (INFO cpu): what a benchmark's commands cost on the Redis side.
func (s *Server) CPU() time.Duration {
	s.owner().Helper()
	info, err := redis.String(s.check("INFO", "cpu"))
	if err != nil {
		s.fatalf("redistest: INFO cpu on %s: %v", s.Addr, err)
	}
	var sec float64
	for _, line := range strings.Split(info, "\r\n") {
		k, v, _ := strings.Cut(line, ":")
		if k != "used_cpu_user" && k != "used_cpu_sys" {
			continue
		}
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			s.fatalf("redistest: INFO cpu: %q: %v", line, err)
		}
		sec += f
	}
	return time.Duration(sec * float64(time.Second))
}

// Commands is how many times the server has run each command (INFO
// commandstats, by its lower-case name; a subcommand as "config|get"),
// those run inside scripts included.
func (s *Server) Commands() map[string]int {
	s.owner().Helper()
	info, err := redis.String(s.check("INFO", "commandstats"))
	if err != nil {
		s.fatalf("redistest: INFO commandstats on %s: %v", s.Addr, err)
	}
	out := map[string]int{}
	for _, line := range strings.Split(info, "\r\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "cmdstat_"), ":calls=")
		if !ok {
			continue
		}
		n, err := strconv.Atoi(rest[:strings.IndexByte(rest, ',')])
		if err != nil {
			s.fatalf("redistest: INFO commandstats: %q: %v", line, err)
		}
		out[name] = n
	}
	return out
}

// Calls is how many times the server has run cmd (see Commands).
func (s *Server) Calls(cmd string) int {
	s.owner().Helper()
	return s.Commands()[strings.ToLower(cmd)]
}
