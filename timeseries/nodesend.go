package timeseries

import (
	"time"

	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// send sends a round's batches in one Do (one pipeline per node) and
// settles each by its reply: on a cluster each node batch as a node
// script call (a round has at most one per node marker, so one per node),
// any other batch (one server's, a slot found moving, a spilled per-slot
// batch, a cluster without the node script) as a flush script call. It
// returns whether any batch was applied, whether any was abandoned (its
// writes wait for the next round, under the slot map read again) and the
// first error.
func (s *sender) send(batches []*batch, timeout time.Duration) (wrote, again bool, firstErr error) {
	if len(batches) == 0 {
		return false, false, nil
	}
	cmds := make([]redisconn.Cmd, len(batches))
	s.mu.Lock()
	for i, b := range batches {
		cmds[i] = s.call(b)
	}
	s.mu.Unlock()
	replies := s.router.Do(cmds, redisconn.Options{Timeout: timeout, WaitReplicas: s.waitReplicas})
	for i, rep := range replies {
		w, ab, err := s.settleReply(batches[i], rep)
		wrote, again = wrote || w, again || ab
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if again {
		s.router.MarkStale()
	}
	return wrote, again, firstErr
}

// call is b's script call: the node script's for a node batch, the flush
// script's for any other. Called under s.mu.
func (s *sender) call(b *batch) redisconn.Cmd {
	if b.Node {
		return s.nodeCmd(b, s.isListed)
	}
	return s.cmd(b, s.isListed)
}

// settleReply settles one batch by the reply to its script call: applied
// (now or before), abandoned, or failed. A failed batch that surely did
// not land goes back to pending; any other stays, to be resent as it is.
func (s *sender) settleReply(b *batch, rep redisconn.Reply) (wrote, abandoned bool, err error) {
	if rep.Err == nil {
		sr, perr := decodeReply(b, rep.Value)
		if perr == nil {
			if sr.status == statusFenced {
				s.abandoned(b, sr)
				return false, true, nil
			}
			s.applied(b, sr)
			return true, false, nil
		}
		rep = redisconn.Reply{Err: perr} // an answer it cannot read: unknown outcome
	}
	if b.Node && rep.Value == nil && redisconn.IsUnsupportedScript(rep.Err) {
		s.perSlotOnly.Store(true)
	}
	s.mu.Lock()
	s.ledger.fail(b, !notApplied(rep))
	s.mu.Unlock()
	return false, false, rep.Err
}

// abandoned settles a node batch Redis fenced. The slot of the key it
// found not on the node, if it names one, is batched per slot from now
// on, until a batch of that slot lands: a slot being migrated then holds
// back its own writes only, not the whole node's.
func (s *sender) abandoned(b *batch, sr scriptReply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if sr.outside != "" {
		s.moving[redisc.Slot(sr.outside)] = struct{}{}
	}
	s.ledger.abandon(b, func(key string) string { return s.slotMarker(redisc.Slot(key)) })
}

// applied settles a batch Redis answered.
func (s *sender) applied(b *batch, sr scriptReply) {
	s.mu.Lock()
	fileDone, refused := s.ledger.settle(b, sr)
	if !b.Node && s.router.IsCluster() {
		delete(s.moving, redisc.Slot(b.Marker)) // the slot has settled
	}
	if b.renewAt != 0 && sr.status == statusApplied {
		s.markerRenewed[b.Marker] = b.renewAt
	}
	s.noteListing(b, sr)
	for _, key := range refused {
		s.status.refused(key)
	}
	s.mu.Unlock()
	if fileDone != "" {
		s.removeSpill(fileDone)
	}
}
