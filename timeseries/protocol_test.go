package timeseries

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries/internal/latency"
)

// The Go and Lua sides of both flush scripts agree on the protocol: a
// call built by cmd or nodeCmd, run on a real redis-server, writes each
// count and lat key from the fields Go put for it, and its reply, read by
// decodeReply, names exactly the keys the script refused (a foreign
// count key, a foreign lat key, a foreign known set) and created; sent
// again, the call is answered as seen.
func TestScriptProtocol(t *testing.T) {
	srv := redistest.Start(t)
	tests := []struct {
		name         string
		node         bool
		foreignKnown bool
		wantCreated  []int
	}{
		{"flush script", false, false, nil},
		{"flush script, known set foreign", false, true, nil},
		// The node script reports created hashes, for listLanded.
		{"node script", true, false, []int{0, 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv.FlushAll()
			r, err := NewRecorder(Config{Pool: srv.Pool(), FlushInterval: time.Hour, OnError: func(error) {}})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close(t.Context())
			expire := time.Now().Unix() + 3600
			b := &batch{Marker: "m", Seq: 7, Node: tt.node,
				Keys: []string{"count:5:a", "count:5:b", "count:5:c"}, Fields: []string{"100", "100", "105"},
				Deltas: []int64{3, 4, 5}, Members: []string{"5:a", "5:b", "5:c"}}
			for _, name := range []string{"a", "b", "c"} {
				b.Lat = append(b.Lat, latDelta{Key: fmt.Sprintf("lat:{count:5:%s}:100", name), Expire: expire,
					Fields: []string{latency.FieldCount, "7", "9"}, Counts: []int64{3, 2, 1}, Sum: 60, Min: 10, Max: 30})
			}
			srv.Do("SET", "count:5:b", "foreign")
			srv.Do("SET", "lat:{count:5:b}:100", "foreign")
			if tt.foreignKnown {
				srv.Do("SET", "known:", "foreign")
			}
			call := func() scriptReply {
				r.mu.Lock()
				cmd := r.sender.cmd(b, func(string) bool { return true })
				if tt.node {
					cmd = r.sender.nodeCmd(b, func(string) bool { return true })
				}
				r.mu.Unlock()
				rep := r.sender.router.Do([]redisconn.Cmd{cmd}, redisconn.Options{Timeout: 5 * time.Second})[0]
				if rep.Err != nil {
					t.Fatal(rep.Err)
				}
				sr, err := decodeReply(b, rep.Value)
				if err != nil {
					t.Fatal(err)
				}
				return sr
			}
			sr := call()
			if sr.status != statusApplied || !slices.Equal(sr.refused, []int{1}) || !slices.Equal(sr.refusedDurations, []int{1}) ||
				sr.known != tt.foreignKnown || !slices.Equal(sr.created, tt.wantCreated) || sr.outside != "" {
				t.Errorf("reply %+v: want applied, count key 1 and lat key 1 refused, known refused %v, created %v",
					sr, tt.foreignKnown, tt.wantCreated)
			}
			for i, key := range []string{"count:5:a", "count:5:c"} {
				if n, _ := redis.Int64(srv.Do("HGET", key, b.Fields[2*i]), nil); n != b.Deltas[2*i] {
					t.Errorf("%s %s = %d, want %d", key, b.Fields[2*i], n, b.Deltas[2*i])
				}
			}
			for _, j := range []int{0, 2} {
				got, _ := redis.StringMap(srv.Do("HGETALL", b.Lat[j].Key), nil)
				want := map[string]string{latency.FieldCount: "3", "7": "2", "9": "1", "s": "60", "min": "10", "max": "30"}
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Errorf("%s = %v, want %v", b.Lat[j].Key, got, want)
				}
				if at, _ := redis.Int64(srv.Do("EXPIRETIME", b.Lat[j].Key), nil); at != expire {
					t.Errorf("%s expires at %d, want %d", b.Lat[j].Key, at, expire)
				}
			}
			if seq, _ := redis.Int64(srv.Do("GET", "m"), nil); seq != b.Seq {
				t.Errorf("marker = %d, want %d", seq, b.Seq)
			}
			if again := call(); again.status != statusSeen {
				t.Errorf("resent: %+v, want seen", again)
			}
		})
	}
}

// A reply's indexes read against a batch of 2 count keys and 2 lat keys:
// count keys 1 and 2, the known set 3, lat keys 4 and 5, created -1 and
// -2; anything else is ignored. A fenced reply names the key not on the
// node.
func TestReadReply(t *testing.T) {
	b := &batch{Keys: []string{"k0", "k1"}, Lat: []latDelta{{Key: "l0"}, {Key: "l1"}}}
	tests := []struct {
		name string
		vals []int64
		want scriptReply
	}{
		{"applied", []int64{1}, scriptReply{status: statusApplied}},
		{"everything", []int64{1, 2, 3, 5, -1}, scriptReply{status: statusApplied, refused: []int{1}, known: true, refusedDurations: []int{1}, created: []int{0}}},
		{"out of range", []int64{1, 0, 6, -3}, scriptReply{status: statusApplied}},
		{"fenced by a count key", []int64{2, 2}, scriptReply{status: statusFenced, outside: "k1"}},
		{"fenced by a lat key", []int64{2, 4}, scriptReply{status: statusFenced, outside: "l0"}},
		{"fenced", []int64{2}, scriptReply{status: statusFenced}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := readReply(b, tt.vals); fmt.Sprintf("%+v", got) != fmt.Sprintf("%+v", tt.want) {
				t.Errorf("readReply(%v) = %+v, want %+v", tt.vals, got, tt.want)
			}
		})
	}
}
