package redisconn

import (
	"cmp"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"
)

// Cmd is one command of a pipeline. Key routes it: on a cluster it goes
// to the node serving Key's slot, so every key the command names must be
// in that slot.
type Cmd struct {
	Key    string
	Name   string
	Args   []any
	script *Script
}

// Reply is one command's outcome. A command that failed because the
// connection did has the connection's error; Unsent says it never left
// the process (no connection could be had), so it surely had no effect.
type Reply struct {
	Value  any
	Err    error
	Unsent bool
}

// Script is a Lua script sent as EVALSHA, and as EVAL only when the server
// answers NOSCRIPT, so its source crosses the network once per server.
type Script struct {
	src  string
	hash string
}

// NewScript returns a script for src.
func NewScript(src string) *Script {
	h := sha1.Sum([]byte(src))
	return &Script{src: src, hash: hex.EncodeToString(h[:])}
}

// Cmd is a call of the script with keys and args; it is routed by the
// first key, so all keys must share a slot on a cluster.
func (s *Script) Cmd(keys []string, args ...any) Cmd {
	a := make([]any, 0, 1+len(keys)+len(args))
	a = append(a, len(keys))
	for _, k := range keys {
		a = append(a, k)
	}
	a = append(a, args...)
	key := ""
	if len(keys) > 0 {
		key = keys[0]
	}
	return Cmd{Key: key, Name: "EVALSHA", Args: a, script: s}
}

// NotReplicatedError is the error of the commands of a node whose WAIT
// saw fewer replicas acknowledge them than asked for. Their effect is on
// the master but may be lost with it: write them again (idempotently).
type NotReplicatedError struct{ Want, Got int }

func (e *NotReplicatedError) Error() string {
	return fmt.Sprintf("redisconn: WAIT: %d of %d replicas acknowledged", e.Got, e.Want)
}

// Options tune Do.
type Options struct {
	// Timeout bounds the whole call (default 2 s).
	Timeout time.Duration
	// WaitReplicas, when > 0, ends every node's pipeline with WAIT: the
	// commands of a node count as failed unless that many replicas
	// acknowledged them within the timeout.
	WaitReplicas int
}

// Router runs pipelines against one server or a cluster. On a cluster it
// splits them per node and runs the nodes' pipelines at once. Safe for
// concurrent use.
type Router struct {
	pool    Pool
	cluster *redisc.Cluster

	mu    sync.Mutex
	slots *Slots // nil until read
	stale bool

	oneNodeAtATime bool // see OneNodeAtATime
}

// OneNodeAtATime makes r run the nodes' pipelines one after the other.
// Benchmarks measure a cluster's CPU per node so: nodes that share a
// machine's cores slow each other down while they run at once, which
// nodes on machines of their own do not. Call it before r is used.
func (r *Router) OneNodeAtATime() { r.oneNodeAtATime = true }

// NewRouter returns a Router over p.
func NewRouter(p Pool) *Router {
	c, _ := Cluster(p)
	return &Router{pool: p, cluster: c}
}

// Pool is the pool the router was made with.
func (r *Router) Pool() Pool { return r.pool }

// IsCluster reports whether the router talks to a Redis Cluster.
func (r *Router) IsCluster() bool { return r.cluster != nil }

// contextPool is a pool whose wait for a connection can be bounded, as a
// *redis.Pool's can (when it is set to Wait for a free one).
type contextPool interface {
	GetContext(ctx context.Context) (redis.Conn, error)
}

// Get returns a connection for commands on key: on a cluster, bound to the
// node serving key's slot. A pool hands out a failed dial as a connection;
// Get returns its error instead.
func (r *Router) Get(key string) (redis.Conn, error) {
	return r.getBefore(key, time.Time{})
}

// getBefore is Get that waits for a free pooled connection no later than
// deadline (zero: as long as the pool says).
func (r *Router) getBefore(key string, deadline time.Time) (redis.Conn, error) {
	var conn redis.Conn
	if p, ok := r.pool.(contextPool); ok && !deadline.IsZero() {
		ctx, cancel := context.WithDeadline(context.Background(), deadline)
		c, err := p.GetContext(ctx)
		cancel()
		if err != nil {
			return nil, err
		}
		conn = c
	} else {
		conn = r.pool.Get()
	}
	if err := conn.Err(); err != nil {
		conn.Close()
		return nil, err
	}
	if r.cluster != nil {
		if err := redisc.BindConn(conn, key); err != nil {
			conn.Close()
			return nil, err
		}
	}
	return conn, nil
}

