package redisconn

import (
	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"
)

// Pool hands out connections. A *redis.Pool (one server) and a
// *redisc.Cluster (Redis Cluster) both satisfy it; the caller owns it and
// closes it.
type Pool interface {
	Get() redis.Conn
}

var (
	_ Pool = (*redis.Pool)(nil)
	_ Pool = (*redisc.Cluster)(nil)
)

// Cluster returns p as a *redisc.Cluster when it is one.
func Cluster(p Pool) (*redisc.Cluster, bool) {
	c, ok := p.(*redisc.Cluster)
	return c, ok && c != nil
}
