package redistest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisinfo"
	"github.com/pulse-dev/pulse/internal/testenv/ports"
)

// Faults makes a server answer as Redis does under the faults clients
// meet in production: out of memory, a demoted master, a long script, a
// restart loading its data. Each returns an idempotent restore func.
type Faults struct{ s *Server }

// Faults is the server's fault injection.
func (s *Server) Faults() Faults { return Faults{s} }

// once makes a restore func idempotent.
func once(f func()) func() {
	var o sync.Once
	return func() { o.Do(f) }
}

// OOM makes the server refuse writes as out of memory: maxmemory is set to
// 1 byte with the noeviction policy, so every command that may grow memory
// (SET, HINCRBY, ZADD, a script's write) gets
//
//	OOM command not allowed when used memory > 'maxmemory'.
//
// while reads, DEL and FLUSHALL still work. restore sets maxmemory back to
// 0 and the policy back to what it was. A restart ends it too (CONFIG SET
// is not persisted). On a cluster replica it does nothing, since replicas
// ignore maxmemory: use it on a master.
func (f Faults) OOM() (restore func()) {
	s := f.s
	s.owner().Helper()
	v, err := redis.Strings(s.check("CONFIG", "GET", "maxmemory-policy"))
	if err != nil || len(v) != 2 {
		s.fatalf("redistest: CONFIG GET maxmemory-policy on %s: %v", s.Addr, err)
	}
	policy := v[1]
	s.Do("CONFIG", "SET", "maxmemory-policy", "noeviction", "maxmemory", "1")
	return once(func() {
		if !s.proc.Running() {
			return
		}
		if _, err := s.check("CONFIG", "SET", "maxmemory", "0", "maxmemory-policy", policy); err != nil {
			s.fatalf("redistest: end OOM on %s: %v", s.Addr, err)
		}
	})
}

// ReadOnly turns the server into a replica of a loopback port where
// nothing listens (REPLICAOF). As it never reaches that master it keeps
// its data and serves reads, but every write gets
//
//	READONLY You can't write against a read only replica.
//
// which is what clients of a master demoted under them see. restore runs
// REPLICAOF NO ONE. Single servers only: cluster nodes refuse REPLICAOF,
// use Cluster.Failover or Cluster.KillMaster there.
func (f Faults) ReadOnly() (restore func()) {
	s := f.s
	s.owner().Helper()
	if s.opts.Cluster {
		s.fatalf("redistest: ReadOnly on cluster node %s: use Cluster.Failover or Cluster.KillMaster", s.Addr)
	}
	port, err := ports.Free()
	if err != nil {
		s.fatalf("%v", err)
	}
	s.Do("REPLICAOF", "127.0.0.1", port)
	return once(func() {
		if !s.proc.Running() {
			return
		}
		if _, err := s.check("REPLICAOF", "NO", "ONE"); err != nil {
			s.fatalf("redistest: end ReadOnly on %s: %v", s.Addr, err)
		}
	})
}

// busyScript spins, reading the server clock, until ARGV[1] microseconds
// have passed. It writes nothing, so SCRIPT KILL can stop it.
const busyScript = `
local t = redis.call('TIME')
local stop = tonumber(t[1]) * 1000000 + tonumber(t[2]) + tonumber(ARGV[1])
while true do
  t = redis.call('TIME')
  if tonumber(t[1]) * 1000000 + tonumber(t[2]) >= stop then return 1 end
end`

