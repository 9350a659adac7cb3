package timeseries

import (
	"errors"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"
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
func (r *Recorder) send(batches []*batch, timeout time.Duration) (wrote, again bool, firstErr error) {
	if len(batches) == 0 {
		return false, false, nil
	}
	cmds := make([]redisconn.Cmd, len(batches))
	r.mu.Lock()
	for i, b := range batches {
		cmds[i] = r.call(b)
	}
	r.mu.Unlock()
	replies := r.router.Do(cmds, redisconn.Options{Timeout: timeout, WaitReplicas: r.waitReplicas})
	for i, rep := range replies {
		w, ab, err := r.settleReply(batches[i], rep)
		wrote, again = wrote || w, again || ab
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if again {
		r.router.MarkStale()
	}
	return wrote, again, firstErr
}

// call is b's script call: the node script's for a node batch, the flush
// script's for any other. Called under r.mu.
func (r *Recorder) call(b *batch) redisconn.Cmd {
	if b.Node {
		return r.nodeCmd(b, r.isListed)
	}
	return r.cmd(b, r.isListed)
}

// settleReply settles one batch by the reply to its script call: applied
// (now or before), abandoned, or failed. A failed batch that surely did
// not land goes back to pending; any other stays, to be resent as it is.
func (r *Recorder) settleReply(b *batch, rep redisconn.Reply) (wrote, abandoned bool, err error) {
	if rep.Err == nil {
		sr, perr := decodeReply(b, rep.Value)
		if perr == nil {
			if sr.status == statusFenced {
				r.abandoned(b, sr)
				return false, true, nil
			}
			r.applied(b, sr)
			return true, false, nil
		}
		rep = redisconn.Reply{Err: perr} // an answer it cannot read: unknown outcome
	}
	var re redis.Error
	if b.Node && rep.Value == nil && errors.As(rep.Err, &re) && unsupportedScript(string(re)) {
		r.perSlotOnly.Store(true)
	}
	r.mu.Lock()
	r.ledger.fail(b, !notApplied(rep))
	r.mu.Unlock()
	return false, false, rep.Err
}

// abandoned settles a node batch Redis fenced. The slot of the key it
// found not on the node, if it names one, is batched per slot from now
// on, until a batch of that slot lands: a slot being migrated then holds
// back its own writes only, not the whole node's.
func (r *Recorder) abandoned(b *batch, sr scriptReply) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if sr.outside != "" {
		r.moving[redisc.Slot(sr.outside)] = struct{}{}
	}
	r.ledger.abandon(b, func(key string) string { return r.slotMarker(redisc.Slot(key)) })
}

// unsupportedScript reports whether an error reply says the server cannot
// run the node script at all: Redis before 7 reads its flags line as Lua.
func unsupportedScript(msg string) bool {
	return strings.Contains(msg, "compiling script") || strings.Contains(msg, "shebang")
}
