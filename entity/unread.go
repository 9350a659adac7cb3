package entity

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Unread counts without fan-out. Nothing that happens writes per user:
//
//   - notices: one global sequence; a user's unread notices are the ids
//     above the last one they read;
//   - feed: the sum of the followees' post counts now, minus the sum taken
//     when the user last read the feed;
//   - red dot: a global last-update time newer than the user's last visit.
//
// A user's read marks are one SQL row per mark, written when they read.
// A user with no marks (never marked, or dropped as inactive) reads as
// having read everything.

// Names of the global values and of a user's marks.
const (
	markNotices = "notices"
	markFeed    = "feed"
	markDot     = "dot"
)

// globalsTTL bounds how long a cached global value may lag SQL after a
// cache write failed.
const globalsTTL = time.Minute

// Unread is what a user has not seen yet.
type Unread struct {
	// Notices counts the notices published since the user's last read.
	Notices int64 `json:"notices"`
	// Feed counts posts by followees since the user's last feed read.
	Feed int64 `json:"feed"`
	// Dot is true when anything was updated after the user's last read.
	Dot bool `json:"dot"`
}

// Feed names the counter whose sum over a user's followees makes the
// feed: e.g. kind "user", field "posts".
type Feed struct {
	Kind, Field string
}

func (c *Counters) globalsKey() string { return c.prefix + "pulse:ent:{globals}" }

// setIfGreaterScript raises a cached global value, never lowers it: the
// values only grow, so writers racing each other end on the largest.
//
// KEYS: globals. ARGV: ttl ms, then field, value pairs.
var setIfGreaterScript = newScript(`
for i = 2, #ARGV, 2 do
  local cur = tonumber(redis.call('HGET', KEYS[1], ARGV[i]) or '-1')
  if cur < tonumber(ARGV[i + 1]) then redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
`)

// PublishNotice takes the next notice id, in the transaction, so the app
// stores its notice under it. It costs one SQL row write and, after the
// commit, one Redis write, whatever the number of users.
func (t *Tx) PublishNotice() (int64, error) {
	if _, err := t.ExecContext(t.ctx, t.c.q.seqNext, markNotices); err != nil {
		return 0, err
	}
	var id int64
	if err := t.QueryRowContext(t.ctx, t.c.q.seqGet, markNotices).Scan(&id); err != nil {
		return 0, err
	}
	t.setGlobal(markNotices, id)
	return id, nil
}

// Touch records that something was updated now, for the red dot: one
// global write. The time never goes back, even across processes whose
// clocks differ.
func (t *Tx) Touch() error {
	now := t.c.now().UnixMilli()
	var cur int64
	if err := t.QueryRowContext(t.ctx, t.c.q.seqGet+t.c.q.lockSuffix, markDot).Scan(&cur); err != nil {
		return err
	}
	v := max(now, cur+1)
	if _, err := t.ExecContext(t.ctx, t.c.q.seqSet, v, markDot, v); err != nil {
		return err
	}
	t.setGlobal(markDot, v)
	return nil
}

func (t *Tx) setGlobal(name string, v int64) {
	if t.globals == nil {
		t.globals = map[string]int64{}
	}
	t.globals[name] = max(t.globals[name], v)
}

// Followed adjusts a user's feed mark when they start to follow followee,
// so that only the followee's later posts count as unread. Call it in the
// transaction that stores the follow.
func (t *Tx) Followed(user, followee int64, feed Feed) error {
	c := t.c
	if _, _, err := c.field(feed.Kind, feed.Field); err != nil {
		return err
	}
	// Read in the transaction: a second connection could wait on this
	// one's locks (SQLite has one writer).
	var n sql.NullInt64
	err := t.QueryRowContext(t.ctx, c.q.bind("SELECT "+c.q.sum+" FROM "+c.q.table+" WHERE kind = ? AND entity_id = ? AND field = ?"),
		feed.Kind, followee, feed.Field).Scan(&n)
	if err != nil || n.Int64 == 0 {
		return err
	}
	_, err = t.ExecContext(t.ctx, c.q.bind("UPDATE "+c.q.marks+" SET value = value + ? WHERE user_id = ? AND name = ?"), n.Int64, user, markFeed)
	return err
}

// storeGlobals caches what a committed transaction raised.
func (c *Counters) storeGlobals(ctx context.Context, globals map[string]int64) {
	if len(globals) == 0 || !c.cacheUp() {
		return
	}
	args := []any{globalsTTL.Milliseconds()}
	for name, v := range globals {
		args = append(args, name, v)
	}
	if _, err := c.runScript(ctx, setIfGreaterScript.Cmd([]string{c.globalsKey()}, args...)); err != nil {
		// The cached values may lag SQL: drop them, or let them expire.
		if _, err2 := c.do(context.WithoutCancel(ctx), "DEL", c.globalsKey()); err2 != nil {
			c.cacheError(ctx, "globals", errors.Join(err, err2))
		}
	}
}

