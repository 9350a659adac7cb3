package redisstat

import (
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Window measures what a set of servers do between Open and Close: a full
// Snapshot each side, and the CPU time read with INFO cpu just inside
// them, so that the CPU of the snapshots' own INFO everything (hundreds of
// commandstats lines) is left out. The counts leave out the window's own
// calls: Close's result is what the servers did for others.
type Window struct {
	conns  []redis.Conn
	before []Snapshot
	cpu    []time.Duration
}

// Open starts a window on conns, one connection to each server.
func Open(conns []redis.Conn) (*Window, error) {
	w := &Window{conns: conns, before: make([]Snapshot, len(conns)), cpu: make([]time.Duration, len(conns))}
	for i, c := range conns {
		s, err := Take(c)
		if err != nil {
			return nil, err
		}
		w.before[i] = s
	}
	for i, c := range conns {
		cpu, err := CPU(c)
		if err != nil {
			return nil, err
		}
		w.cpu[i] = cpu
	}
	return w, nil
}

// Close ends the window: what each server did in it, by conns' order.
func (w *Window) Close() ([]Snapshot, error) {
	out := make([]Snapshot, len(w.conns))
	for i, c := range w.conns {
		cpu, err := CPU(c)
		if err != nil {
			return nil, err
		}
		out[i].CPU = cpu - w.cpu[i]
	}
	for i, c := range w.conns {
		s, err := Take(c)
		if err != nil {
			return nil, err
		}
		d := s.Sub(w.before[i])
		// The two INFO cpu: a read, a write and a request each.
		d.Reads -= 2
		d.Writes -= 2
		d.NetIn -= 2 * cpuRequestBytes
		d.CPU = out[i].CPU
		out[i] = d
	}
	return out, nil
}

var cpuRequestBytes = int64(len("*2\r\n$4\r\nINFO\r\n$3\r\ncpu\r\n"))

// CPU is the server's CPU time so far, user and system, from INFO cpu.
func CPU(conn redis.Conn) (time.Duration, error) {
	text, err := redis.String(conn.Do("INFO", "cpu"))
	if err != nil {
		return 0, fmt.Errorf("redisstat: INFO cpu: %w", err)
	}
	s, err := Parse(text)
	return s.CPU, err
}
