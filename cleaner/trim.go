package cleaner

import (
	"context"
	"errors"
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
	"github.com/pulse-dev/pulse/timeseries"
)

// maxPerCall bounds the series one script call trims, so that a large
// Config.PageSize cannot block a node for long.
const maxPerCall = 1000

// batch is the series of one page that are due in this pass.
type batch struct {
	members []string // known: members
	keys    []string // their hashes
	cutoffs []int64  // the oldest bucket start each keeps
}

// call is one trim call of a page: the node it goes to and the series of
// the batch it covers.
type call struct {
	addr string
	idx  []int
}

// trimmer holds what one pass's trim learns across pages.
type trimmer struct {
	c     *Cleaner
	st    *Stats
	empty []string         // series whose hash the trim left empty
	dead  map[string]error // nodes whose call failed, skipped for the rest of the pass
	order []string         // dead's keys in the order they failed
}

// trim pages through the known set and trims every series due in this
// pass. It returns the members whose hash the trim left empty, also when
// it fails: those hashes are empty all the same. A node that cannot be
// reached fails the pass only after the other nodes were cleaned.
func (c *Cleaner) trim(ctx context.Context, do func(...redisconn.Cmd) []redisconn.Reply, st *Stats) ([]string, error) {
	now := c.clock.Now().Unix()
	known := c.schema.KnownKey()
	page := func(after string) redisconn.Cmd {
		return redisconn.Cmd{Key: known, Name: "ZRANGEBYLEX", Args: []any{known, after, "+", "LIMIT", 0, c.pageSize}}
	}
	members, incErr, err := c.firstPage(do, page("-"), st)
	if err != nil {
		return nil, errors.Join(err, incErr)
	}
	if c.deferred {
		// The slot map was read again after the last pass deferred
		// series, maybe while a slot was still moving: read it anew.
		c.router.MarkStale()
	}
	t := &trimmer{c: c, st: st, dead: map[string]error{}}
	defer func() { c.deferred = st.Deferred > 0 }()
	for {
		if err := ctx.Err(); err != nil {
			return t.empty, err
		}
		b := c.dueBatch(members, now, st.Pass)
		var next []redisconn.Cmd
		more := len(members) == c.pageSize
		if more {
			// The next page goes in the same round trip, after the last
			// member seen: removals during the pass cannot shift it.
			next = append(next, page("("+members[len(members)-1]))
		}
		replies, err := t.send(do, b, next)
		if err != nil || !more {
			return t.empty, errors.Join(err, t.err(), incErr)
		}
		if members, err = redis.Strings(replies[0].Value, replies[0].Err); err != nil {
			return t.empty, fmt.Errorf("read known set: %w", err)
		}
	}
}

// send trims batch b, with the commands of next in the same round trip,
// and returns next's replies. A server that cannot compile the node
// script (Redis before 7, an embedded server) is tried once that way: its
// error turns the cleaner to one plain script call per series for good,
// and the series of the batch are trimmed so at once.
func (t *trimmer) send(do func(...redisconn.Cmd) []redisconn.Reply, b *batch, next []redisconn.Cmd) ([]redisconn.Reply, error) {
	calls, cmds, err := t.calls(b)
	if err != nil || len(cmds)+len(next) == 0 {
		return nil, err
	}
	replies := do(append(cmds, next...)...)
	nextReplies, replies := replies[len(cmds):], replies[:len(cmds)]
	if !t.c.perKey && unsupported(replies) {
		t.c.perKey = true
		if calls, cmds, err = t.calls(b); err != nil {
			return nil, err
		}
		replies = do(cmds...)
	}
	t.st.Series += len(b.members)
	for i, cl := range calls {
		t.apply(b, cl, replies[i])
	}
	return nextReplies, nil
}

// unsupported reports whether a node refused the node script as a script
// it cannot compile.
func unsupported(replies []redisconn.Reply) bool {
	for _, rep := range replies {
		if rep.Value == nil && redisconn.IsUnsupportedScript(rep.Err) {
			return true
		}
	}
	return false
}

// firstPage reads the first page of the known set, and trims the
// incidents past their retention in the same round trip (their error
// second).
func (c *Cleaner) firstPage(do func(...redisconn.Cmd) []redisconn.Reply, page redisconn.Cmd, st *Stats) ([]string, error, error) {
	replies := do(append([]redisconn.Cmd{page}, c.incidentTrims()...)...)
	incErr := c.countIncidents(replies[1:], st)
	members, err := redis.Strings(replies[0].Value, replies[0].Err)
	if err != nil {
		return nil, incErr, fmt.Errorf("read known set: %w", err)
	}
	return members, incErr, nil
}

