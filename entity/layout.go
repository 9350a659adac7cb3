package entity

import (
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/entity/internal/redisstore"
	"github.com/pulse-dev/pulse/internal/redisconn"
)

// Layout chooses how the cache keeps entities; see Config.Layout.
type Layout string

const (
	// LayoutHash keeps each cached entity in a Redis hash of its own, a
	// field per counter, with a TTL counted from the read that warmed it.
	LayoutHash Layout = "hash"
	// LayoutCompact keeps the entities of a kind in buckets of
	// redisstore.BucketSize consecutive ids, one small hash per bucket and
	// one field per entity whose value packs its counts. Entities nobody
	// touches for one to two TTL/2 periods of Config.Clock leave the cache.
	// It suits ids handed out densely (1, 2, 3...): sparse ids leave one
	// entity in each bucket.
	LayoutCompact Layout = "compact"
	// LayoutSparse keeps LayoutCompact's buckets, values and eviction but
	// puts an entity in a bucket by a hash of its id, so it suits ids of
	// any shape: snowflake ids, random ids, sequences with gaps, dense
	// ids. Each kind has about Kind.Population / 64 buckets.
	LayoutSparse Layout = "sparse"
)

// MaxCompactFields bounds the fields of a kind in the compact layout: a
// packed value of that many counts stays within Redis's default
// hash-max-listpack-value (64 bytes), so buckets keep the compact encoding.
const MaxCompactFields = 8

// validateLayout checks Config.Layout against the kinds.
func (cfg *Config) validateLayout() error {
	switch cfg.Layout {
	case "":
		cfg.Layout = LayoutHash
	case LayoutHash:
	case LayoutCompact, LayoutSparse:
		for _, k := range cfg.Kinds {
			if len(k.Fields) > MaxCompactFields {
				return fmt.Errorf("entity: kind %q has %d fields; the %s layout takes at most %d", k.Name, len(k.Fields), cfg.Layout, MaxCompactFields)
			}
		}
	default:
		return fmt.Errorf("entity: Config.Layout %q is not %q, %q or %q", cfg.Layout, LayoutHash, LayoutCompact, LayoutSparse)
	}
	return nil
}

// bucketed reports whether the layout keeps entities in buckets, packed:
// LayoutCompact and LayoutSparse share their scripts.
func (c *cacheSide) bucketed() bool { return c.layout != LayoutHash }

// entRef names one entity's keys in the layout in use.
type entRef struct {
	kind  string
	id    int64
	key   string // routes its calls: the entity's hash, or its bucket's young hash
	lease string
	marks string // also tells entities apart: unique per entity
	b     redisstore.Bucket
}

func (c *cacheSide) ref(kind string, id int64) entRef {
	if c.bucketed() {
		b := c.bucket(kind, id)
		return entRef{kind: kind, id: id, key: b.Young, lease: b.Lease, marks: b.Marks, b: b}
	}
	k := c.keys.Entity(kind, id)
	return entRef{kind: kind, id: id, key: k, lease: redisstore.LeaseKey(k), marks: redisstore.MarksKey(k)}
}

// bucket names an entity's keys in a bucketed layout. A kind no longer
// declared (met in the stale table) is addressed as if declared with the
// default population.
func (c *cacheSide) bucket(kind string, id int64) redisstore.Bucket {
	if c.layout == LayoutCompact {
		return c.keys.Bucket(kind, id)
	}
	n := redisstore.SparseBuckets(DefaultPopulation)
	if k, ok := c.kinds[kind]; ok {
		n = k.buckets
	}
	return c.keys.Sparse(kind, n, id)
}

// bucketArgs are the arguments every compact script starts with: the time,
// the generation period, the young hash's TTL (whole seconds) and the
// entity's field.
func (c *cacheSide) bucketArgs(r entRef, extra int) []any {
	ttl := int64(c.ttl / time.Second)
	period := max(ttl/2, 1)
	args := make([]any, 0, 4+extra)
	return append(args, c.clock.Now().Unix(), period, ttl, r.b.Field)
}

