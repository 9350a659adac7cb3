// Package redistest starts a private redis-server for tests: a free port on
// loopback, a temporary directory, and nothing shared with any other server
// on the machine. Tests may FLUSHALL it freely; it is stopped at cleanup.
package redistest

import (
	"bytes"
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Server is one redis-server process owned by a test.
type Server struct {
	tb   testing.TB
	Addr string
	dir  string
	port int
	cmd  *exec.Cmd
	log  *bytes.Buffer
}

// Start launches redis-server for tb and stops it when tb ends. Data is
// kept in an append-only file fsynced on every write, so Stop then Restart
// keeps every acknowledged write, as a production server with AOF would.
//
// When redis-server is not installed the test fails with a message saying
// how to install it; `make test` installs it on a fresh machine.
func Start(tb testing.TB) *Server {
	tb.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		tb.Fatalf("redistest: redis-server not found in PATH: install it (apt-get install redis-server) or run `make test`, which does")
	}
	s := &Server{tb: tb, dir: tb.TempDir()}
	s.port = freePort(tb)
	s.Addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port))
	s.start()
	tb.Cleanup(func() { s.Stop() })
	return s
}

func (s *Server) start() {
	s.tb.Helper()
	s.log = &bytes.Buffer{}
	s.cmd = exec.Command("redis-server",
		"--bind", "127.0.0.1",
		"--port", strconv.Itoa(s.port),
		"--dir", s.dir,
		"--save", "",
		"--appendonly", "yes",
		"--appendfsync", "always",
		"--daemonize", "no",
		"--protected-mode", "yes",
		"--logfile", "",
	)
	s.cmd.Stdout = s.log
	s.cmd.Stderr = s.log
	// Its own process group, so a signal meant for the test binary does not
	// reach it and it cannot outlive a crashed test for long.
	s.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := s.cmd.Start(); err != nil {
		s.tb.Fatalf("redistest: start redis-server: %v", err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := redis.Dial("tcp", s.Addr, redis.DialConnectTimeout(200*time.Millisecond))
		if err == nil {
			_, err = c.Do("PING")
			c.Close()
			if err == nil {
				return
			}
		}
		if time.Now().After(deadline) {
			s.tb.Fatalf("redistest: redis-server on %s did not answer PING: %v\n%s", s.Addr, err, s.log.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Stop shuts the server down (SIGTERM, then SIGKILL after 5 s). It is safe
// to call more than once.
func (s *Server) Stop() {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	_ = s.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { _ = s.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		_ = s.cmd.Process.Kill()
		<-done
	}
	s.cmd = nil
}

// Restart starts the server again on the same port and directory, after Stop.
func (s *Server) Restart() {
	s.tb.Helper()
	s.Stop()
	s.start()
}

// Pause freezes the server (SIGSTOP): connections stay open but nothing is
// answered, which is what a slow or hung Redis looks like to a client.
func (s *Server) Pause() { _ = s.cmd.Process.Signal(syscall.SIGSTOP) }

// Resume undoes Pause.
func (s *Server) Resume() { _ = s.cmd.Process.Signal(syscall.SIGCONT) }

// Pool returns a pool of connections to the server with short timeouts,
// closed when the test ends.
func (s *Server) Pool() *redis.Pool {
	p := &redis.Pool{
		MaxIdle:     16,
		IdleTimeout: time.Minute,
		Dial: func() (redis.Conn, error) {
			return redis.Dial("tcp", s.Addr,
				redis.DialConnectTimeout(500*time.Millisecond),
				redis.DialReadTimeout(2*time.Second),
				redis.DialWriteTimeout(2*time.Second))
		},
	}
	s.tb.Cleanup(func() { p.Close() })
	return p
}

// Do runs one command on a fresh connection and fails the test on error.
func (s *Server) Do(cmd string, args ...any) any {
	s.tb.Helper()
	c, err := redis.Dial("tcp", s.Addr, redis.DialConnectTimeout(time.Second))
	if err != nil {
		s.tb.Fatalf("redistest: dial %s: %v", s.Addr, err)
	}
	defer c.Close()
	v, err := c.Do(cmd, args...)
	if err != nil {
		s.tb.Fatalf("redistest: %s: %v", cmd, err)
	}
	return v
}

// FlushAll empties the server. Only ever called on a server this package started.
func (s *Server) FlushAll() { s.Do("FLUSHALL") }

// Dir is the server's data directory.
func (s *Server) Dir() string { return filepath.Clean(s.dir) }

func freePort(tb testing.TB) int {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("redistest: find a free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Installed reports whether redis-server can be found, for benchmarks that
// skip rather than fail.
func Installed() bool {
	_, err := exec.LookPath("redis-server")
	return err == nil
}

// HashSum adds up the integer values of a hash.
func (s *Server) HashSum(key string) int64 {
	s.tb.Helper()
	m, err := redis.Int64Map(s.Do("HGETALL", key), nil)
	if err != nil {
		s.tb.Fatalf("redistest: HGETALL %s: %v", key, err)
	}
	var sum int64
	for _, v := range m {
		sum += v
	}
	return sum
}