// dueBatch picks the members of a page that are due in pass, at unix
// second now.
func (c *Cleaner) dueBatch(members []string, now, pass int64) *batch {
	b := &batch{}
	for _, m := range members {
		p, _, ok := timeseries.ParseKnownMember(m)
		if !ok || !c.due(p, pass) {
			continue // not a Pulse series, or not its turn
		}
		b.members = append(b.members, m)
		b.keys = append(b.keys, c.schema.MemberKey(m))
		b.cutoffs = append(b.cutoffs, timeseries.BucketStart(now, p)-int64(c.samples-1)*int64(p))
	}
	return b
}

// calls groups a batch by node: one script call per node (per maxPerCall
// series), or one per series where the node script does not compile. Series of nodes that
// failed earlier in the pass are deferred.
func (t *trimmer) calls(b *batch) ([]call, []redisconn.Cmd, error) {
	addrs, groups, err := t.c.router.GroupByNode(b.keys)
	if err != nil {
		return nil, nil, err
	}
	var calls []call
	var cmds []redisconn.Cmd
	for g, idx := range groups {
		addr := addrs[g]
		if _, dead := t.dead[addr]; dead {
			t.st.Deferred += len(idx)
			continue
		}
		if t.c.perKey {
			for _, i := range idx {
				calls = append(calls, call{addr, []int{i}})
				cmds = append(cmds, keyTrimScript.Cmd([]string{b.keys[i]}, b.cutoffs[i], t.c.samples))
			}
			continue
		}
		for len(idx) > 0 {
			chunk := idx[:min(len(idx), maxPerCall)]
			idx = idx[len(chunk):]
			args := make([]any, 0, 1+2*len(chunk))
			args = append(args, t.c.samples)
			for _, i := range chunk {
				args = append(args, b.keys[i], b.cutoffs[i])
			}
			calls = append(calls, call{addr, chunk})
			cmds = append(cmds, nodeTrimScript.NodeCmd(b.keys[chunk[0]], args...))
		}
	}
	return calls, cmds, nil
}

// apply takes in the reply of one call. A call that failed as a whole
// defers its series and marks its node dead for the rest of the pass, so
// a node that hangs costs one timeout, not one per page.
func (t *trimmer) apply(b *batch, cl call, rep redisconn.Reply) {
	results, err := t.results(cl, rep)
	if err != nil {
		t.st.Deferred += len(cl.idx)
		if _, ok := t.dead[cl.addr]; !ok {
			t.dead[cl.addr] = err
			t.order = append(t.order, cl.addr)
		}
		return
	}
	for j, i := range cl.idx {
		t.one(b.members[i], b.keys[i], results[j])
	}
}

// results splits a call's reply into one result per series.
func (t *trimmer) results(cl call, rep redisconn.Reply) ([]any, error) {
	if t.c.perKey {
		var re redis.Error
		if errors.As(rep.Err, &re) {
			return []any{re}, nil // the key's own error
		}
		return []any{rep.Value}, rep.Err
	}
	vals, err := redis.Values(rep.Value, rep.Err)
	if err == nil && len(vals) != len(cl.idx) {
		err = fmt.Errorf("%d results for %d series", len(vals), len(cl.idx))
	}
	return vals, err
}

// one takes in the result of one series: its counts, or its error. A key
// Redis refuses to trim (of another type, say) is reported and skipped;
// one its node no longer serves (a slot being moved) is deferred, and the
// slot map read again before the next page.
func (t *trimmer) one(member, key string, v any) {
	if re, ok := v.(redis.Error); ok {
		if redisconn.Classify(re) == redisconn.KeyPermanent {
			t.c.onError(fmt.Errorf("cleaner: %s: %w", key, re))
			return
		}
		t.st.Deferred++
		t.c.router.MarkStale()
		return
	}
	res, err := redis.Int64s(v, nil)
	if err != nil || len(res) != 2 {
		t.c.onError(fmt.Errorf("cleaner: %s: unexpected trim result %v", key, v))
		return
	}
	t.st.FieldsDeleted += res[0]
	if res[1] == 0 {
		t.empty = append(t.empty, member)
	}
}

// err is the failures of the nodes that were skipped, if any.
func (t *trimmer) err() error {
	var errs []error
	for _, addr := range t.order {
		errs = append(errs, fmt.Errorf("trim on node %q: %w", addr, t.dead[addr]))
	}
	return errors.Join(errs...)
}