// globals reads the notice sequence and the last-update time, from Redis
// when cached, else from SQL (and caches them).
func (c *Counters) globals(ctx context.Context) (notices, dot int64, err error) {
	if c.cacheUp() {
		vals, err := redis.Values(c.do(ctx, "HMGET", c.globalsKey(), markNotices, markDot))
		if err == nil && len(vals) == 2 && vals[0] != nil && vals[1] != nil {
			n, err1 := redis.Int64(vals[0], nil)
			d, err2 := redis.Int64(vals[1], nil)
			if err1 == nil && err2 == nil {
				return n, d, nil
			}
		}
		if err != nil {
			c.cacheError(ctx, "globals", err)
		}
	}
	vals := map[string]int64{}
	err = c.queryRows(ctx, c.db, func() { clear(vals) }, func(rows *sql.Rows) error {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return err
		}
		vals[name] = v
		return nil
	}, c.q.bind("SELECT name, value FROM "+c.q.seqs+" WHERE name IN (?, ?)"), markNotices, markDot)
	if err != nil {
		return 0, 0, fmt.Errorf("entity: unread: %w", err)
	}
	c.storeGlobals(ctx, vals)
	return vals[markNotices], vals[markDot], nil
}

// marks reads a user's read marks; ok is false when they have none.
func (c *Counters) marks(ctx context.Context, user int64) (m map[string]int64, ok bool, err error) {
	m = map[string]int64{}
	err = c.queryRows(ctx, c.db, func() { clear(m) }, func(rows *sql.Rows) error {
		var name string
		var v int64
		if err := rows.Scan(&name, &v); err != nil {
			return err
		}
		m[name] = v
		return nil
	}, c.q.bind("SELECT name, value FROM "+c.q.marks+" WHERE user_id = ?"), user)
	if err != nil {
		return nil, false, fmt.Errorf("entity: unread: %w", err)
	}
	return m, len(m) > 0, nil
}

// feedSum sums feed.Field over the followees, at most MaxFollowees of them
// (the first ones given), in batch reads of up to MaxBatchIDs: one Redis
// round trip per thousand followees when they are cached.
func (c *Counters) feedSum(ctx context.Context, feed Feed, followees []int64) (int64, error) {
	if len(followees) == 0 {
		return 0, nil
	}
	if _, _, err := c.field(feed.Kind, feed.Field); err != nil {
		return 0, err
	}
	followees = followees[:min(len(followees), c.maxFollowees)]
	var sum int64
	for len(followees) > 0 {
		n := min(len(followees), MaxBatchIDs)
		counts, err := c.BatchGet(ctx, feed.Kind, followees[:n])
		if err != nil {
			return 0, err
		}
		for _, cnt := range counts {
			sum += cnt[feed.Field]
		}
		followees = followees[n:]
	}
	return sum, nil
}

// Unread returns what user has not seen: notices, the feed of followees
// (summing feed over them), the red dot. Its cost does not depend on how
// many users there are; it is one SQL read of the user's marks and one
// batch read per thousand followees.
func (c *Counters) Unread(ctx context.Context, user int64, feed Feed, followees []int64) (Unread, error) {
	m, ok, err := c.marks(ctx, user)
	if err != nil || !ok {
		return Unread{}, err
	}
	notices, dot, err := c.globals(ctx)
	if err != nil {
		return Unread{}, err
	}
	var u Unread
	if v, ok := m[markNotices]; ok {
		u.Notices = max(0, notices-v)
	}
	if v, ok := m[markDot]; ok {
		u.Dot = dot > v
	}
	if v, ok := m[markFeed]; ok && len(followees) > 0 {
		sum, err := c.feedSum(ctx, feed, followees)
		if err != nil {
			return Unread{}, err
		}
		u.Feed = max(0, sum-v)
	}
	return u, nil
}

// MarkRead records that user has read everything now: notices, feed and
// the red dot. Only their marks are written.
func (c *Counters) MarkRead(ctx context.Context, user int64, feed Feed, followees []int64) error {
	notices, dot, err := c.globals(ctx)
	if err != nil {
		return err
	}
	sum, err := c.feedSum(ctx, feed, followees)
	if err != nil {
		return err
	}
	return c.setMarks(ctx, user, map[string]int64{
		markNotices: notices,
		markFeed:    sum,
		markDot:     max(dot, c.now().UnixMilli()),
	})
}

// MarkFeedRead records that user has read their feed now.
func (c *Counters) MarkFeedRead(ctx context.Context, user int64, feed Feed, followees []int64) error {
	sum, err := c.feedSum(ctx, feed, followees)
	if err != nil {
		return err
	}
	return c.setMarks(ctx, user, map[string]int64{markFeed: sum})
}

func (c *Counters) setMarks(ctx context.Context, user int64, marks map[string]int64) error {
	seen := c.now().Unix()
	err := c.inTx(ctx, func(ctx context.Context, tx *sql.Tx) error {
		for _, name := range []string{markNotices, markFeed, markDot} {
			v, ok := marks[name]
			if !ok {
				continue
			}
			if _, err := tx.ExecContext(ctx, c.q.markSet, user, name, v, seen); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("entity: mark read: %w", err)
	}
	return nil
}

// PruneInactive drops the read marks of users whose last read was before
// cutoff: they then read as having read everything. It reports how many
// marks it dropped. With Config.InactiveAfter set, the background work
// runs it every FoldInterval.
func (c *Counters) PruneInactive(ctx context.Context, cutoff time.Time) (int64, error) {
	res, err := c.exec(ctx, c.q.markPrune, cutoff.Unix())
	if err != nil {
		return 0, fmt.Errorf("entity: prune inactive users: %w", err)
	}
	n, _ := res.RowsAffected()
	return n, nil
}