// readCmd is the read script call of one entity.
func (c *cacheSide) readCmd(k *kindSpec, r entRef, token string) redisconn.Cmd {
	if c.bucketed() {
		ks := []string{r.b.Young, r.b.Old, r.lease}
		if c.writeBehind {
			ks = append(ks, c.keys.Epoch, c.keys.Flushing)
		}
		args := append(c.bucketArgs(r, 2), token, redisstore.LeaseTTL.Milliseconds())
		return redisstore.CompactRead.Cmd(ks, args...)
	}
	args := make([]any, 0, 3+len(k.fields))
	args = append(args, token, redisstore.LeaseTTL.Milliseconds(), redisstore.ColdBelow)
	for _, f := range k.fields {
		args = append(args, f)
	}
	ks := []string{r.key, r.lease}
	if c.writeBehind {
		ks = append(ks, c.keys.Epoch, c.keys.Flushing)
	}
	return redisstore.Read.Cmd(ks, args...)
}

// warmValues puts a warm entity's values from its read reply into out.
func (c *cacheSide) warmValues(reply any, out []int64) error {
	if c.bucketed() {
		packed, err := redis.Bytes(reply, nil)
		if err != nil {
			return err
		}
		return redisstore.Unpack(packed, out)
	}
	fields, _ := redis.Values(reply, nil)
	for j := 0; j < len(out) && j < len(fields); j++ {
		v, err := redis.Int64(fields[j], nil)
		if err != nil {
			return err
		}
		out[j] = v - redisstore.CountOffset
	}
	return nil
}

// warmScript picks the warm script and the keys it takes.
func (c *cacheSide) warmScript(r entRef) (*redisconn.Script, []string, []any) {
	if c.bucketed() {
		ks := []string{r.b.Young, r.b.Old, r.lease, r.marks}
		return redisstore.CompactWarm, ks, c.bucketArgs(r, 0)
	}
	return redisstore.Warm, []string{r.key, r.lease, r.marks}, nil
}

// throughCmd applies a committed write's deltas (field name, delta pairs)
// to the cache.
func (c *cacheSide) throughCmd(w *entityWrite) redisconn.Cmd {
	r := w.ref
	if c.bucketed() {
		k := c.kinds[w.kind]
		args := append(c.bucketArgs(r, 1+len(w.deltas)), w.token)
		for i := 0; i < len(w.deltas); i += 2 {
			args = append(args, k.index[w.deltas[i].(string)]+1, w.deltas[i+1])
		}
		return redisstore.CompactThrough.Cmd([]string{r.b.Young, r.b.Old, r.lease, r.marks}, args...)
	}
	args := append([]any{w.token, redisstore.ColdBelow}, w.deltas...)
	return redisstore.ThroughIncr.Cmd([]string{r.key, r.lease, r.marks}, args...)
}

// behindCmd is a write-behind increment of one counter.
func (c *cacheSide) behindCmd(r entRef, fi int, field string, delta int64) redisconn.Cmd {
	pf := redisstore.PendingField(r.kind, r.id, field)
	if c.bucketed() {
		args := append(c.bucketArgs(r, 3), fi+1, delta, pf)
		return redisstore.CompactBehind.Cmd([]string{r.b.Young, r.b.Old, r.lease, c.keys.Pending}, args...)
	}
	return redisstore.BehindIncr.Cmd([]string{r.key, r.lease, c.keys.Pending}, field, delta, redisstore.ColdBelow, pf)
}

// dropCmds drop an entity's entry and lease and, if token is set, withdraw
// that write mark.
func (c *cacheSide) dropCmds(r entRef, token string) []redisconn.Cmd {
	if c.bucketed() {
		ks := []string{r.b.Young, r.b.Old, r.lease}
		args := []any{r.b.Field}
		if token != "" {
			ks = append(ks, r.marks)
			args = append(args, token)
		}
		return []redisconn.Cmd{redisstore.CompactDrop.Cmd(ks, args...)}
	}
	del := redisconn.Cmd{Key: r.key, Name: "DEL", Args: []any{r.key, r.lease}}
	if token == "" {
		return []redisconn.Cmd{del}
	}
	return []redisconn.Cmd{{Key: r.key, Name: "ZREM", Args: []any{r.marks, token}}, del}
}
