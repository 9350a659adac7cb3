package entity

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// Redis calls. Every call is bounded by CacheTimeout (and the caller's
// deadline) through DoWithTimeout, which both a pooled connection and a
// cluster connection implement.

// callTimeout is CacheTimeout, or less if ctx ends sooner.
func (c *Counters) callTimeout(ctx context.Context) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	t := c.cacheTimeout
	if d, ok := ctx.Deadline(); ok {
		if left := time.Until(d); left < t {
			t = left
		}
	}
	if t <= 0 {
		return 0, context.DeadlineExceeded
	}
	return t, nil
}

// contextPool is a pool whose wait for a connection can be bounded, as a
// *redis.Pool's can.
type contextPool interface {
	GetContext(ctx context.Context) (redis.Conn, error)
}

// conn gets a connection and the timeout its calls get.
func (c *Counters) conn(ctx context.Context) (redis.Conn, time.Duration, error) {
	t, err := c.callTimeout(ctx)
	if err != nil {
		return nil, 0, err
	}
	var conn redis.Conn
	if p, ok := c.pool.(contextPool); ok {
		gctx, cancel := context.WithTimeout(ctx, t)
		conn, err = p.GetContext(gctx)
		cancel()
		if err != nil {
			return nil, 0, err
		}
	} else {
		conn = c.pool.Get()
	}
	if err := conn.Err(); err != nil {
		conn.Close()
		return nil, 0, err
	}
	return conn, t, nil
}

// do runs one command on a fresh connection.
func (c *Counters) do(ctx context.Context, cmd string, args ...any) (any, error) {
	conn, t, err := c.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if len(args) > 0 {
		if key, ok := args[0].(string); ok {
			bindKey(conn, key)
		}
	}
	return redis.DoWithTimeout(conn, t, cmd, args...)
}

// bindKey ties a cluster connection to the node of key; a no-op otherwise.
func bindKey(conn redis.Conn, key string) {
	_ = redisc.BindConn(conn, key)
}

// evalArgs is one script call: the number of keys, the keys, the args.
type evalArgs []any

func scriptCall(keys []string, args ...any) evalArgs {
	out := make(evalArgs, 0, 1+len(keys)+len(args))
	out = append(out, len(keys))
	for _, k := range keys {
		out = append(out, k)
	}
	return append(out, args...)
}

func isNoScript(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(string(re), "NOSCRIPT")
}

// runScript runs one script on a fresh connection, by its hash and, if the
// server does not know it, by its source.
func (c *Counters) runScript(ctx context.Context, s *luaScript, call evalArgs) (any, error) {
	conn, t, err := c.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	if len(call) > 1 {
		if key, ok := call[1].(string); ok {
			bindKey(conn, key)
		}
	}
	reply, err := redis.DoWithTimeout(conn, t, "EVALSHA", append([]any{s.hash}, call...)...)
	if isNoScript(err) {
		reply, err = redis.DoWithTimeout(conn, t, "EVAL", append([]any{s.src}, call...)...)
	}
	return reply, err
}

// runScripts runs one script once per call and returns each call's reply,
// a redis.Error among them for a call the server refused. On one server
// the calls share one pipeline (one round trip); on a cluster, where each
// entity may live on another node, each call goes on its own.
func (c *Counters) runScripts(ctx context.Context, s *luaScript, calls []evalArgs) ([]any, error) {
	if _, cluster := redisconn.Cluster(c.pool); cluster {
		out := make([]any, len(calls))
		for i, call := range calls {
			r, err := c.runScript(ctx, s, call)
			var re redis.Error
			if err != nil && !errors.As(err, &re) {
				return nil, err
			}
			if err != nil {
				r = re
			}
			out[i] = r
		}
		return out, nil
	}
	conn, t, err := c.conn(ctx)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	send := func(cmd, body string, idx []int) ([]any, error) {
		for _, i := range idx {
			if err := conn.Send(cmd, append([]any{body}, calls[i]...)...); err != nil {
				return nil, err
			}
		}
		reply, err := redis.DoWithTimeout(conn, t, "")
		if err != nil {
			return nil, err
		}
		list, ok := reply.([]any)
		if !ok || len(list) != len(idx) {
			return nil, fmt.Errorf("pipeline answered %T for %d calls", reply, len(idx))
		}
		return list, nil
	}
	all := make([]int, len(calls))
	for i := range all {
		all[i] = i
	}
	out, err := send("EVALSHA", s.hash, all)
	if err != nil {
		return nil, err
	}
	var retry []int
	for i, r := range out {
		if e, ok := r.(redis.Error); ok && isNoScript(e) {
			retry = append(retry, i)
		}
	}
	if len(retry) > 0 {
		// Refused calls did not run: run them by source.
		again, err := send("EVAL", s.src, retry)
		if err != nil {
			return nil, err
		}
		for x, i := range retry {
			out[i] = again[x]
		}
	}
	return out, nil
}

// pipelineDel deletes each group of keys (one entity's keys each) with one
// DEL per group: one round trip on one server, one call per group on a
// cluster.
func (c *Counters) pipelineDel(ctx context.Context, groups [][]any) error {
	if len(groups) == 0 {
		return nil
	}
	if _, cluster := redisconn.Cluster(c.pool); cluster {
		for _, g := range groups {
			if _, err := c.do(ctx, "DEL", g...); err != nil {
				return err
			}
		}
		return nil
	}
	conn, t, err := c.conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	for _, g := range groups {
		if err := conn.Send("DEL", g...); err != nil {
			return err
		}
	}
	reply, err := redis.DoWithTimeout(conn, t, "")
	if err != nil {
		return err
	}
	if list, ok := reply.([]any); ok {
		for _, r := range list {
			if e, ok := r.(redis.Error); ok {
				return e
			}
		}
	}
	return nil
}
