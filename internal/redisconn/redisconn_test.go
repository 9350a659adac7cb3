package redisconn_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		want redisconn.Class
	}{
		{nil, redisconn.OK},
		{errors.New("dial tcp: connection refused"), redisconn.Transient},
		{redis.Error("OOM command not allowed when used memory > 'maxmemory'."), redisconn.Transient},
		{redis.Error("READONLY You can't write against a read only replica."), redisconn.Transient},
		{redis.Error("LOADING Redis is loading the dataset in memory"), redisconn.Transient},
		{redis.Error("BUSY Redis is busy running a script."), redisconn.Transient},
		{redis.Error("MOVED 3999 127.0.0.1:6381"), redisconn.Transient},
		{redis.Error("TRYAGAIN Multiple keys request during rehashing of slot"), redisconn.Transient},
		{redis.Error("ERR something nobody planned for"), redisconn.Transient},
		{redis.Error("WRONGTYPE Operation against a key holding the wrong kind of value"), redisconn.KeyPermanent},
		{redis.Error("ERR hash value is not an integer"), redisconn.KeyPermanent},
		{redis.Error("ERR increment or decrement would overflow"), redisconn.KeyPermanent},
		{redis.Error("NOSCRIPT No matching script. Please use EVAL."), redisconn.NoScript},
		{fmt.Errorf("wrapped: %w", redis.Error("WRONGTYPE x")), redisconn.KeyPermanent},
	}
	for _, tt := range tests {
		if got := redisconn.Classify(tt.err); got != tt.want {
			t.Errorf("Classify(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// IsUnsupportedScript tells a server that cannot run a script with a
// flags line (it fails to compile it, or does not know a flag) from
// every other error: the replies of Redis 6 and miniredis as they word
// them, and Redis 7's own to a flag it does not know.
func TestIsUnsupportedScript(t *testing.T) {
	srv := redistest.Start(t)
	conn := srv.Pool().Get()
	_, unknownFlag := conn.Do("EVAL", "#!lua flags=no-such-flag\nreturn 1", 0)
	conn.Close()
	tests := []struct {
		name string
		err  error
		want bool
	}{
		{"redis 6", redis.Error("ERR Error compiling script (new function): user_script:1: unexpected symbol near '#'"), true},
		{"miniredis", redis.Error("ERR Error compiling script (new function): <string> line:1(column:1) near '#':   syntax error "), true},
		{"redis 7, unknown flag", unknownFlag, true},
		{"wrapped", fmt.Errorf("trim: %w", redis.Error("ERR Error compiling script (new function): x")), true},
		{"no script", redis.Error("NOSCRIPT No matching script. Please use EVAL."), false},
		{"busy", redis.Error("BUSY Redis is busy running a script."), false},
		{"error inside a script", redis.Error("ERR user_script:1: Script attempted to access nonexistent global variable 'x'"), false},
		{"connection", errors.New("dial tcp 127.0.0.1:1: connect: connection refused"), false},
		{"none", nil, false},
	}
	for _, tt := range tests {
		if got := redisconn.IsUnsupportedScript(tt.err); got != tt.want {
			t.Errorf("%s: IsUnsupportedScript(%v) = %v, want %v", tt.name, tt.err, got, tt.want)
		}
	}
}

var echoScript = redisconn.NewScript(`return redis.call('INCRBY', KEYS[1], ARGV[1])`)

// On one server: scripts by SHA with the source sent once after a SCRIPT
// FLUSH, error replies per command, and a pool that cannot dial marks its
// commands as never sent.
func TestRouterOneServer(t *testing.T) {
	srv := redistest.Start(t)
	r := redisconn.NewRouter(srv.Pool())
	srv.Do("SCRIPT", "FLUSH")
	replies := r.Do([]redisconn.Cmd{
		echoScript.Cmd([]string{"a"}, 2),
		{Key: "s", Name: "SET", Args: []any{"s", "x"}},
		{Key: "s", Name: "INCR", Args: []any{"s"}},
		echoScript.Cmd([]string{"a"}, 3),
	}, redisconn.Options{})
	if v, err := redis.Int(replies[0].Value, replies[0].Err); err != nil || v != 2 {
		t.Errorf("script after SCRIPT FLUSH: %v, %v", v, err)
	}
	if replies[1].Err != nil || redisconn.Classify(replies[2].Err) != redisconn.KeyPermanent {
		t.Errorf("SET then INCR of a string: %v, %v", replies[1].Err, replies[2].Err)
	}
	if v, _ := redis.Int(replies[3].Value, replies[3].Err); v != 5 {
		t.Errorf("second script call: %v", v)
	}

	down := &redis.Pool{Dial: func() (redis.Conn, error) { return nil, errors.New("no server here") }}
	rep := redisconn.NewRouter(down).Do([]redisconn.Cmd{{Key: "k", Name: "GET", Args: []any{"k"}}}, redisconn.Options{})[0]
	if rep.Err == nil || !rep.Unsent {
		t.Errorf("a pool that cannot dial: %+v, want an error and Unsent", rep)
	}

	// DoContext returns when its context ends, even with Redis hung.
	srv.Pause()
	defer srv.Resume()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	// A default timeout of a minute, so that honouring the 100 ms context
	// and not doing so are told apart by far more than a loaded machine's
	// delay (internal/testenv/harness).
	rep = r.DoContext(ctx, []redisconn.Cmd{{Key: "k", Name: "GET", Args: []any{"k"}}}, redisconn.Options{Timeout: time.Minute})[0]
	// The context's end or the read timeout it sets, whichever is seen
	// first: either way an error, well before the minute.
	if rep.Err == nil || time.Since(start) > 30*time.Second {
		t.Errorf("DoContext on a hung server: %v after %v", rep.Err, time.Since(start))
	}
}

// On a cluster: commands on keys of every node in one call, each answered
// in order; WAIT with too many replicas asked makes their writes unsure.
func TestRouterCluster(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	r := redisconn.NewRouter(cl.Client(t))
	if !r.IsCluster() {
		t.Fatal("a redisc cluster is not seen as one")
	}
	var cmds []redisconn.Cmd
	nodes := map[string]bool{}
	for i := range 60 {
		key := fmt.Sprintf("k%d", i)
		nodes[cl.MasterOf(key).Addr] = true
		cmds = append(cmds, echoScript.Cmd([]string{key}, i))
	}
	if len(nodes) != 3 {
		t.Fatalf("keys on %d nodes, want 3", len(nodes))
	}
	for i, rep := range r.Do(cmds, redisconn.Options{WaitReplicas: 1}) {
		if v, err := redis.Int(rep.Value, rep.Err); err != nil || v != i {
			t.Errorf("k%d: %v, %v", i, v, err)
		}
	}
	replies := r.Do(cmds[:3], redisconn.Options{WaitReplicas: 2, Timeout: 500 * time.Millisecond})
	var nr *redisconn.NotReplicatedError
	if !errors.As(replies[0].Err, &nr) || nr.Want != 2 || nr.Got != 1 {
		t.Errorf("WAIT 2 with one replica each: %v", replies[0].Err)
	}
	if v := cl.Do(t, "k1", "GET", "k1"); v == nil {
		t.Error("k1 not written")
	}
}

// A command answered MOVED makes the next call read the slot map again:
// grouped by the old map with a key that stays, a moved key goes to its
// old node once, then to its new one.
func TestRouterRereadsSlotMap(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	r := redisconn.NewRouter(cl.Client(t))
	const moving = "moving"
	from := cl.MasterOf(moving)
	stays := ""
	for i := 0; stays == ""; i++ {
		if k := fmt.Sprintf("stays%d", i); cl.MasterOf(k).Addr == from.Addr && redisc.Slot(k) != redisc.Slot(moving) {
			stays = k
		}
	}
	cmds := []redisconn.Cmd{
		{Key: stays, Name: "SET", Args: []any{stays, "1"}},
		{Key: moving, Name: "SET", Args: []any{moving, "1"}},
	}
	for i, rep := range r.Do(cmds, redisconn.Options{}) {
		if rep.Err != nil {
			t.Fatalf("before the move, command %d: %v", i, rep.Err)
		}
	}
	var to *redistest.Server
	for _, m := range cl.Masters() {
		if m.Addr != from.Addr {
			to = m
		}
	}
	cl.MigrateSlot(t, redisc.Slot(moving), to)
	if rep := r.Do(cmds, redisconn.Options{})[1]; !redisconn.IsRouting(rep.Err) {
		t.Errorf("by the old map: %+v, want MOVED", rep)
	}
	if rep := r.Do(cmds, redisconn.Options{})[1]; rep.Err != nil {
		t.Errorf("once MOVED was seen: %v", rep.Err)
	}
}

// spinScript keeps its node busy for ARGV[1] µs and returns when it
// started and ended, in µs of the node's clock (one machine's, shared by
// every node of the test cluster).
var spinScript = redisconn.NewScript(`
local function now() local t = redis.call('TIME') return t[1] * 1000000 + t[2] end
local from = now()
local to = from
while to - from < tonumber(ARGV[1]) do to = now() end
return {from, to}`)

// OneNodeAtATime runs the nodes' pipelines one after the other: no two
// nodes' spins overlap.
func TestRouterOneNodeAtATime(t *testing.T) {
	cl := redistest.SharedCluster(t)
	r := redisconn.NewRouter(cl.Client(t))
	r.OneNodeAtATime()
	var cmds []redisconn.Cmd
	nodes := map[*redistest.Server]bool{}
	for i := 0; len(nodes) < 3; i++ {
		key := fmt.Sprintf("spin%d", i)
		if n := cl.MasterOf(key); !nodes[n] {
			nodes[n] = true
			cmds = append(cmds, spinScript.Cmd([]string{key}, 20_000))
		}
	}
	type span struct{ from, to int64 }
	var spans []span
	for i, rep := range r.Do(cmds, redisconn.Options{}) {
		v, err := redis.Int64s(rep.Value, rep.Err)
		if err != nil || len(v) != 2 {
			t.Fatalf("node %d: %v, %v", i, v, err)
		}
		spans = append(spans, span{v[0], v[1]})
	}
	slices.SortFunc(spans, func(a, b span) int { return cmp.Compare(a.from, b.from) })
	for i := 1; i < len(spans); i++ {
		if spans[i].from < spans[i-1].to {
			t.Errorf("nodes ran at once: %v and %v", spans[i-1], spans[i])
		}
	}
}

// The slot map names, for every slot, the master that serves it, with one
// number per master.
func TestRouterSlotMap(t *testing.T) {
	cl := redistest.SharedCluster(t)
	r := redisconn.NewRouter(cl.Client(t))
	slots, err := r.SlotMap()
	if err != nil {
		t.Fatal(err)
	}
	if slots.Nodes() != 4 {
		t.Errorf("%d node numbers for 3 masters, want 4 (0: none)", slots.Nodes())
	}
	numbers := map[string]int{}
	for i := range 200 {
		key := fmt.Sprintf("slotmap%d", i)
		slot, want := redisc.Slot(key), cl.MasterOf(key).Addr
		if got := slots.Addr(slot); got != want {
			t.Fatalf("slot %d: %q, want %q", slot, got, want)
		}
		if n, ok := numbers[want]; ok && n != slots.Node(slot) {
			t.Errorf("master %s has numbers %d and %d", want, n, slots.Node(slot))
		}
		numbers[want] = slots.Node(slot)
	}
	if again, _ := r.SlotMap(); again != slots {
		t.Error("the map changed with the cluster unchanged")
	}
	if plain, err := redisconn.NewRouter(&redis.Pool{}).SlotMap(); plain != nil || err != nil {
		t.Errorf("one server: %v, %v; want no map", plain, err)
	}
}
