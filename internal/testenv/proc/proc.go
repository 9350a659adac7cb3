package proc

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
	"syscall"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/ports"
)

// Config says how to run one server binary.
type Config struct {
	// Binary is the program: a path, or a name looked up on PATH.
	Binary string
	// Args are its arguments for the given port.
	Args func(port int) []string
	// Dir is the server's directory, which the caller creates and
	// removes. The process runs in it, and its stdout and stderr go to
	// the file Log there.
	Dir string
	// Log is the name of the output file in Dir; "" means the binary's
	// base name plus ".log".
	Log string
	// ErrorLog is a file the server writes its errors to itself, such as
	// mariadbd's --log-error, relative to Dir unless absolute; its tail
	// follows the output's in errors.
	ErrorLog string
	// Ready reports whether the server on port serves yet: nil once it
	// does. Each call gets a context that ends after ProbeTimeout.
	Ready func(ctx context.Context, port int) error
	// StartTimeout bounds the wait for Ready; 0 means harness.Hang: it
	// guards against a hang, and a loaded machine may take seconds.
	StartTimeout time.Duration
	// StopTimeout is how long Stop waits after SIGTERM before SIGKILL;
	// 0 means 5 s.
	StopTimeout time.Duration
	// Credential runs the server as another user, e.g. postgres, which
	// refuses to run as root.
	Credential *syscall.Credential
	// BeforeRetry runs when a start failed because the port was taken
	// meanwhile, before another port is tried: it removes what the
	// failed start left in Dir that names the old port.
	BeforeRetry func() error
}

const (
	// ProbeTimeout bounds one call of Config.Ready.
	ProbeTimeout = 2 * time.Second
	// tailBytes is how much of each log an error message shows.
	tailBytes = 4000
	// attempts is how many ports Start tries when they are taken
	// between ports.Free and the server's bind.
	attempts = 5
)

// Process is one server process started by Start. Its methods are safe
// for concurrent use.
type Process struct {
	cfg  Config
	port int

	mu     sync.Mutex
	cmd    *exec.Cmd     // nil when stopped or killed
	exited chan struct{} // closed once cmd has been reaped
}

// Start starts the server on a free loopback port (from ports.Free) and
// returns once Ready reports it serving. When the server exits first, or
// is not ready within StartTimeout, or ctx ends, it is killed and the
// error carries the tail of its log. A port taken by another process
// meanwhile makes Start try another one, a few times.
func Start(ctx context.Context, c Config) (*Process, error) {
	if c.Log == "" {
		c.Log = filepath.Base(c.Binary) + ".log"
	}
	if _, err := exec.LookPath(c.Binary); err != nil {
		return nil, fmt.Errorf("proc: %w", err)
	}
	for attempt := 1; ; attempt++ {
		port, err := ports.Free()
		if err != nil {
			return nil, err
		}
		p := &Process{cfg: c, port: port}
		// A fresh log: what an earlier attempt wrote is not this one's.
		if err := os.WriteFile(p.logPath(), nil, 0o644); err != nil {
			return nil, fmt.Errorf("proc: %w", err)
		}
		err = p.launch(ctx, nil)
		if err == nil {
			return p, nil
		}
		if attempt == attempts || !strings.Contains(err.Error(), "already in use") {
			return nil, err
		}
		if c.BeforeRetry != nil {
			if err := c.BeforeRetry(); err != nil {
				return nil, fmt.Errorf("proc: before retrying %s: %w", c.Binary, err)
			}
		}
	}
}

// Port is the server's TCP port on 127.0.0.1.
func (p *Process) Port() int { return p.port }

// Addr is "127.0.0.1:port".
func (p *Process) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }

// Pid is the process ID, 0 when it is not running.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return 0
	}
	return p.cmd.Process.Pid
}

// Running reports whether the process is up: started and neither stopped
// nor killed. A paused process is running.
func (p *Process) Running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil
}

