package timeseries

import (
	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// markerFor is the idempotence key of one flush group.
func (r *Recorder) markerFor(group int) string {
	base := r.schema.Prefix + "pulse:flushed:" + r.id
	if !r.router.IsCluster() {
		return base
	}
	m := base + ":{" + redisconn.SlotTag(group) + "}"
	if redisc.Slot(m) != group {
		// The prefix carries a hash tag of its own, so every key of the
		// schema, this one too, is in the prefix's slot.
		return base
	}
	return m
}

// groupOf is the flush group of a count key: its slot on a cluster, 0 on
// one server.
func (r *Recorder) groupOf(key string) int {
	if r.router.IsCluster() {
		return redisc.Slot(key)
	}
	return 0
}
