package redisconn

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"strconv"
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
	slots []string // master address per slot; nil until read
	stale bool
}

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
// node serving key's slot.
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
	deadline := time.Now().Add(opt.Timeout)
	replies := make([]Reply, len(cmds))
	if len(cmds) == 0 {
		return replies
	}
	groups, err := r.group(cmds)
	if err != nil {
		for i := range replies {
			replies[i].Err = err
		}
		return replies
	}
	if len(groups) == 1 {
		r.run(cmds, groups[0], replies, deadline, opt.WaitReplicas)
	} else {
		var wg sync.WaitGroup
		for _, g := range groups {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r.run(cmds, g, replies, deadline, opt.WaitReplicas)
			}()
		}
		wg.Wait()
	}
	for _, rep := range replies {
		if IsRouting(rep.Err) {
			r.MarkStale()
			break
		}
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
	if dl, ok := ctx.Deadline(); ok && (opt.Timeout <= 0 || time.Until(dl) < opt.Timeout) {
		opt.Timeout = max(time.Until(dl), time.Millisecond)
	}
	done := make(chan []Reply, 1)
	go func() { done <- r.Do(cmds, opt) }()
	select {
	case replies := <-done:
		return replies
	case <-ctx.Done():
		replies := make([]Reply, len(cmds))
		for i := range replies {
			replies[i].Err = ctx.Err()
		}
		return replies
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
		addr := slots[redisc.Slot(c.Key)]
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

// run sends one node's pipeline and fills in its replies.
func (r *Router) run(cmds []Cmd, idx []int, replies []Reply, deadline time.Time, waitReplicas int) {
	var noscript []int
	// fail gives err to the commands not yet answered: those from position
	// from on, and those waiting to be sent again as EVAL.
	fail := func(from int, err error) {
		for _, i := range idx[from:] {
			replies[i] = Reply{Err: err}
		}
		for _, i := range noscript {
			replies[i] = Reply{Err: err}
		}
	}
	conn, err := r.getBefore(cmds[idx[0]].Key, deadline)
	if err == nil {
		err = conn.Err() // a pool hands out a failed dial as a conn
		if err != nil {
			conn.Close()
		}
	}
	if err != nil {
		for _, i := range idx {
			replies[i] = Reply{Err: err, Unsent: true}
		}
		return
	}
	defer conn.Close()
	for _, i := range idx {
		c := cmds[i]
		args := c.Args
		if c.script != nil {
			args = append([]any{c.script.hash}, c.Args...)
		}
		if err := conn.Send(c.Name, args...); err != nil {
			fail(0, err)
			return
		}
	}
	if waitReplicas > 0 {
		ms := max(time.Until(deadline).Milliseconds()/2, 1)
		if err := conn.Send("WAIT", waitReplicas, ms); err != nil {
			fail(0, err)
			return
		}
	}
	if err := conn.Flush(); err != nil {
		fail(0, err)
		return
	}
	for n, i := range idx {
		v, err := redis.ReceiveWithTimeout(conn, max(time.Until(deadline), time.Millisecond))
		if err != nil && Classify(err) == NoScript && cmds[i].script != nil {
			noscript = append(noscript, i)
			continue
		}
		if err != nil && !isReply(err) {
			fail(n, err)
			return
		}
		replies[i] = Reply{Value: v, Err: err}
	}
	answered := len(idx) // every command of the first pipeline has its reply
	var waitErr error
	if waitReplicas > 0 {
		got, err := redis.Int(redis.ReceiveWithTimeout(conn, max(time.Until(deadline), time.Millisecond)))
		switch {
		case err != nil && !isReply(err):
			fail(0, err) // not knowing whether replicas have it is not having it
			return
		case err != nil:
			waitErr = err
		case got < waitReplicas:
			waitErr = &NotReplicatedError{Want: waitReplicas, Got: got}
		}
	}
	if len(noscript) > 0 {
		for _, i := range noscript {
			c := cmds[i]
			if err := conn.Send("EVAL", append([]any{c.script.src}, c.Args...)...); err != nil {
				fail(answered, err)
				return
			}
		}
		if waitReplicas > 0 {
			ms := max(time.Until(deadline).Milliseconds()/2, 1)
			_ = conn.Send("WAIT", waitReplicas, ms)
		}
		if err := conn.Flush(); err != nil {
			fail(answered, err)
			return
		}
		for len(noscript) > 0 {
			v, err := redis.ReceiveWithTimeout(conn, max(time.Until(deadline), time.Millisecond))
			if err != nil && !isReply(err) {
				fail(len(idx), err)
				return
			}
			replies[noscript[0]] = Reply{Value: v, Err: err}
			noscript = noscript[1:]
		}
		if waitReplicas > 0 {
			got, err := redis.Int(redis.ReceiveWithTimeout(conn, max(time.Until(deadline), time.Millisecond)))
			switch {
			case err != nil && !isReply(err):
				fail(0, err)
				return
			case err != nil:
				waitErr = err
			case got < waitReplicas:
				waitErr = &NotReplicatedError{Want: waitReplicas, Got: got}
			}
		}
	}
	if waitErr != nil {
		for _, i := range idx {
			if replies[i].Err == nil {
				replies[i].Err = waitErr
			}
		}
	}
}

func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// MarkStale makes the next Do read the cluster's slot map again.
func (r *Router) MarkStale() {
	r.mu.Lock()
	r.stale = true
	r.mu.Unlock()
}

// slotMap returns the master address of every slot, reading it from the
// cluster when not yet known or marked stale.
func (r *Router) slotMap() ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slots != nil && !r.stale {
		return r.slots, nil
	}
	if r.stale {
		// Let the cluster client find the new layout too; it only does
		// so by itself on MOVED, not when a node went away.
		_ = r.cluster.Refresh()
	}
	slots, err := readSlots(r.cluster)
	if err != nil {
		if r.slots != nil {
			return r.slots, nil // keep routing by the last map; MOVED will tell
		}
		return nil, err
	}
	r.slots, r.stale = slots, false
	return slots, nil
}

// readSlots asks the cluster which master serves each slot.
func readSlots(c *redisc.Cluster) ([]string, error) {
	var lastErr error
	tried := 0
	err := c.EachNode(false, func(_ string, conn redis.Conn) error {
		tried++
		v, err := redis.Values(redis.DoWithTimeout(conn, time.Second, "CLUSTER", "SLOTS"))
		if err != nil {
			lastErr = err
			return nil
		}
		slots := make([]string, redisc.HashSlots)
		for _, rng := range v {
			parts, err := redis.Values(rng, nil)
			if err != nil || len(parts) < 3 {
				continue
			}
			from, _ := redis.Int(parts[0], nil)
			to, _ := redis.Int(parts[1], nil)
			node, err := redis.Values(parts[2], nil)
			if err != nil || len(node) < 2 {
				continue
			}
			host, _ := redis.String(node[0], nil)
			port, _ := redis.Int(node[1], nil)
			addr := net.JoinHostPort(host, strconv.Itoa(port))
			for s := from; s <= to && s < redisc.HashSlots; s++ {
				slots[s] = addr
			}
		}
		lastErr = nil
		return errFound{slots}
	})
	var found errFound
	if errors.As(err, &found) {
		return found.slots, nil
	}
	if err == nil {
		err = lastErr
	}
	if err == nil {
		err = fmt.Errorf("no node answered (%d tried)", tried)
	}
	return nil, fmt.Errorf("redisconn: read cluster slots: %w", err)
}

// errFound stops EachNode at the first node that answered.
type errFound struct{ slots []string }

func (errFound) Error() string { return "found" }