// launch starts the process with Args plus extra and waits until Ready.
func (p *Process) launch(ctx context.Context, extra []string) error {
	if err := p.spawn(extra); err != nil {
		return err
	}
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	timeout := p.cfg.StartTimeout
	if timeout == 0 {
		timeout = harness.Hang
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	name := filepath.Base(p.cfg.Binary)
	for {
		// Exited first: a server that lost its port to another one must
		// not pass for ready because that other one answers.
		select {
		case <-exited:
			p.forget(exited)
			return fmt.Errorf("proc: %s on port %d exited at start:\n%s", name, p.port, p.LogTail())
		default:
		}
		probe, cancelProbe := context.WithTimeout(ctx, ProbeTimeout)
		err := p.cfg.Ready(probe, p.port)
		cancelProbe()
		if err == nil && listenedByOther(p.Pid(), p.port) {
			// Another process took the port while it was free (Restart)
			// or between ports.Free and the bind: what answered is not
			// this server. "already in use" makes Start try another port.
			p.Kill()
			return fmt.Errorf("proc: %s on port %d: the port is already in use by another process, which answered the probe", name, p.port)
		}
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			p.Kill()
			return fmt.Errorf("proc: %s on port %d not ready (%v): %w\n%s", name, p.port, context.Cause(ctx), err, p.LogTail())
		case <-exited:
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// spawn starts the process, its output appended to the log.
func (p *Process) spawn(extra []string) error {
	logf, err := os.OpenFile(p.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("proc: %w", err)
	}
	cmd := exec.Command(p.cfg.Binary, append(p.cfg.Args(p.port), extra...)...)
	cmd.Dir = p.cfg.Dir
	// A file rather than a buffer: no copying goroutine racing with the
	// reads of the log in error messages.
	cmd.Stdout, cmd.Stderr = logf, logf
	// Its own process group, so a signal meant for the test binary does
	// not reach it and Kill reaches its children too, and killed with the
	// test binary so it cannot outlive it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL, Credential: p.cfg.Credential}
	if err := cmd.Start(); err != nil {
		logf.Close()
		return fmt.Errorf("proc: start %s: %w", p.cfg.Binary, err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	p.mu.Lock()
	p.cmd, p.exited = cmd, exited
	p.mu.Unlock()
	return nil
}

// forget drops a process that exited by itself.
func (p *Process) forget(exited chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.exited == exited {
		p.cmd = nil
	}
}

// take hands the process over to the caller that ends it, once.
func (p *Process) take() (*exec.Cmd, chan struct{}) {
	p.mu.Lock()
	defer p.mu.Unlock()
	cmd, exited := p.cmd, p.exited
	p.cmd = nil
	return cmd, exited
}

// Stop shuts the server down: SIGTERM, and SIGKILL to its process group
// if it has not exited within StopTimeout. A paused server is resumed so
// that it sees the SIGTERM. Stop is safe to call more than once, and on a
// killed server.
func (p *Process) Stop() {
	cmd, exited := p.take()
	if cmd == nil {
		return
	}
	timeout := p.cfg.StopTimeout
	if timeout == 0 {
		timeout = 5 * time.Second
	}
	pid := cmd.Process.Pid
	_ = syscall.Kill(pid, syscall.SIGTERM)
	_ = syscall.Kill(-pid, syscall.SIGCONT)
	select {
	case <-exited:
	case <-time.After(timeout):
		_ = syscall.Kill(-pid, syscall.SIGKILL)
		<-exited
	}
}

// Kill ends the server and its children at once with SIGKILL, as a crash
// or the OOM killer would, and returns once it is reaped.
func (p *Process) Kill() {
	cmd, exited := p.take()
	if cmd == nil {
		return
	}
	_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	<-exited
}

// Restart stops a running server, then starts it again on the same port
// and directory with Args plus extra, and waits until Ready. A stopped or
// killed server is just started.
func (p *Process) Restart(ctx context.Context, extra ...string) error {
	p.Stop()
	return p.launch(ctx, extra)
}

// Pause freezes the server's process group with SIGSTOP and returns once
// the kernel reports the server stopped: connections stay open and nothing
// answers, as on a hung host.
func (p *Process) Pause() error {
	pid := p.Pid()
	if pid == 0 {
		return errors.New("proc: Pause: not running")
	}
	if err := syscall.Kill(-pid, syscall.SIGSTOP); err != nil {
		return fmt.Errorf("proc: Pause: %w", err)
	}
	stat := filepath.Join("/proc", strconv.Itoa(pid), "stat")
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		b, err := os.ReadFile(stat)
		if err != nil {
			return nil // no /proc: trust the signal
		}
		// The state follows the parenthesised command name.
		if i := strings.LastIndexByte(string(b), ')'); i >= 0 && i+2 < len(b) && b[i+2] == 'T' {
			return nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	return fmt.Errorf("proc: Pause: %s did not stop within 10 s of SIGSTOP", p.cfg.Binary)
}

// Resume undoes Pause (SIGCONT).
func (p *Process) Resume() error {
	pid := p.Pid()
	if pid == 0 {
		return errors.New("proc: Resume: not running")
	}
	if err := syscall.Kill(-pid, syscall.SIGCONT); err != nil {
		return fmt.Errorf("proc: Resume: %w", err)
	}
	return nil
}

func (p *Process) logPath() string { return filepath.Join(p.cfg.Dir, p.cfg.Log) }

// LogTail is the end of the server's output, and of its ErrorLog if it
// has one, for error messages.
func (p *Process) LogTail() string {
	out := tail(p.logPath())
	if e := p.cfg.ErrorLog; e != "" {
		if !filepath.IsAbs(e) {
			e = filepath.Join(p.cfg.Dir, e)
		}
		out += tail(e)
	}
	return out
}

func tail(path string) string {
	b, _ := os.ReadFile(path)
	if len(b) > tailBytes {
		b = b[len(b)-tailBytes:]
	}
	return string(b)
}
