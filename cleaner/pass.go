package cleaner

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// due reports whether precision p is cleaned in the pass numbered pass:
// every p/I passes (integer division), I being the interval in whole
// seconds and at least 1, or every pass when p/I is at most 1, so that
// with the default interval of a minute a series is looked at about once
// per bucket it gains.
func (c *Cleaner) due(p int, pass int64) bool {
	every := int64(p) / max(1, int64(c.interval/time.Second))
	return every <= 1 || pass%every == 0
}

// Pass cleans once now, unless another cleaner holds the lock.
func (c *Cleaner) Pass(ctx context.Context) (Stats, error) {
	c.passMu.Lock()
	defer c.passMu.Unlock()
	st := Stats{Pass: c.passes}
	c.passes++
	if c.beforePass != nil {
		c.beforePass()
	}
	err := c.pass(ctx, &st)
	if err != nil {
		err = fmt.Errorf("cleaner: pass %d: %w", st.Pass, err)
	}
	return st, err
}

func (c *Cleaner) pass(ctx context.Context, st *Stats) error {
	do := func(cmds ...redisconn.Cmd) []redisconn.Reply {
		st.RoundTrips++
		return c.router.DoContext(ctx, cmds, redisconn.Options{Timeout: passTimeout})
	}
	token, err := newToken()
	if err != nil {
		return err
	}
	lock := do(redisconn.Cmd{Key: c.lockKey, Name: "SET", Args: []any{c.lockKey, token, "NX", "PX", c.lockTTL.Milliseconds()}})[0]
	if lock.Err != nil {
		return lock.Err
	}
	if lock.Value == nil {
		st.Skipped = true
		return nil
	}
	defer func() {
		// Release only a lock that is still ours. Briefly: should Redis not
		// answer, the lock expires by itself, and Close must not wait on it.
		c.router.Do([]redisconn.Cmd{unlockScript.Cmd([]string{c.lockKey}, token)}, redisconn.Options{Timeout: unlockTimeout})
		st.RoundTrips++
	}()
	// Hashes found empty are unlisted even when the trim failed on some
	// node: they are empty all the same.
	empty, trimErr := c.trim(ctx, do, st)
	if len(empty) == 0 {
		return trimErr
	}
	removed, err := c.unlist(empty, func() bool { return ctx.Err() != nil }, st)
	st.SeriesRemoved += removed
	return errors.Join(trimErr, err)
}

// passTimeout bounds each round trip of a pass run without a deadline.
const passTimeout = 10 * time.Second

// unlist removes series whose hash the trim left empty from the known
// set, then looks at each hash again and lists the ones that have data
// once more. A Recorder writes a hash before it lists it (on a cluster the
// hash and known: may live on different nodes, so no script can do both
// atomically): a write that came before the second look is seen by it,
// and one that came after is followed by the recorder's own ZADD. Either
// way a series with data ends up listed; it is unlisted at most for the
// cleaner's two round trips.
//
// Once the ZREM is sent the steps after it always run, even when the pass
// is being stopped (then each is bounded by unlockTimeout instead of
// passTimeout): stopping in between would leave a written series
// unlisted. A ZREM whose outcome is unknown is looked after the same way.
// It returns how many stayed removed.
func (c *Cleaner) unlist(members []string, stopping func() bool, st *Stats) (int, error) {
	if stopping() {
		return 0, nil // nothing removed yet: the next pass finds them
	}
	if c.beforeUnlist != nil {
		c.beforeUnlist()
	}
	do := func(cmds ...redisconn.Cmd) []redisconn.Reply {
		st.RoundTrips++
		t := passTimeout
		if stopping() {
			t = unlockTimeout
		}
		return c.router.Do(cmds, redisconn.Options{Timeout: t})
	}
	known := c.schema.KnownKey()
	var zrem []redisconn.Cmd
	for i := 0; i < len(members); i += 1000 {
		args := []any{known}
		for _, m := range members[i:min(i+1000, len(members))] {
			args = append(args, m)
		}
		zrem = append(zrem, redisconn.Cmd{Key: known, Name: "ZREM", Args: args})
	}
	var zremErr error
	for _, rep := range do(zrem...) {
		if rep.Err != nil && zremErr == nil {
			zremErr = rep.Err
		}
	}
	var re redis.Error
	if errors.As(zremErr, &re) {
		return 0, fmt.Errorf("unlist: %w", zremErr) // refused: nothing removed
	}
	cmds := make([]redisconn.Cmd, len(members))
	for i, m := range members {
		key := c.schema.MemberKey(m)
		cmds[i] = redisconn.Cmd{Key: key, Name: "EXISTS", Args: []any{key}}
	}
	relist := []any{known}
	var lookErr error
	for i, rep := range do(cmds...) {
		n, err := redis.Int(rep.Value, rep.Err)
		if err != nil || n > 0 {
			// Unsure counts as written: listing an empty series costs a
			// member until the next pass, unlisting one with data hides it.
			relist = append(relist, 0, members[i])
			if err != nil && lookErr == nil {
				lookErr = err
			}
		}
	}
	removed := len(members) - (len(relist)-1)/2
	if len(relist) > 1 {
		if rep := do(redisconn.Cmd{Key: known, Name: "ZADD", Args: relist})[0]; rep.Err != nil {
			return removed, fmt.Errorf("relist: %w", rep.Err)
		}
	}
	switch {
	case zremErr != nil:
		return removed, fmt.Errorf("unlist: %w", zremErr)
	case lookErr != nil:
		return removed, fmt.Errorf("look again: %w", lookErr)
	}
	return removed, nil
}

func newToken() (string, error) {
	b := make([]byte, 12)
	if _, err := crand.Read(b); err != nil {
		return "", fmt.Errorf("lock token: %w", err)
	}
	return hex.EncodeToString(b), nil
}