// Do sends cmds and returns one reply per command, in order. On a cluster
// the commands are grouped by the node that serves their key, and each
// node's group is one pipeline. A NOSCRIPT reply is answered by sending
// the script's source once, on the same connection.
func (r *Router) Do(cmds []Cmd, opt Options) []Reply {
	if opt.Timeout <= 0 {
		opt.Timeout = 2 * time.Second
	}
	replies := make([]Reply, len(cmds))
	if len(cmds) > 0 {
		r.run(cmds, replies, time.Now().Add(opt.Timeout), opt.WaitReplicas)
	}
	return replies
}

// DoContext is Do that returns as soon as ctx ends, with ctx's error for
// every command. The abandoned pipeline finishes in the background within
// the timeout; what it did is unknown, as after a lost connection.
func (r *Router) DoContext(ctx context.Context, cmds []Cmd, opt Options) []Reply {
	if ctx.Done() == nil {
		return r.Do(cmds, opt)
	}
	t, err := Timeout(ctx, opt.Timeout)
	if err != nil {
		return failed(len(cmds), cmp.Or(ctx.Err(), err))
	}
	opt.Timeout = t
	done := make(chan []Reply, 1)
	go func() { done <- r.Do(cmds, opt) }()
	select {
	case replies := <-done:
		return replies
	case <-ctx.Done():
		return failed(len(cmds), ctx.Err())
	}
}

// failed is n replies with err.
func failed(n int, err error) []Reply {
	replies := make([]Reply, n)
	for i := range replies {
		replies[i].Err = err
	}
	return replies
}

// run groups cmds per node and runs each node's pipeline, all at once,
// filling in replies. A reply saying the cluster's layout changed (MOVED,
// ASK, TRYAGAIN...) or a node that could not be reached makes the next
// call read the slot map again.
func (r *Router) run(cmds []Cmd, replies []Reply, deadline time.Time, waitReplicas int) {
	groups, err := r.group(cmds)
	if err != nil {
		for i := range replies {
			replies[i].Err = err
		}
		return
	}
	if len(groups) == 1 || r.oneNodeAtATime {
		for _, g := range groups {
			r.runNode(cmds, g, replies, deadline, waitReplicas)
		}
	} else {
		var wg sync.WaitGroup
		for _, g := range groups {
			wg.Go(func() { r.runNode(cmds, g, replies, deadline, waitReplicas) })
		}
		wg.Wait()
	}
	if slices.ContainsFunc(replies, func(rep Reply) bool { return IsRouting(rep.Err) }) {
		r.MarkStale()
	}
}

// group lists the command indices per node; on one server, all of them.
func (r *Router) group(cmds []Cmd) ([][]int, error) {
	if r.cluster == nil {
		all := make([]int, len(cmds))
		for i := range all {
			all[i] = i
		}
		return [][]int{all}, nil
	}
	slots, err := r.slotMap()
	if err != nil {
		return nil, err
	}
	byAddr := map[string]int{}
	var groups [][]int
	for i, c := range cmds {
		addr := slots.Addr(redisc.Slot(c.Key))
		g, ok := byAddr[addr]
		if !ok {
			g = len(groups)
			byAddr[addr] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups, nil
}

// runNode runs the pipeline of one node's commands, idx: a first round with
// scripts by SHA and, for the scripts the node did not have, a second one
// with their source; with WAIT after each when waitReplicas > 0.
func (r *Router) runNode(cmds []Cmd, idx []int, replies []Reply, deadline time.Time, waitReplicas int) {
	conn, err := r.getBefore(cmds[idx[0]].Key, deadline)
	if err != nil {
		for _, i := range idx {
			replies[i] = Reply{Err: err, Unsent: true}
		}
		return
	}
	defer conn.Close()
	p := &pipeline{conn: conn, deadline: deadline, replicas: waitReplicas, cmds: cmds, replies: replies, node: idx}
	noscript, ok := p.round(idx, false)
	if ok && len(noscript) > 0 {
		_, ok = p.round(noscript, true)
	}
	if ok {
		p.finish()
	}
}