// Busy runs a Lua script that spins for d on a connection of its own. Once
// it has run for the busy-reply-threshold (100 ms on servers this package
// starts) every other client gets
//
//	BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.
//
// for any command until it ends. Busy returns once another connection has
// been answered BUSY, so d must be well over 100 ms. restore ends the
// script early with SCRIPT KILL and waits until the server answers PING.
// On a cluster node keep d under the 2 s node timeout, or the other nodes
// fail it over.
func (f Faults) Busy(d time.Duration) (restore func()) {
	s := f.s
	s.owner().Helper()
	c, err := dial(s.Addr, d+10*time.Second)
	if err != nil {
		s.fatalf("redistest: Busy: dial %s: %v", s.Addr, err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer c.Close()
		// Its error, once killed, is expected.
		_, _ = c.Do("EVAL", busyScript, 0, d.Microseconds())
	}()
	end := func() {
		// NOTBUSY when it already ended, which is fine.
		_, _ = s.do("SCRIPT", "KILL")
		<-done
	}
	deadline := time.Now().Add(d + 5*time.Second)
	for {
		_, err := s.do("PING")
		if err != nil && strings.HasPrefix(err.Error(), "BUSY") {
			break
		}
		select {
		case <-done:
			s.fatalf("redistest: Busy(%v) on %s: the script ended before any client was answered BUSY (last reply: %v); use a longer d", d, s.Addr, err)
		default:
		}
		if time.Now().After(deadline) {
			end()
			s.fatalf("redistest: Busy on %s: no BUSY reply: %v", s.Addr, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return once(func() {
		end()
		if err := s.waitPing(10 * time.Second); err != nil {
			s.fatalf("redistest: end Busy on %s: %v", s.Addr, err)
		}
	})
}

// waitPing waits until the server answers PING with PONG.
func (s *Server) waitPing(timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		_, err := s.do("PING")
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// loadingDB holds Loading's filler keys, away from the tests' data in db 0.
const (
	loadingDB   = 15
	loadingKeys = 2000
)

// Loading restarts the server so that it answers
//
//	LOADING Redis is loading the dataset in memory
//
// to every client for about d, as a server does after a crash or restart
// while it reads a large data set. It writes 2000 small filler keys to db
// 15, rewrites the AOF (so they sit in its RDB part), stops the server and
// starts it again with the hidden key-load-delay config, which sleeps that
// long for every key loaded, and with loading-process-events-interval-bytes
// at its minimum so clients are answered (LOADING) while it loads. Every
// key of every db is kept. Loading returns once a client has been answered
// LOADING; restore waits until the server answers PING and deletes the
// filler (FLUSHDB on db 15). Single servers only.
func (f Faults) Loading(d time.Duration) (restore func()) {
	s := f.s
	s.owner().Helper()
	if s.opts.Cluster {
		s.fatalf("redistest: Loading on cluster node %s: single servers only", s.Addr)
	}
	if err := fillForLoading(s.Addr); err != nil {
		s.fatalf("%v", err)
	}
	// usleep sleeps longer than asked: take its overshoot on an idle
	// machine off each key's delay.
	delay := max(d.Microseconds()/loadingKeys-50, 1)
	loading, err := s.relaunch(
		"--key-load-delay", fmt.Sprint(delay),
		"--loading-process-events-interval-bytes", "1024",
	)
	if err != nil {
		s.fatalf("%v", err)
	}
	if !loading {
		s.fatalf("redistest: Loading(%v) on %s: the server answered PING before any LOADING reply", d, s.Addr)
	}
	return once(func() {
		if !s.proc.Running() {
			return
		}
		err := s.waitPing(d + 30*time.Second)
		if err == nil {
			err = flushFiller(s.Addr)
		}
		if err != nil {
			s.fatalf("redistest: end Loading on %s: %v", s.Addr, err)
		}
	})
}

// fillForLoading writes Loading's filler keys to the server at addr and
// waits until the AOF rewrite holds them.
func fillForLoading(addr string) error {
	c, err := dial(addr, 10*time.Second)
	if err != nil {
		return fmt.Errorf("redistest: Loading: %w", err)
	}
	defer c.Close()
	if _, err := c.Do("SELECT", loadingDB); err != nil {
		return fmt.Errorf("redistest: Loading: %w", err)
	}
	const batch = 500
	for i := 0; i < loadingKeys; i += batch {
		args := make([]any, 0, 2*batch)
		for j := i; j < i+batch; j++ {
			args = append(args, fmt.Sprintf("redistest:loading:%d", j), "x")
		}
		if _, err := c.Do("MSET", args...); err != nil {
			return fmt.Errorf("redistest: Loading: MSET: %w", err)
		}
	}
	// key-load-delay applies per key of an RDB; a rewrite puts the whole
	// data set in the AOF's RDB base.
	if _, err := c.Do("BGREWRITEAOF"); err != nil {
		return fmt.Errorf("redistest: Loading: BGREWRITEAOF: %w", err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		info, err := redis.String(c.Do("INFO", "persistence"))
		if err != nil {
			return fmt.Errorf("redistest: Loading: INFO: %w", err)
		}
		if redisinfo.Field(info, "aof_rewrite_in_progress") == "0" && redisinfo.Field(info, "aof_rewrite_scheduled") == "0" {
			if st := redisinfo.Field(info, "aof_last_bgrewrite_status"); st != "ok" {
				return fmt.Errorf("redistest: Loading: AOF rewrite: %s", st)
			}
			return nil
		}
		if time.Now().After(deadline) {
			return errors.New("redistest: Loading: AOF rewrite did not finish in 20 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// flushFiller deletes Loading's filler keys from the server at addr.
func flushFiller(addr string) error {
	c, err := dial(addr, 5*time.Second)
	if err != nil {
		return err
	}
	defer c.Close()
	if _, err := c.Do("SELECT", loadingDB); err != nil {
		return err
	}
	_, err = c.Do("FLUSHDB")
	return err
}
