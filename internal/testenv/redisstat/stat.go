// Package redisstat reads what a redis-server has done, from one INFO
// call, and summarises repeated measurements: the counts that do not
// wobble (commands, script calls, round trips, bytes) and the CPU time that
// does, as a median with a bootstrap interval.
package redisstat

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Snapshot is one server's counters at one moment.
type Snapshot struct {
	// CPU is used_cpu_user + used_cpu_sys: the whole process, network
	// and protocol work, AOF writes and replication included.
	CPU time.Duration
	// Calls and Usec are INFO commandstats by lower-case command name:
	// calls count the commands scripts run too; usec is each command's
	// own time, a script's including what it runs.
	Calls map[string]int64
	Usec  map[string]int64
	// Reads and Writes are total_reads_processed and
	// total_writes_processed: the read and write events of client
	// connections. A pipelined round trip is one of each (a request
	// larger than Redis's 16 KiB read buffer takes more reads); Writes
	// counts round trips.
	Reads, Writes int64
	// NetIn and NetOut are total_net_input_bytes and
	// total_net_output_bytes.
	NetIn, NetOut int64
	// UsedMemory is used_memory, bytes.
	UsedMemory int64
	// Keys is the key count of db0.
	Keys int64
}

// Take reads a Snapshot with one INFO call on conn. That call itself
// counts in the next Snapshot: one write, one INFO, its request bytes.
func Take(conn redis.Conn) (Snapshot, error) {
	text, err := redis.String(conn.Do("INFO", "everything"))
	if err != nil {
		return Snapshot{}, fmt.Errorf("redisstat: INFO: %w", err)
	}
	return Parse(text)
}

// Parse reads a Snapshot from INFO's text.
func Parse(text string) (Snapshot, error) {
	s := Snapshot{Calls: map[string]int64{}, Usec: map[string]int64{}}
	ints := map[string]*int64{
		"total_reads_processed": &s.Reads, "total_writes_processed": &s.Writes,
		"total_net_input_bytes": &s.NetIn, "total_net_output_bytes": &s.NetOut,
		"used_memory": &s.UsedMemory,
	}
	for line := range strings.Lines(text) {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch {
		case ints[k] != nil:
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return s, fmt.Errorf("redisstat: %s: %w", line, err)
			}
			*ints[k] = n
		case k == "used_cpu_user" || k == "used_cpu_sys":
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return s, fmt.Errorf("redisstat: %s: %w", line, err)
			}
			s.CPU += time.Duration(f * float64(time.Second))
		case strings.HasPrefix(k, "cmdstat_"):
			if err := s.command(strings.TrimPrefix(k, "cmdstat_"), v); err != nil {
				return s, fmt.Errorf("redisstat: %s: %w", line, err)
			}
		case k == "db0":
			keys, _, _ := strings.Cut(strings.TrimPrefix(v, "keys="), ",")
			s.Keys, _ = strconv.ParseInt(keys, 10, 64)
		}
	}
	return s, nil
}

// command reads one commandstats line's calls and usec.
func (s *Snapshot) command(name, fields string) error {
	for f := range strings.SplitSeq(fields, ",") {
		k, v, _ := strings.Cut(f, "=")
		if k != "calls" && k != "usec" {
			continue
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return err
		}
		if k == "calls" {
			s.Calls[name] = n
		} else {
			s.Usec[name] = n
		}
	}
	return nil
}

// Sub is what happened between before and s, the INFO that read before
// left out (see Take).
func (s Snapshot) Sub(before Snapshot) Snapshot {
	d := Snapshot{CPU: s.CPU - before.CPU, Calls: map[string]int64{}, Usec: map[string]int64{},
		Reads: s.Reads - before.Reads - 1, Writes: s.Writes - before.Writes - 1,
		NetIn: s.NetIn - before.NetIn - infoRequestBytes, NetOut: s.NetOut - before.NetOut,
		UsedMemory: s.UsedMemory, Keys: s.Keys}
	for name, n := range s.Calls {
		if name == "info" {
			continue
		}
		if c := n - before.Calls[name]; c != 0 {
			d.Calls[name] = c
			d.Usec[name] = s.Usec[name] - before.Usec[name]
		}
	}
	return d
}

// infoRequestBytes is the size of Take's request, INFO everything, in RESP.
var infoRequestBytes = int64(len("*2\r\n$4\r\nINFO\r\n$10\r\neverything\r\n"))

// Commands is the commands run, those inside scripts included.
func (s Snapshot) Commands() int64 {
	var n int64
	for _, c := range s.Calls {
		n += c
	}
	return n
}

// Scripts is the script calls: EVAL, EVALSHA and FCALL.
func (s Snapshot) Scripts() int64 {
	return s.Calls["eval"] + s.Calls["evalsha"] + s.Calls["fcall"]
}
