package redisstat_test

import (
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/harness"
	"github.com/pulse-dev/pulse/internal/testenv/redisstat"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// TestWindowCountsOnlyOthers: a window around one pipelined round trip of
// three commands and one script call, sent on another connection, counts
// exactly that, the window's own INFO calls left out.
func TestWindowCountsOnlyOthers(t *testing.T) {
	if !redistest.Installed() {
		t.Skip("redis-server not installed")
	}
	srv := redistest.Start(t)
	meter, work := srv.Pool().Get(), srv.Pool().Get()
	defer meter.Close()
	defer work.Close()
	if _, err := work.Do("PING"); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		w, err := redisstat.Open([]redis.Conn{meter})
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"a", "b"} {
			if err := work.Send("SET", k, "1"); err != nil {
				t.Fatal(err)
			}
		}
		if err := work.Send("EVAL", "return redis.call('INCR', KEYS[1])", 1, "c"); err != nil {
			t.Fatal(err)
		}
		if _, err := redis.DoWithTimeout(work, harness.Hang, ""); err != nil {
			t.Fatal(err)
		}
		got, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		d := got[0]
		wantIn := int64(len("*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\n1\r\n")*2 +
			len("*4\r\n$4\r\nEVAL\r\n$34\r\nreturn redis.call('INCR', KEYS[1])\r\n$1\r\n1\r\n$1\r\nc\r\n"))
		if d.Writes != 1 || d.Reads != 1 || d.Commands() != 4 || d.Scripts() != 1 || d.NetIn != wantIn {
			t.Fatalf("window: %d writes, %d reads, %d commands, %d scripts, %d bytes in; want 1, 1, 4, 1, %d (%v)",
				d.Writes, d.Reads, d.Commands(), d.Scripts(), d.NetIn, wantIn, d.Calls)
		}
	}
}

func TestMedianInterval(t *testing.T) {
	for _, c := range []struct {
		xs     []float64
		median float64
	}{{nil, 0}, {[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := redisstat.Median(c.xs); got != c.median {
			t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.median)
		}
	}
	xs := []float64{1, 1.1, 0.9, 1.05, 0.95, 1.02, 0.98, 5, 1.01, 0.99, 1}
	lo, hi := redisstat.Interval(xs)
	if m := redisstat.Median(xs); lo > m || hi < m || lo < 0.9 || hi > 1.1 {
		t.Errorf("Interval(%v) = %v–%v around median %v: want it around the median and the outlier left out", xs, lo, hi, m)
	}
}
