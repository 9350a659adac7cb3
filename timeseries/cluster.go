package timeseries

import (
	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// nodePlan is how a cluster round groups writes while a slot map holds:
// by slot, the marker of the node serving it. A node's marker is named
// with a hash tag of the lowest slot the node serves, so it stays the
// same while the map does, and lives on that node. It keeps a marker per
// node, not per slot, so the collector has no 16,384 pointers to follow.
type nodePlan struct {
	from    *redisconn.Slots // the slot map it was made from
	markers []string         // by node number of from
}

// newNodePlan makes the plan of slot map slots; base is the recorder's
// marker name before its tag.
func newNodePlan(slots *redisconn.Slots, base string) *nodePlan {
	p := &nodePlan{from: slots, markers: make([]string, slots.Nodes())}
	for s := range redisc.HashSlots {
		if n := slots.Node(s); p.markers[n] == "" {
			p.markers[n] = nodeMarker(base, s)
		}
	}
	return p
}

// marker is the marker of the node serving slot.
func (p *nodePlan) marker(slot int) string { return p.markers[p.from.Node(slot)] }

// nodeMarker is the node marker tagged to land in slot.
func nodeMarker(base string, slot int) string { return tagged(base+":n", base+":n", slot) }

// tagged is name followed by a hash tag that lands it in slot. A prefix
// with a hash tag of its own puts every key of the schema in one slot, the
// marker's too; then one node holds them all, the tag would not land, and
// untagged is the name.
func tagged(name, untagged string, slot int) string {
	m := name + "{" + redisconn.SlotTag(slot) + "}"
	if redisc.Slot(m) != slot {
		return untagged
	}
	return m
}

// refreshPlan makes the round's node plan from the router's slot map when
// that changed. It keeps the last plan when the map cannot be read (Redis
// then redirects what went wrong), and drops it when the cluster runs only
// the per-slot script. Called under the Recorder's flushMu, not s.mu: reading the map
// may talk to Redis.
func (s *sender) refreshPlan() {
	if !s.router.IsCluster() {
		return
	}
	if s.perSlotOnly.Load() {
		s.mu.Lock()
		s.plan = nil
		s.mu.Unlock()
		return
	}
	slots, err := s.router.SlotMap()
	if err != nil || slots == nil {
		return
	}
	if p := s.plan; p != nil && p.from == slots {
		return // plan is written under flushMu only, which we hold
	}
	p := newNodePlan(slots, s.markerBase)
	s.mu.Lock()
	s.plan = p
	s.mu.Unlock()
}

// markerFor is the idempotence key of one flush group (the slot of a
// count key on a cluster) and whether its batch is a node batch: on one
// server the recorder's one marker; on a cluster the marker of the node
// serving the slot, or, for a slot found moving or with no node plan, the
// marker of the slot itself. Called under s.mu.
func (s *sender) markerFor(group int) (string, bool) {
	if !s.router.IsCluster() {
		return s.markerBase, false
	}
	if p := s.plan; p != nil {
		if _, moving := s.moving[group]; !moving {
			return p.marker(group), true
		}
	}
	return s.slotMarker(group), false
}

// slotMarker is the marker of one slot's batches, named with a hash tag
// that lands it in that slot, so it moves with the slot.
func (s *sender) slotMarker(slot int) string {
	return tagged(s.markerBase+":", s.markerBase, slot)
}

// groupOf is the flush group of a count key: its slot on a cluster, 0 on
// one server.
func (s *sender) groupOf(key string) int {
	if s.router.IsCluster() {
		return redisc.Slot(key)
	}
	return 0
}
