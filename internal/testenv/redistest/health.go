package redistest

import (
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisinfo"
)

// check returns why the cluster is not ok yet, or nil.
func (c *Cluster) check() error {
	// Each running node's own line: what the others must agree with.
	selves := map[string]nodeLine{}
	views := map[*Server][]nodeLine{}
	var running []*Server
	for _, s := range c.nodes {
		if !s.proc.Running() {
			continue
		}
		nodes, err := s.clusterNodes()
		if err != nil {
			return err
		}
		for _, n := range nodes {
			if n.has("myself") {
				selves[n.id] = n
			}
		}
		running = append(running, s)
		views[s] = nodes
	}
	var firstMap string
	for _, s := range running {
		if err := checkInfo(s); err != nil {
			return err
		}
		if err := checkView(s, views[s], selves, len(running)); err != nil {
			return err
		}
		if selfOf(views[s]).has("slave") {
			if err := checkLink(s); err != nil {
				return err
			}
		}
		m := slotMap(views[s])
		if firstMap == "" {
			firstMap = m
		} else if m != firstMap {
			return fmt.Errorf("%s has another slot map than %s", s.Addr, running[0].Addr)
		}
	}
	return nil
}

// checkInfo wants s to see the cluster ok with every slot served.
func checkInfo(s *Server) error {
	info, err := redis.String(s.do("CLUSTER", "INFO"))
	if err != nil {
		return fmt.Errorf("%s: CLUSTER INFO: %w", s.Addr, err)
	}
	if st := redisinfo.Field(info, "cluster_state"); st != "ok" {
		return fmt.Errorf("%s: cluster_state:%s", s.Addr, st)
	}
	if n := redisinfo.Field(info, "cluster_slots_ok"); n != strconv.Itoa(slots) {
		return fmt.Errorf("%s: cluster_slots_ok:%s", s.Addr, n)
	}
	return nil
}

// checkLink wants the replica s in sync with its master.
func checkLink(s *Server) error {
	r, err := redis.String(s.do("INFO", "replication"))
	if err != nil {
		return fmt.Errorf("%s: INFO: %w", s.Addr, err)
	}
	if st := redisinfo.Field(r, "master_link_status"); st != "up" {
		return fmt.Errorf("%s: master_link_status:%s", s.Addr, st)
	}
	return nil
}

// checkView wants s's CLUSTER NODES (view) to know every running node,
// with the role it has by its own line (selves), none failing and no slot
// half-migrated.
func checkView(s *Server, view []nodeLine, selves map[string]nodeLine, running int) error {
	seen := 0
	for _, n := range view {
		self, ok := selves[n.id]
		if !ok {
			continue // a stopped node
		}
		seen++
		if n.has("fail") || n.has("fail?") || n.has("handshake") || n.has("noaddr") || (!n.has("myself") && !n.connected) {
			return fmt.Errorf("%s sees %s as %s (%s)", s.Addr, n.addr, strings.Join(n.flags, ","), n.link)
		}
		// A master ignores a manual failover request from a node it
		// does not know as its replica yet, so roles must agree.
		if n.has("master") != self.has("master") || n.master != self.master {
			return fmt.Errorf("%s sees %s as %s of %s; it is %s of %s", s.Addr, n.addr,
				strings.Join(n.flags, ","), n.master, strings.Join(self.flags, ","), self.master)
		}
		if len(n.migrating) > 0 {
			return fmt.Errorf("%s: slots being migrated: %v", s.Addr, n.migrating)
		}
	}
	if seen != running {
		return fmt.Errorf("%s knows %d of the %d running nodes", s.Addr, seen, running)
	}
	return nil
}

func selfOf(nodes []nodeLine) nodeLine {
	for _, n := range nodes {
		if n.has("myself") {
			return n
		}
	}
	return nodeLine{}
}

// Reset makes the cluster fit for the next test: nodes left stopped or
// killed are restarted, paused ones resumed, slots left half-migrated made
// stable, maxmemory set back to 0 on every node and every master flushed.
// It waits until the cluster is ok.
func (c *Cluster) Reset(tb testing.TB) {
	tb.Helper()
	for _, s := range c.nodes {
		s.Resume()
		if !s.proc.Running() {
			c.RestartNode(tb, s)
		}
	}
	// Every node runs again, so each command below must succeed: they
	// are bounded by harness.Hang (check), not by the 2 s of polling.
	for _, s := range c.nodes {
		text, err := redis.String(s.check("CLUSTER", "NODES"))
		if err != nil {
			tb.Fatalf("redistest: CLUSTER NODES on %s: %v", s.Addr, err)
		}
		nodes, err := parseNodes(text)
		if err != nil {
			tb.Fatal(err)
		}
		for _, n := range nodes {
			if !n.has("myself") {
				continue
			}
			for _, slot := range n.migrating {
				if _, err := s.check("CLUSTER", "SETSLOT", slot, "STABLE"); err != nil {
					tb.Fatalf("redistest: SETSLOT %d STABLE on %s: %v", slot, s.Addr, err)
				}
			}
		}
		if _, err := s.check("CONFIG", "SET", "maxmemory", "0"); err != nil {
			tb.Fatalf("redistest: CONFIG SET maxmemory 0 on %s: %v", s.Addr, err)
		}
	}
	for _, s := range c.Masters() {
		if _, err := s.check("FLUSHALL"); err != nil {
			tb.Fatalf("redistest: FLUSHALL on %s: %v", s.Addr, err)
		}
	}
	c.WaitOK(tb)
}
