package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	miniserver "github.com/alicebob/miniredis/v2/server"
	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/redisinfo"
	"github.com/pulse-dev/pulse/timeseries"
)

// Timeouts of every Redis connection: an outage then costs a flush a
// bounded wait.
var redisDialOptions = []redis.DialOption{
	redis.DialConnectTimeout(time.Second),
	redis.DialReadTimeout(2 * time.Second),
	redis.DialWriteTimeout(2 * time.Second),
}

// openRedis connects to REDIS_URL. With none set it starts a private
// redis-server (the binary localServer names, redis-server by default),
// or, when none is installed or localServer is "embedded", an in-process
// Redis, so the example runs on a machine with no servers. When the server
// named is a Redis Cluster node (INFO cluster says cluster_enabled:1) it
// returns a cluster client seeded with that node and every addr=host:port
// query parameter of the URL.
func openRedis(rawURL, localServer string, logger *slog.Logger) (timeseries.Pool, func(), error) {
	if rawURL == "" {
		return openLocalRedis(localServer, logger)
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return nil, nil, fmt.Errorf("example: REDIS_URL %q: want redis://[user:pass@]host:port[/db][?addr=host:port...]", rawURL)
	}
	seeds := append([]string{u.Host}, u.Query()["addr"]...)
	u.RawQuery = "" // the addr parameters are ours, not the driver's
	single := u.String()
	pool := newPool(func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, single, redisDialOptions...)
	})
	clustered, err := isCluster(pool)
	if err != nil {
		// Not fatal: the recorder buffers and the counters fall back to
		// SQL until Redis is back. Without an answer, one server is assumed.
		logger.Warn("redis is not reachable yet; assuming a single server", "url", redacted(u), "err", err)
		return pool, func() { pool.Close() }, nil
	}
	if !clustered {
		logger.Info("using Redis, single server", "url", redacted(u))
		return pool, func() { pool.Close() }, nil
	}
	pool.Close()
	cluster := newCluster(seeds, u, logger)
	return cluster, func() { cluster.Close() }, nil
}

// openEmbeddedRedis starts an in-process Redis; its counts vanish when the
// example stops. why says in the log why it is not a redis-server.
func openEmbeddedRedis(why string, logger *slog.Logger) (*redis.Pool, func(), error) {
	embedded, err := startEmbeddedRedis()
	if err != nil {
		return nil, nil, err
	}
	logger.Warn("REDIS_URL is not set: using an embedded in-process Redis; counts vanish when the example stops; docs/deployment.md lists where it differs from Redis",
		"addr", embedded.Addr(), "redis", "embedded", "why", why)
	pool := newPool(func(ctx context.Context) (redis.Conn, error) {
		return redis.DialContext(ctx, "tcp", embedded.Addr(), redisDialOptions...)
	})
	return pool, func() { pool.Close(); embedded.Close() }, nil
}

// startEmbeddedRedis starts the embedded server on a free loopback port.
// Its keys expire as the clock passes, as a server's do: left to itself
// it expires nothing, and a lock or lease whose holder stopped renewing
// it would be held for good. PFCOUNT of several keys answers the count of
// their union, as Redis does (see unionPFCOUNT).
func startEmbeddedRedis() (*miniredis.Miniredis, error) {
	embedded, err := miniredis.Run()
	if err != nil {
		return nil, fmt.Errorf("example: embedded redis: %w", err)
	}
	embedded.ClockTTL(true)
	embedded.Server().SetPreHook(unionPFCOUNT(embedded))
	return embedded, nil
}

// unionPFCOUNT answers PFCOUNT of several keys with the cardinality of
// their union, where the embedded server sums their counts: it merges
// them into a key of its own, counts it and deletes it. Every other
// command, and PFCOUNT of one key, goes to the server as sent.
func unionPFCOUNT(m *miniredis.Miniredis) miniserver.Hook {
	var seq atomic.Uint64
	return func(c *miniserver.Peer, cmd string, args ...string) bool {
		if cmd != "PFCOUNT" || len(args) < 2 {
			return false
		}
		db := m.DB(0)
		tmp := fmt.Sprintf("pulse:embedded:pfcount:%d", seq.Add(1))
		defer db.Del(tmp)
		if err := db.HllMerge(tmp, args...); err != nil {
			c.WriteError(err.Error())
			return true
		}
		n, err := db.HllCount(tmp)
		if err != nil {
			c.WriteError(err.Error())
			return true
		}
		c.WriteInt(n)
		return true
	}
}

// isCluster asks the server behind pool whether it is a Redis Cluster
// node.
func isCluster(pool *redis.Pool) (bool, error) {
	conn := pool.Get()
	defer conn.Close()
	info, err := redis.String(conn.Do("INFO", "cluster"))
	if err != nil {
		return false, err
	}
	return redisinfo.Field(info, "cluster_enabled") == "1", nil
}

// newCluster is a cluster client that finds the cluster's layout from
// seeds, logging in as u says.
func newCluster(seeds []string, u *url.URL, logger *slog.Logger) *redisc.Cluster {
	cluster := &redisc.Cluster{
		StartupNodes: seeds,
		DialOptions:  clusterDialOptions(u),
		CreatePool: func(addr string, opts ...redis.DialOption) (*redis.Pool, error) {
			return newPool(func(ctx context.Context) (redis.Conn, error) {
				return redis.DialContext(ctx, "tcp", addr, opts...)
			}), nil
		},
	}
	if err := cluster.Refresh(); err != nil {
		logger.Warn("redis cluster layout not read yet", "err", err)
	}
	logger.Info("using Redis Cluster", "seeds", strings.Join(seeds, ","))
	return cluster
}

// clusterDialOptions are the options of a connection to any node: the
// timeouts, and the user, password and TLS of u.
func clusterDialOptions(u *url.URL) []redis.DialOption {
	opts := append([]redis.DialOption{}, redisDialOptions...)
	if u.User != nil {
		if name := u.User.Username(); name != "" {
			opts = append(opts, redis.DialUsername(name))
		}
		if pass, ok := u.User.Password(); ok {
			opts = append(opts, redis.DialPassword(pass))
		}
	}
	if u.Scheme == "rediss" {
		opts = append(opts, redis.DialUseTLS(true))
	}
	return opts
}

func newPool(dial func(context.Context) (redis.Conn, error)) *redis.Pool {
	return &redis.Pool{
		MaxIdle:     16,
		IdleTimeout: 4 * time.Minute,
		DialContext: dial,
		TestOnBorrow: func(c redis.Conn, idle time.Time) error {
			if time.Since(idle) < time.Minute {
				return nil
			}
			_, err := c.Do("PING")
			return err
		},
	}
}

// redacted is u without its password, for the log.
func redacted(u *url.URL) string { return u.Redacted() }
