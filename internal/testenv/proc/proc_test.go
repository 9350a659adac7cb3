package proc_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/ports"
	"github.com/pulse-dev/pulse/internal/testenv/proc"
)

// ping sends PING in the Redis protocol and wants +PONG back.
func ping(ctx context.Context, port int) error {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		return err
	}
	defer c.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = c.SetDeadline(dl)
	}
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return err
	}
	if line != "+PONG\r\n" {
		return errors.New("PING: " + strings.TrimSpace(line))
	}
	return nil
}

func redisConfig(t *testing.T, extra ...string) proc.Config {
	t.Helper()
	if _, err := exec.LookPath("redis-server"); err != nil {
		t.Fatal("redis-server not found: apt-get install redis-server, or run `make test`")
	}
	dir := t.TempDir()
	return proc.Config{
		Binary: "redis-server",
		Dir:    dir,
		Args: func(port int) []string {
			return append([]string{"--port", strconv.Itoa(port), "--bind", "127.0.0.1",
				"--dir", dir, "--save", "", "--appendonly", "yes", "--appendfsync", "always"}, extra...)
		},
		Ready: ping,
	}
}

func start(t *testing.T, c proc.Config) *proc.Process {
	t.Helper()
	p, err := proc.Start(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// do runs one inline command and returns the first line of the reply.
func do(t *testing.T, p *proc.Process, cmd string) string {
	t.Helper()
	c, err := net.DialTimeout("tcp", p.Addr(), time.Second)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte(cmd + "\r\n")); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return strings.TrimSpace(line)
}

func refused(p *proc.Process) bool {
	c, err := net.DialTimeout("tcp", p.Addr(), 200*time.Millisecond)
	if err == nil {
		c.Close()
	}
	return err != nil
}

func TestStartStopRestart(t *testing.T) {
	p := start(t, redisConfig(t))
	if p.Port() <= 0 || p.Port() >= ports.Max || !p.Running() || p.Pid() == 0 {
		t.Fatalf("port %d, running %v, pid %d", p.Port(), p.Running(), p.Pid())
	}
	if got := do(t, p, "SET k v"); got != "+OK" {
		t.Fatalf("SET: %s", got)
	}
	p.Stop()
	p.Stop() // twice is fine
	if p.Running() || p.Pid() != 0 || !refused(p) {
		t.Fatal("still running after Stop")
	}
	if err := p.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := do(t, p, "GET k"); got != "$1" {
		t.Fatalf("GET after Stop and Restart: %s, want the value back", got)
	}
	if !strings.Contains(p.LogTail(), "Ready to accept connections") {
		t.Errorf("log tail lacks redis-server's start line:\n%s", p.LogTail())
	}
}

func TestKillRestartWithArgs(t *testing.T) {
	p := start(t, redisConfig(t))
	pid := p.Pid()
	p.Kill()
	if p.Running() || !refused(p) {
		t.Fatal("still answering after Kill")
	}
	if err := syscall.Kill(pid, 0); err == nil {
		t.Fatalf("process %d still exists after Kill", pid)
	}
	// Restart on the same port, with an extra argument for this run only.
	port := p.Port()
	if err := p.Restart(context.Background(), "--maxmemory-policy", "allkeys-lru"); err != nil {
		t.Fatal(err)
	}
	if p.Port() != port {
		t.Fatalf("restarted on port %d, was %d", p.Port(), port)
	}
	if got := do(t, p, "CONFIG GET maxmemory-policy"); got != "*2" {
		t.Fatalf("CONFIG GET: %s", got)
	}
	// Restart of a running server stops it first.
	if err := p.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := do(t, p, "PING"); got != "+PONG" {
		t.Fatalf("PING after Restart: %s", got)
	}
}

func TestPauseResume(t *testing.T) {
	p := start(t, redisConfig(t))
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	err := ping(ctx, p.Port())
	cancel()
	if err == nil {
		t.Fatal("a paused server answered PING")
	}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	if got := do(t, p, "PING"); got != "+PONG" {
		t.Fatalf("PING after Resume: %s", got)
	}
	// Stop reaches a paused server too.
	if err := p.Pause(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { p.Stop(); close(done) }()
	select {
	case <-done:
	case <-time.After(4 * time.Second):
		t.Fatal("Stop of a paused server took more than 4 s")
	}
}

func TestFailedStartNamesLogTail(t *testing.T) {
	_, err := proc.Start(context.Background(), redisConfig(t, "--no-such-directive", "x"))
	if err == nil {
		t.Fatal("redis-server started with a bad directive")
	}
	msg := err.Error()
	if !strings.Contains(msg, "redis-server") || !strings.Contains(msg, "exited at start") || !strings.Contains(msg, "no-such-directive") {
		t.Fatalf("error does not name the binary and its log tail:\n%s", msg)
	}
}

func TestNotReadyIsKilled(t *testing.T) {
	c := redisConfig(t)
	c.StartTimeout = 300 * time.Millisecond
	var port int
	c.Ready = func(_ context.Context, p int) error {
		port = p
		return errors.New("never ready")
	}
	_, err := proc.Start(context.Background(), c)
	if err == nil || !strings.Contains(err.Error(), "never ready") || !strings.Contains(err.Error(), "not ready") {
		t.Fatalf("got %v, want a not-ready error with the probe's", err)
	}
	conn, derr := net.DialTimeout("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), 200*time.Millisecond)
	if derr == nil {
		conn.Close()
		t.Fatal("the server that was never ready still listens")
	}
}

func TestMissingBinary(t *testing.T) {
	_, err := proc.Start(context.Background(), proc.Config{Binary: "pulse-no-such-server", Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "pulse-no-such-server") {
		t.Fatalf("got %v", err)
	}
}

// A server restarted on a port another process took while it was down
// fails to start, though the taker answers the probe: the test must not
// go on with another server's data. (A taker that asks internal/ports is
// kept off a reserved port; this one is any program.)
func TestRestartOnTakenPortFails(t *testing.T) {
	p := start(t, redisConfig(t))
	p.Stop()
	l, err := net.Listen("tcp", p.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go answerPong(l)
	err = p.Restart(context.Background())
	if err == nil || !strings.Contains(err.Error(), "already in use") {
		t.Fatalf("Restart on a port another process answers: %v, want an already-in-use error", err)
	}
	if p.Running() {
		t.Error("the server that lost its port is still counted as running")
	}
}

// answerPong answers every line of every connection with +PONG, as a
// Redis that is not ours would answer the probe.
func answerPong(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			r := bufio.NewReader(c)
			for {
				if _, err := r.ReadString('\n'); err != nil {
					return
				}
				if _, err := c.Write([]byte("+PONG\r\n")); err != nil {
					return
				}
			}
		}()
	}
}
