package fleet

import (
	"context"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/testenv/bench"
	"github.com/pulse-dev/pulse/timeseries"
)

// Target is the Redis a fleet writes to: private servers started for the
// run, or addresses given.
type Target struct {
	Addrs   []string
	Cluster bool
	stop    func()
}

// StartTarget starts a private redis-server, or a cluster of three masters
// when cluster is set (see bench.StartRedis and bench.StartCluster).
func StartTarget(ctx context.Context, cluster bool) (*Target, error) {
	if !cluster {
		s, err := bench.StartRedis(ctx)
		if err != nil {
			return nil, err
		}
		return &Target{Addrs: []string{s.Addr}, stop: s.Stop}, nil
	}
	c, err := bench.StartCluster(ctx)
	if err != nil {
		return nil, err
	}
	return &Target{Addrs: c.Addrs(), Cluster: true, stop: c.Stop}, nil
}

// Stop stops the servers StartTarget started; a no-op for given ones.
func (t *Target) Stop() {
	if t.stop != nil {
		t.stop()
	}
}

// dialPool is the recorders' pool for cfg's Redis and how to close it.
func dialPool(cfg Config) (timeseries.Pool, func(), error) {
	opts := []redis.DialOption{redis.DialConnectTimeout(5 * time.Second),
		redis.DialReadTimeout(5 * time.Second), redis.DialWriteTimeout(5 * time.Second)}
	if !cfg.Cluster {
		addr := cfg.Addrs[0]
		p := &redis.Pool{MaxIdle: 64, Dial: func() (redis.Conn, error) { return redis.Dial("tcp", addr, opts...) }}
		return p, func() { p.Close() }, nil
	}
	c := &redisc.Cluster{StartupNodes: cfg.Addrs, DialOptions: opts,
		CreatePool: func(addr string, opts ...redis.DialOption) (*redis.Pool, error) {
			return &redis.Pool{MaxIdle: 64, Dial: func() (redis.Conn, error) { return redis.Dial("tcp", addr, opts...) }}, nil
		}}
	if err := c.Refresh(); err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("fleet: cluster %v: %w", cfg.Addrs, err)
	}
	return c, func() { c.Close() }, nil
}
