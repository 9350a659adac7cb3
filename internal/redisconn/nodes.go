package redisconn

import "github.com/mna/redisc"

// GroupByNode sorts keys by the node serving them, for calls that reach
// many keys of one node at once (see Script.NodeCmd). It returns, per
// node, its address ("" on one server) and the indices of its keys, nodes
// in the order their first key comes. The grouping follows the slot map Do
// routes by, so a Cmd keyed by any key of a group goes to that group's
// node.
func (r *Router) GroupByNode(keys []string) (addrs []string, groups [][]int, err error) {
	if len(keys) == 0 {
		return nil, nil, nil
	}
	if r.cluster == nil {
		all := make([]int, len(keys))
		for i := range all {
			all[i] = i
		}
		return []string{""}, [][]int{all}, nil
	}
	slots, err := r.slotMap()
	if err != nil {
		return nil, nil, err
	}
	byAddr := map[string]int{}
	for i, k := range keys {
		addr := slots.Addr(redisc.Slot(k))
		g, ok := byAddr[addr]
		if !ok {
			g = len(groups)
			byAddr[addr] = g
			addrs = append(addrs, addr)
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return addrs, groups, nil
}

// NodeCmd is a call of the script that declares no keys, sent to the node
// serving route's slot. Declaring none spares the call the cluster's
// slot checks, so the script can reach every key of that node it is given
// in args: its source must start with the Redis 7 flags line
// "#!lua flags=allow-cross-slot-keys", and it must call redis.pcall on
// keys the node may no longer serve (their slot moved or migrating), whose
// error reply it then gets instead of aborting.
func (s *Script) NodeCmd(route string, args ...any) Cmd {
	a := make([]any, 0, 1+len(args))
	a = append(a, 0)
	a = append(a, args...)
	return Cmd{Key: route, Name: "EVALSHA", Args: a, script: s}
}

// SlotMap returns the master of every slot, by the map Do routes by: the
// same *Slots until the map is read again, so a caller may keep what it
// derived from it while the pointer is the same. On one server it returns
// nil.
func (r *Router) SlotMap() (*Slots, error) {
	if r.cluster == nil {
		return nil, nil
	}
	return r.slotMap()
}
