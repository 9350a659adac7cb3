package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisinfo"
)

// embeddedRedis is the RedisServer value that skips redis-server and runs
// the embedded server.
const embeddedRedis = "embedded"

// privateRedis is a redis-server the example started for itself: on a
// free loopback port, its files in a temp dir, no persistence, stopped
// and removed on close.
type privateRedis struct {
	addr string
	cmd  *exec.Cmd
	dir  string
	done chan error
}

// portTries bounds the starts of a private redis-server: the port it is
// given is free when chosen, but on a busy machine another process may
// bind it before redis-server does, which then exits; it is started again
// on another port.
const portTries = 5

// errPortTaken is a redis-server start that failed because its port was
// taken.
var errPortTaken = errors.New("example: redis-server's port was taken before it bound it")

// startPrivateRedis starts the redis-server binary bin and waits until it
// answers PING.
func startPrivateRedis(bin string) (*privateRedis, error) {
	return startPrivateRedisOn(bin, freeLoopbackPort)
}

// startPrivateRedisOn is startPrivateRedis with the ports tried taken
// from pick.
func startPrivateRedisOn(bin string, pick func() (int, error)) (*privateRedis, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, err
	}
	for try := 1; ; try++ {
		p, err := startRedisOnce(path, pick)
		if err == nil || try == portTries || !errors.Is(err, errPortTaken) {
			return p, err
		}
	}
}

// startRedisOnce starts redis-server at path on a port from pick, in a
// new temp dir, and waits until it answers.
func startRedisOnce(path string, pick func() (int, error)) (*privateRedis, error) {
	dir, err := os.MkdirTemp("", "pulse-redis-")
	if err != nil {
		return nil, fmt.Errorf("example: redis-server dir: %w", err)
	}
	port, err := pick()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p := &privateRedis{addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), dir: dir, done: make(chan error, 1)}
	p.cmd = exec.Command(path, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--dir", dir,
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", "redis.log")
	p.cmd.SysProcAttr = childAttr()
	if err := p.cmd.Start(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("example: start %s: %w", path, err)
	}
	go func() { p.done <- p.cmd.Wait() }()
	if err := p.waitReady(10 * time.Second); err != nil {
		if log, _ := os.ReadFile(filepath.Join(dir, "redis.log")); bytes.Contains(log, []byte("in use")) {
			err = fmt.Errorf("%w: %s", errPortTaken, p.addr)
		}
		p.Close()
		return nil, err
	}
	return p, nil
}

// waitReady polls the server until it answers, it exits, or limit
// passes. A server that answers with another process id than ours holds
// the port: ours cannot bind it (errPortTaken).
func (p *privateRedis) waitReady(limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		c, err := redis.Dial("tcp", p.addr, redis.DialConnectTimeout(time.Second), redis.DialReadTimeout(time.Second))
		if err == nil {
			var info string
			info, err = redis.String(c.Do("INFO", "server"))
			c.Close()
			if err == nil {
				if pid := redisinfo.Field(info, "process_id"); pid != strconv.Itoa(p.cmd.Process.Pid) {
					return fmt.Errorf("%w: %s answers as process %s", errPortTaken, p.addr, pid)
				}
				return nil
			}
		}
		select {
		case werr := <-p.done:
			p.done <- werr
			return fmt.Errorf("example: redis-server exited at start (%v); its log is %s/redis.log", werr, p.dir)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("example: redis-server at %s did not answer within %v: %w", p.addr, limit, err)
		}
	}
}

// Close stops the server (SIGTERM, then SIGKILL after 5 s) and removes
// its dir.
func (p *privateRedis) Close() {
	_ = p.cmd.Process.Signal(terminate)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
	os.RemoveAll(p.dir)
}

// freeLoopbackPort is a port nothing listens on at the moment.
func freeLoopbackPort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("example: free port: %w", err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// openLocalRedis is the Redis of a run with no REDIS_URL: a private
// redis-server when bin is installed, so the figures are those of
// production; the embedded server when it is not, or when bin is
// "embedded".
func openLocalRedis(bin string, logger *slog.Logger) (*redis.Pool, func(), error) {
	if bin == "" {
		bin = "redis-server"
	}
	why := "REDIS_SERVER=" + embeddedRedis
	if bin != embeddedRedis {
		p, err := startPrivateRedis(bin)
		if err == nil {
			logger.Info("REDIS_URL is not set: using a private redis-server; counts vanish when the example stops",
				"addr", p.addr, "redis", "redis-server", "dir", p.dir)
			pool := newPool(func(ctx context.Context) (redis.Conn, error) {
				return redis.DialContext(ctx, "tcp", p.addr, redisDialOptions...)
			})
			return pool, func() { pool.Close(); p.Close() }, nil
		}
		why = bin + " is not installed"
		if !errors.Is(err, exec.ErrNotFound) {
			why = bin + " did not start: " + err.Error()
		}
	}
	return openEmbeddedRedis(why, logger)
}
