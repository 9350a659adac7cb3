package redistest

import (
	"fmt"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Failover makes master's replica take over with CLUSTER FAILOVER, the
// planned, lossless way: the replica catches up first. It waits until the
// two have swapped roles and the cluster is ok. Clients with the old slot
// map get MOVED; writes to the old master get MOVED too.
func (c *Cluster) Failover(tb testing.TB, master *Server) {
	tb.Helper()
	replica := c.ReplicaOf(master)
	if replica == nil {
		tb.Fatalf("redistest: Failover: %s is not a master with a running replica", master.Addr)
	}
	replicaID, err := replica.nodeID()
	if err != nil {
		tb.Fatal(err)
	}
	var asked time.Time
	err = waitFor(30*time.Second, "failover of "+master.Addr, func() error {
		// A manual failover gives up after 5 s (say, the replica was
		// not in sync yet); ask again then.
		if time.Since(asked) > 6*time.Second {
			if _, err := replica.do("CLUSTER", "FAILOVER"); err != nil {
				return fmt.Errorf("CLUSTER FAILOVER on %s: %w", replica.Addr, err)
			}
			asked = time.Now()
		}
		if me, err := replica.myself(); err != nil || !me.has("master") {
			return fmt.Errorf("%s is not master yet", replica.Addr)
		}
		if me, err := master.myself(); err != nil || !me.has("slave") || me.master != replicaID {
			return fmt.Errorf("%s is not a replica of %s yet", master.Addr, replica.Addr)
		}
		return c.check()
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// KillMaster kills master with SIGKILL, as a crash would, and waits until
// the other nodes have marked it failed, its replica has won the election
// and the cluster is ok again: a few seconds with the 2 s node timeout.
// Writes the replica had not received are lost, as in production; use WAIT
// first to keep them. Clients get connection errors from the dead node
// until they refresh their slot map. RestartNode brings it back.
func (c *Cluster) KillMaster(tb testing.TB, master *Server) {
	tb.Helper()
	if me, err := master.myself(); err != nil || !me.has("master") {
		tb.Fatalf("redistest: KillMaster: %s is not a master", master.Addr)
	}
	replica := c.ReplicaOf(master)
	if replica == nil {
		tb.Fatalf("redistest: KillMaster: %s has no running replica to take over", master.Addr)
	}
	master.Kill()
	err := waitFor(30*time.Second, "promotion of "+replica.Addr, func() error {
		if me, err := replica.myself(); err != nil || !me.has("master") {
			return fmt.Errorf("%s is not master yet", replica.Addr)
		}
		return c.check()
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// RestartNode starts a stopped or killed node again with its data and
// nodes.conf, so it rejoins with its old identity. A master that was
// replaced learns of it from the others and turns into a replica of its
// successor. It waits until the node has synced and the cluster is ok.
func (c *Cluster) RestartNode(tb testing.TB, s *Server) {
	tb.Helper()
	if s.proc.Running() {
		tb.Fatalf("redistest: RestartNode: %s is running; Kill or Stop it first", s.Addr)
	}
	if _, err := s.relaunch(); err != nil {
		tb.Fatal(err)
	}
	// check requires the node's slot map to agree with the others' and a
	// replica's link to be up, which is what rejoining means.
	if err := c.waitOK(30 * time.Second); err != nil {
		tb.Fatal(err)
	}
}

// MigrateSlot moves slot and its keys to the master to, as redis-cli
// --cluster reshard does: SETSLOT IMPORTING on to, MIGRATING on the
// owner, GETKEYSINSLOT and MIGRATE 100 keys at a time, then SETSLOT NODE
// on to, the old owner and every other master. It waits until the cluster
// is ok.
func (c *Cluster) MigrateSlot(tb testing.TB, slot int, to *Server) {
	tb.Helper()
	if err := c.migrate(slot, to, 100, 0); err != nil {
		tb.Fatal(err)
	}
}

// MigrateSlotSlowly is MigrateSlot moving one key at a time and sleeping
// pause after each, so that traffic running meanwhile meets the slot
// half-moved: ASK redirections for keys already moved, TRYAGAIN for
// multi-key commands whose keys are split between the two nodes. It blocks
// until done; run the traffic in another goroutine.
func (c *Cluster) MigrateSlotSlowly(tb testing.TB, slot int, to *Server, pause time.Duration) {
	tb.Helper()
	if err := c.migrate(slot, to, 1, pause); err != nil {
		tb.Fatal(err)
	}
}

func (c *Cluster) migrate(slot int, to *Server, batch int, pause time.Duration) error {
	if slot < 0 || slot >= slots {
		return fmt.Errorf("redistest: no slot %d", slot)
	}
	from := c.ownerOf(slot)
	if from == nil {
		return fmt.Errorf("redistest: MigrateSlot: no master serves slot %d", slot)
	}
	if from == to {
		return nil
	}
	if me, err := to.myself(); err != nil || !me.has("master") {
		return fmt.Errorf("redistest: MigrateSlot: %s is not a master", to.Addr)
	}
	fromID, err := from.nodeID()
	if err != nil {
		return err
	}
	toID, err := to.nodeID()
	if err != nil {
		return err
	}
	if _, err := to.check("CLUSTER", "SETSLOT", slot, "IMPORTING", fromID); err != nil {
		return fmt.Errorf("redistest: SETSLOT %d IMPORTING on %s: %w", slot, to.Addr, err)
	}
	if _, err := from.check("CLUSTER", "SETSLOT", slot, "MIGRATING", toID); err != nil {
		return fmt.Errorf("redistest: SETSLOT %d MIGRATING on %s: %w", slot, from.Addr, err)
	}
	for {
		keys, err := redis.Values(from.check("CLUSTER", "GETKEYSINSLOT", slot, batch))
		if err != nil {
			return fmt.Errorf("redistest: GETKEYSINSLOT %d on %s: %w", slot, from.Addr, err)
		}
		if len(keys) == 0 {
			break
		}
		args := append([]any{"127.0.0.1", to.Port(), "", 0, 5000, "KEYS"}, keys...)
		if _, err := from.check("MIGRATE", args...); err != nil {
			return fmt.Errorf("redistest: MIGRATE slot %d from %s to %s: %w", slot, from.Addr, to.Addr, err)
		}
		time.Sleep(pause)
	}
	// The new owner first, so that from then on the old one redirects to a
	// node that already serves the slot.
	if _, err := to.check("CLUSTER", "SETSLOT", slot, "NODE", toID); err != nil {
		return fmt.Errorf("redistest: SETSLOT %d NODE on %s: %w", slot, to.Addr, err)
	}
	if _, err := from.check("CLUSTER", "SETSLOT", slot, "NODE", toID); err != nil {
		return fmt.Errorf("redistest: SETSLOT %d NODE on %s: %w", slot, from.Addr, err)
	}
	for _, s := range c.Masters() {
		if s == to || s == from {
			continue
		}
		if _, err := s.check("CLUSTER", "SETSLOT", slot, "NODE", toID); err != nil {
			return fmt.Errorf("redistest: SETSLOT %d NODE on %s: %w", slot, s.Addr, err)
		}
	}
	return c.waitOK(30 * time.Second)
}
