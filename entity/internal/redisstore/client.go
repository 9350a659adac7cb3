package redisstore

import (
	"context"
	"errors"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// Client makes the counters' Redis calls through a redisconn.Router:
// scripts travel as EVALSHA (EVAL once when the server answers NOSCRIPT),
// and the calls of one batch share one pipeline per server, so one round
// trip on one server and one per node, the nodes at once, on a cluster.
// Every call is bounded by the timeout and the caller's deadline.
type Client struct {
	pool    redisconn.Pool
	router  *redisconn.Router
	timeout time.Duration
}

// NewClient wraps pool; it does no I/O.
func NewClient(pool redisconn.Pool, timeout time.Duration) *Client {
	return &Client{pool: pool, router: redisconn.NewRouter(pool), timeout: timeout}
}

// callTimeout is the timeout, or less if ctx ends sooner.
func (c *Client) callTimeout(ctx context.Context) (time.Duration, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return redisconn.Timeout(ctx, c.timeout)
}

// Send runs cmds, pipelined per server, and returns their replies.
func (c *Client) Send(ctx context.Context, cmds ...redisconn.Cmd) ([]redisconn.Reply, error) {
	t, err := c.callTimeout(ctx)
	if err != nil {
		return nil, err
	}
	return c.router.Do(cmds, redisconn.Options{Timeout: t}), nil
}

// Do runs one command, routed by its first argument.
func (c *Client) Do(ctx context.Context, cmd string, args ...any) (any, error) {
	key := ""
	if len(args) > 0 {
		key, _ = args[0].(string)
	}
	return c.Run(ctx, redisconn.Cmd{Key: key, Name: cmd, Args: args})
}

// Run runs one command or script call.
func (c *Client) Run(ctx context.Context, call redisconn.Cmd) (any, error) {
	replies, err := c.Send(ctx, call)
	if err != nil {
		return nil, err
	}
	return replies[0].Value, replies[0].Err
}

// RunAll runs script calls and returns each call's reply, a redis.Error
// among them for a call the server refused; a lost connection fails them
// all.
func (c *Client) RunAll(ctx context.Context, calls []redisconn.Cmd) ([]any, error) {
	replies, err := c.Send(ctx, calls...)
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

// SendAll runs cmds, pipelined per server, and fails with the first
// error of any of them.
func (c *Client) SendAll(ctx context.Context, cmds []redisconn.Cmd) error {
	if len(cmds) == 0 {
		return nil
	}
	replies, err := c.Send(ctx, cmds...)
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

// Cluster reports whether the pool is a Redis Cluster.
func (c *Client) Cluster() bool {
	_, cluster := redisconn.Cluster(c.pool)
	return cluster
}

// idleCounter is a pool that can say how many idle connections it keeps,
// as a *redis.Pool can.
type idleCounter interface {
	IdleCount() int
}

// DiscardDeadConns pings the idle connections a pool kept from before an
// outage, so that the broken ones are dropped now rather than failing the
// next requests.
func (c *Client) DiscardDeadConns(ctx context.Context) {
	p, ok := c.pool.(idleCounter)
	if !ok {
		return
	}
	n := p.IdleCount()
	conns := make([]redis.Conn, 0, n)
	for i := 0; i < n; i++ {
		conn, err := c.conn(ctx)
		if err != nil {
			break
		}
		conns = append(conns, conn)
	}
	for _, conn := range conns {
		_, _ = redis.DoWithTimeout(conn, c.timeout, "PING")
		conn.Close()
	}
}

// conn gets a connection not bound to a cluster node.
func (c *Client) conn(ctx context.Context) (redis.Conn, error) {
	if _, err := c.callTimeout(ctx); err != nil {
		return nil, err
	}
	return c.router.Get("")
}

// Timeout is the bound of one call.
func (c *Client) Timeout() time.Duration { return c.timeout }
