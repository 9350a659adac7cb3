// Package redisconn is what Pulse's packages share about talking to Redis:
// the Pool interface that a *redis.Pool and a *redisc.Cluster both satisfy,
// the classification of error replies, and pipelines that are split per
// cluster node.
package redisconn
