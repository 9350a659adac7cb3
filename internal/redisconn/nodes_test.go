package redisconn_test

import (
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// setAllScript sets every key in ARGV on the node it runs on, answering
// per key OK or the error reply of a key that node does not serve.
var setAllScript = redisconn.NewScript(`#!lua flags=allow-cross-slot-keys
local out = {#KEYS}
for i = 1, #ARGV do out[#out + 1] = redis.pcall('SET', ARGV[i], 'x') end
return out
`)

// GroupByNode puts each key with the keys of the master that serves it,
// and one NodeCmd per group, keyed by the group's first key, sets all of
// them in one script call per node, declaring no keys. A key of another
// node in the same call gets its own error reply; the others still run.
func TestGroupByNodeAndNodeCmd(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	r := redisconn.NewRouter(cl.Client(t))
	keys := make([]string, 90)
	for i := range keys {
		keys[i] = fmt.Sprintf("node:%d", i)
	}
	addrs, groups, err := r.GroupByNode(keys)
	if err != nil {
		t.Fatal(err)
	}
	if len(groups) != 3 || len(addrs) != 3 {
		t.Fatalf("%d groups, %d addresses, want 3", len(groups), len(addrs))
	}
	var cmds []redisconn.Cmd
	for g, idx := range groups {
		args := []any{}
		for _, i := range idx {
			if got := cl.MasterOf(keys[i]).Addr; got != addrs[g] {
				t.Errorf("%s grouped with %s, served by %s", keys[i], addrs[g], got)
			}
			args = append(args, keys[i])
		}
		stranger := keys[groups[(g+1)%3][0]]
		cmds = append(cmds, setAllScript.NodeCmd(keys[idx[0]], append(args, stranger)...))
	}
	for g, rep := range r.Do(cmds, redisconn.Options{}) {
		vals, err := redis.Values(rep.Value, rep.Err)
		if err != nil {
			t.Fatalf("node %s: %v", addrs[g], err)
		}
		if n, _ := redis.Int(vals[0], nil); n != 0 {
			t.Errorf("node %s: the call declared %d keys, want 0", addrs[g], n)
		}
		if e, ok := vals[len(vals)-1].(redis.Error); !ok {
			t.Errorf("node %s: a key of another node answered %v, want an error", addrs[g], vals[len(vals)-1])
		} else if redisconn.ClassifyReply(string(e)) != redisconn.Transient {
			t.Errorf("node %s: %v is not transient", addrs[g], e)
		}
	}
	for _, k := range keys {
		if v := cl.Do(t, k, "GET", k); v == nil {
			t.Errorf("%s not set", k)
		}
	}
}

// On one server every key is in the one group, of address "".
func TestGroupByNodeOneServer(t *testing.T) {
	srv := redistest.Start(t)
	r := redisconn.NewRouter(srv.Pool())
	addrs, groups, err := r.GroupByNode([]string{"a", "b", "c"})
	if err != nil || len(addrs) != 1 || addrs[0] != "" || len(groups) != 1 || len(groups[0]) != 3 {
		t.Fatalf("GroupByNode = %q, %v, %v; want one group of all", addrs, groups, err)
	}
	rep := r.Do([]redisconn.Cmd{setAllScript.NodeCmd("a", "a", "b")}, redisconn.Options{})[0]
	if vals, err := redis.Values(rep.Value, rep.Err); err != nil || len(vals) != 3 {
		t.Fatalf("NodeCmd on one server: %v, %v", vals, err)
	}
	if v := srv.Do("GET", "b"); v == nil {
		t.Error("b not set")
	}
}
