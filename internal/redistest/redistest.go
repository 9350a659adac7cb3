package redistest

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/ports"
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

	port int
	dir  string
	opts Options

	mu     sync.Mutex
	tb     testing.TB    // where failures of Server methods are reported
	cmd    *exec.Cmd     // nil when stopped or killed
	exited chan struct{} // closed once cmd has been reaped
	id     string        // cluster node ID, cached: nodes.conf keeps it
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

// newServer starts a server in dir, retrying on another port when the one
// picked was taken between the check and redis-server's bind.
func newServer(dir string, o Options) (*Server, error) {
	if err := needBinary("redis-server"); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		port, err := ports.Free()
		if err != nil {
			return nil, err
		}
		s := &Server{
			Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
			port: port,
			dir:  dir,
			opts: o,
		}
		_, err = s.launch(nil)
		if err == nil {
			return s, nil
		}
		if attempt == 5 || !strings.Contains(err.Error(), "already in use") {
			return nil, err
		}
		// A fresh server: what the failed attempt left (log, nodes.conf
		// naming the old port) must not be read by the next one.
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			_ = os.RemoveAll(filepath.Join(dir, e.Name()))
		}
	}
}

func needBinary(name string) error {
	if _, err := exec.LookPath(name); err != nil {
		return fmt.Errorf("redistest: %s not found in PATH: install it (apt-get install redis-server, which brings redis-cli too) or run `make test`, which does", name)
	}
	return nil
}

func (s *Server) args(extra []string) []string {
	a := []string{
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(s.port),
		"--dir", s.dir,
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
	if s.opts.Cluster {
		a = append(a,
			"--cluster-enabled", "yes",
			"--cluster-config-file", filepath.Join(s.dir, "nodes.conf"),
			"--cluster-node-timeout", "2000",
		)
	}
	a = append(a, s.opts.Args...)
	return append(a, extra...)
}

// launch starts the process and waits until it answers. A server answering
// LOADING counts as up; loading reports whether it did.
func (s *Server) launch(extra []string) (loading bool, err error) {
	logf, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return false, fmt.Errorf("redistest: %w", err)
	}
	cmd := exec.Command("redis-server", s.args(extra)...)
	cmd.Dir = s.dir
	// A file rather than a buffer: no copying goroutine racing with the
	// reads of the log in error messages.
	cmd.Stdout = logf
	cmd.Stderr = logf
	// Its own process group, so a signal meant for the test binary does not
	// reach it, and killed with the test binary so it cannot outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return false, fmt.Errorf("redistest: start redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	s.mu.Lock()
	s.cmd, s.exited = cmd, exited
	s.mu.Unlock()

	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exited:
			s.mu.Lock()
			s.cmd = nil
			s.mu.Unlock()
			return false, fmt.Errorf("redistest: redis-server on %s exited at start:\n%s", s.Addr, s.logTail())
		default:
		}
		_, err = s.do("PING")
		if err == nil {
			return false, nil
		}
		if strings.HasPrefix(err.Error(), "LOADING") {
			return true, nil
		}
		if time.Now().After(deadline) {
			s.Kill()
			return false, fmt.Errorf("redistest: redis-server on %s did not answer PING: %v\n%s", s.Addr, err, s.logTail())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (s *Server) logPath() string { return filepath.Join(s.dir, "redis.log") }

// logTail is the end of the server's log, for error messages.
func (s *Server) logTail() string {
	b, _ := os.ReadFile(s.logPath())
	if len(b) > 4000 {
		b = b[len(b)-4000:]
	}
	return string(b)
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

// running reports whether the process is up (not stopped or killed).
func (s *Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cmd != nil
}

// take hands the process over to the caller that ends it, once.
func (s *Server) take() (*exec.Cmd, chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cmd, exited := s.cmd, s.exited
	s.cmd = nil
	return cmd, exited
}

// Stop shuts the server down (SIGTERM, then SIGKILL after 5 s). It is safe
// to call more than once, and on a paused or killed server.
func (s *Server) Stop() {
	cmd, exited := s.take()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Process.Signal(syscall.SIGCONT) // a paused server must see the TERM
	select {
	case <-exited:
	case <-time.After(5 * time.Second):
		_ = cmd.Process.Kill()
		<-exited
	}
}

// Kill ends the server with SIGKILL, as a crash or the OOM killer would:
// no shutdown, nothing flushed beyond what appendfsync always already
// wrote. It returns once the process is reaped; Restart brings it back.
func (s *Server) Kill() {
	cmd, exited := s.take()
	if cmd == nil {
		return
	}
	_ = cmd.Process.Kill()
	<-exited
}

// Restart starts the server again on the same port and directory. A
// running server is stopped first; a killed or stopped one is just started.
func (s *Server) Restart() {
	s.owner().Helper()
	s.Stop()
	if _, err := s.launch(nil); err != nil {
		s.fatalf("%v", err)
	}
}

// Pause freezes the server (SIGSTOP): connections stay open but nothing is
// answered, which is what a slow or hung Redis looks like to a client. On a
// cluster node, a pause longer than the 2 s node timeout starts a failover.
func (s *Server) Pause() { s.signal(syscall.SIGSTOP) }

// Resume undoes Pause.
func (s *Server) Resume() { s.signal(syscall.SIGCONT) }

func (s *Server) signal(sig syscall.Signal) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd != nil {
		_ = s.cmd.Process.Signal(sig)
	}
}

// Port is the server's TCP port.
func (s *Server) Port() int { return s.port }

// Pool returns a pool of connections to the server with short timeouts,
// closed when the test ends.
func (s *Server) Pool() *redis.Pool {
	p := &redis.Pool{
		MaxIdle:     16,
		IdleTimeout: time.Minute,
		Dial:        func() (redis.Conn, error) { return s.dial(2 * time.Second) },
	}
	s.owner().Cleanup(func() { p.Close() })
	return p
}

func (s *Server) dial(timeout time.Duration) (redis.Conn, error) {
	return redis.Dial("tcp", s.Addr,
		redis.DialConnectTimeout(500*time.Millisecond),
		redis.DialReadTimeout(timeout),
		redis.DialWriteTimeout(timeout))
}

// do runs one command on a fresh connection.
func (s *Server) do(cmd string, args ...any) (any, error) {
	c, err := s.dial(2 * time.Second)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Do(cmd, args...)
}

// Do runs one command on a fresh connection and fails the test on error.
func (s *Server) Do(cmd string, args ...any) any {
	s.owner().Helper()
	v, err := s.do(cmd, args...)
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
	m, err := redis.Int64Map(s.do("HGETALL", key))
	if err != nil {
		s.fatalf("redistest: HGETALL %s: %v", key, err)
	}
	var sum int64
	for _, v := range m {
		sum += v
	}
	return sum
}
