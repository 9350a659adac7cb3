package redisconn

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"
)

// MarkStale makes the next Do read the cluster's slot map again.
func (r *Router) MarkStale() {
	r.mu.Lock()
	r.stale = true
	r.mu.Unlock()
}

// slotMap returns the master of every slot, reading it from the cluster
// when not yet known or marked stale.
func (r *Router) slotMap() (*Slots, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.slots != nil && !r.stale {
		return r.slots, nil
	}
	if r.stale {
		// Let the cluster client find the new layout too; it only does
		// so by itself on MOVED, not when a node went away.
		_ = r.cluster.Refresh()
	}
	slots, err := readSlots(r.cluster)
	if err != nil {
		if r.slots != nil {
			return r.slots, nil // keep routing by the last map; MOVED will tell
		}
		return nil, err
	}
	r.slots, r.stale = slots, false
	return slots, nil
}

// errEnough is how readSlots stops redisc's EachNode, which visits nodes
// until its function returns an error, once one node has answered: the
// other nodes need not be dialed. It never leaves readSlots.
var errEnough = errors.New("redisconn: slot map read")

// readSlots asks the cluster's masters, one after the other, which master
// serves each slot, and keeps the first answer.
func readSlots(c *redisc.Cluster) (*Slots, error) {
	var slots *Slots
	var lastErr error
	tried := 0
	err := c.EachNode(false, func(_ string, conn redis.Conn) error {
		tried++
		v, err := redis.Values(redis.DoWithTimeout(conn, time.Second, "CLUSTER", "SLOTS"))
		if err != nil {
			lastErr = err
			return nil
		}
		slots = parseSlots(v)
		return errEnough
	})
	switch {
	case slots != nil:
		return slots, nil
	case err == nil && lastErr != nil:
		err = lastErr
	case err == nil:
		err = fmt.Errorf("no node answered (%d tried)", tried)
	}
	return nil, fmt.Errorf("redisconn: read cluster slots: %w", err)
}

// parseSlots turns a CLUSTER SLOTS reply into the master of every slot;
// slots the reply leaves out have "".
func parseSlots(ranges []any) *Slots {
	s := &Slots{addrs: []string{""}, node: make([]uint16, redisc.HashSlots)}
	index := map[string]uint16{"": 0}
	for _, rng := range ranges {
		parts, err := redis.Values(rng, nil)
		if err != nil || len(parts) < 3 {
			continue
		}
		from, _ := redis.Int(parts[0], nil)
		to, _ := redis.Int(parts[1], nil)
		node, err := redis.Values(parts[2], nil)
		if err != nil || len(node) < 2 {
			continue
		}
		host, _ := redis.String(node[0], nil)
		port, _ := redis.Int(node[1], nil)
		addr := net.JoinHostPort(host, strconv.Itoa(port))
		n, ok := index[addr]
		if !ok {
			n = uint16(len(s.addrs))
			index[addr] = n
			s.addrs = append(s.addrs, addr)
		}
		for slot := max(from, 0); slot <= to && slot < redisc.HashSlots; slot++ {
			s.node[slot] = n
		}
	}
	return s
}

// Slots is a cluster's slot map: which master serves each slot. It keeps a
// node number per slot rather than an address: 16,384 strings would be as
// many pointers for the garbage collector to follow at every cycle, for a
// map that changes only when the cluster does.
type Slots struct {
	addrs []string // by node number; number 0 is "", no master
	node  []uint16 // by slot
}

// Addr is the address of the master serving slot, "" for none.
func (s *Slots) Addr(slot int) string { return s.addrs[s.node[slot]] }

// Node is the number of the master serving slot: 0 for none, else 1 to
// Nodes()-1, the same number for every slot of one master.
func (s *Slots) Node(slot int) int { return int(s.node[slot]) }

// Nodes is one more than the highest node number.
func (s *Slots) Nodes() int { return len(s.addrs) }
