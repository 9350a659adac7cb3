package timeseries

import (
	"errors"
	"strings"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// minResend is the least time a same-round resend per slot is given.
const minResend = 100 * time.Millisecond

// sendByNode sends a cluster round's batches as node script calls, one per
// node (more only past maxNodeArgs), all in one Do. Batches a node could
// not apply as a whole, because keys of their slot were not there (a slot
// moving or moved) or because Redis refused the call (a redirection of
// the declared key, OOM, a replica), are sent again at once by the
// per-slot script: each then gets the redirection or refusal of its own
// slot, and the rest of the node's batches are not held back by them.
func (r *Recorder) sendByNode(batches []*batch, timeout time.Duration) (wrote bool, firstErr error) {
	start := time.Now()
	bundles, err := r.bundle(batches)
	if err != nil {
		return r.sendPerSlot(batches, timeout) // fails them as the slot map read does
	}
	cmds := make([]redisconn.Cmd, len(bundles))
	r.mu.Lock()
	for i, bs := range bundles {
		r.declareFirst(bs)
		cmds[i] = r.nodeCmd(bs, r.isListed)
	}
	r.mu.Unlock()
	replies := r.router.Do(cmds, redisconn.Options{Timeout: timeout, WaitReplicas: r.waitReplicas})
	var again []*batch
	for i, rep := range replies {
		w, retry, err := r.settleNode(bundles[i], rep)
		wrote = wrote || w
		again = append(again, retry...)
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	if len(again) > 0 {
		r.router.MarkStale()
		w, err := r.sendPerSlot(again, max(timeout-time.Since(start), minResend))
		wrote = wrote || w
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	return wrote, firstErr
}

// bundle groups batches by the node serving their marker's slot, which
// is the slot of all their keys, a node's batches split in calls of at
// most maxNodeArgs arguments.
func (r *Recorder) bundle(batches []*batch) ([][]*batch, error) {
	markers := make([]string, len(batches))
	for i, b := range batches {
		markers[i] = b.Marker
	}
	_, groups, err := r.router.GroupByNode(markers)
	if err != nil {
		return nil, err
	}
	var out [][]*batch
	for _, g := range groups {
		var call []*batch
		size := 2
		for _, i := range g {
			n := nodeArgs(batches[i])
			if len(call) > 0 && size+n > maxNodeArgs {
				out = append(out, call)
				call, size = nil, 2
			}
			call = append(call, batches[i])
			size += n
		}
		out = append(out, call)
	}
	return out, nil
}

// settleNode settles the batches of one node script call by its reply.
// It returns the batches to send again per slot, and the error of a call
// whose outcome is unknown (those batches stay, to be resent as they are:
// their markers refuse what landed).
func (r *Recorder) settleNode(bs []*batch, rep redisconn.Reply) (wrote bool, again []*batch, err error) {
	if rep.Err == nil {
		vals, perr := nodeReplies(rep.Value, len(bs))
		if perr == nil {
			return r.settleEach(bs, vals)
		}
		rep = redisconn.Reply{Err: perr}
	}
	var re redis.Error
	if rep.Value == nil && errors.As(rep.Err, &re) {
		// Refused at invocation: nothing of it ran.
		if unsupportedScript(string(re)) {
			r.perSlotOnly.Store(true)
		}
		if redisconn.IsRouting(rep.Err) {
			r.mu.Lock()
			r.redirected[bs[0].Marker] = struct{}{}
			r.mu.Unlock()
		}
		return false, bs, nil
	}
	r.mu.Lock()
	for _, b := range bs {
		r.ledger.fail(b, !notApplied(rep))
	}
	r.mu.Unlock()
	return false, nil, rep.Err
}

// settleEach settles each batch by its share of a node script's reply.
func (r *Recorder) settleEach(bs []*batch, vals []any) (wrote bool, again []*batch, err error) {
	for j, b := range bs {
		sr, perr := parseScriptReply(vals[j])
		switch {
		case perr != nil:
			if err == nil {
				err = perr
			}
			r.mu.Lock()
			r.ledger.fail(b, true)
			r.mu.Unlock()
		case sr.status == 2:
			again = append(again, b)
		default:
			r.applied(b, sr)
			wrote = true
		}
	}
	return wrote, again, err
}

// unsupportedScript reports whether an error reply says the server cannot
// run the node script at all: Redis before 7 reads its flags line as Lua.
func unsupportedScript(msg string) bool {
	return strings.Contains(msg, "compiling script") || strings.Contains(msg, "shebang")
}

// declareFirst moves to the front of bs, whose first marker is the one key
// the node script call declares, a batch whose marker has not made a call
// be redirected since it last landed: a slot being migrated would
// otherwise send the whole node's batches per slot until it has moved.
// Called under r.mu.
func (r *Recorder) declareFirst(bs []*batch) {
	for i, b := range bs {
		if _, bad := r.redirected[b.Marker]; !bad {
			bs[0], bs[i] = bs[i], bs[0]
			return
		}
	}
}
