package entity

import (
	"context"
	"errors"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// Redis calls go through a redisconn.Router: scripts travel as EVALSHA
// (EVAL once when the server answers NOSCRIPT), and the calls of one batch
// share one pipeline per server, so one round trip on one server and one
// per node, the nodes at once, on a cluster. Every call is bounded by
// CacheTimeout and the caller's deadline.

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

// conn gets a connection (not bound to a cluster node) and the timeout
// its calls get.
func (c *Counters) conn(ctx context.Context) (redis.Conn, time.Duration, error) {
	t, err := c.callTimeout(ctx)
	if err != nil {
		return nil, 0, err
	}
	conn, err := c.router.Get("")
	if err != nil {
		return nil, 0, err
	}
	if err := conn.Err(); err != nil {
		conn.Close()
		return nil, 0, err
	}
	return conn, t, nil
}

// send runs cmds, pipelined per server, and returns their replies.
func (c *Counters) send(ctx context.Context, cmds ...redisconn.Cmd) ([]redisconn.Reply, error) {
	t, err := c.callTimeout(ctx)
	if err != nil {
		return nil, err
	}
	return c.router.Do(cmds, redisconn.Options{Timeout: t}), nil
}

// do runs one command, routed by its first argument.
func (c *Counters) do(ctx context.Context, cmd string, args ...any) (any, error) {
	key := ""
	if len(args) > 0 {
		key, _ = args[0].(string)
	}
	replies, err := c.send(ctx, redisconn.Cmd{Key: key, Name: cmd, Args: args})
	if err != nil {
		return nil, err
	}
	return replies[0].Value, replies[0].Err
}

// runScript runs one script call.
func (c *Counters) runScript(ctx context.Context, call redisconn.Cmd) (any, error) {
	replies, err := c.send(ctx, call)
	if err != nil {
		return nil, err
	}
	return replies[0].Value, replies[0].Err
}

// runScripts runs script calls and returns each call's reply, a
// redis.Error among them for a call the server refused; a lost connection
// fails them all.
func (c *Counters) runScripts(ctx context.Context, calls []redisconn.Cmd) ([]any, error) {
	replies, err := c.send(ctx, calls...)
	if err != nil {
		return nil, err
	}
	out := make([]any, len(replies))
	for i, r := range replies {
		var re redis.Error
		switch {
		case r.Err == nil:
			out[i] = r.Value
		case errors.As(r.Err, &re):
			out[i] = re
		default:
			return nil, r.Err
		}
	}
	return out, nil
}

// pipelineDel deletes each group of keys (one entity's keys each) with one
// DEL per group, pipelined per server.
func (c *Counters) pipelineDel(ctx context.Context, groups [][]any) error {
	if len(groups) == 0 {
		return nil
	}
	cmds := make([]redisconn.Cmd, len(groups))
	for i, g := range groups {
		key, _ := g[0].(string)
		cmds[i] = redisconn.Cmd{Key: key, Name: "DEL", Args: g}
	}
	replies, err := c.send(ctx, cmds...)
	if err != nil {
		return err
	}
	for _, r := range replies {
		if r.Err != nil {
			return r.Err
		}
	}
	return nil
}
