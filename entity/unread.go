package entity

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/entity/internal/redisstore"
	"github.com/pulse-dev/pulse/entity/internal/sqlstore"
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

// unreadSeqs are the global values Migrate creates; markOrder is the order
// marks are written in.
var (
	unreadSeqs = []string{markNotices, markDot}
	markOrder  = []string{markNotices, markFeed, markDot}
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

// unreads keeps the unread counts on top of the Counters: the feed is
// summed with BatchGet, feeds are checked against Kinds, and the global
// values ride on InTx's transactions. Its own rows (global values, read
// marks) live in two tables of its own. Three things reach below the
// Counters' exported methods, each for a reason:
//
//   - the cache of global values shares the counters' outage state
//     (health): a Redis the counters took out of use is not read for
//     unread counts either, and a failed call here takes it out for both;
//   - Tx.Followed reads the followee's count inside the app's transaction
//     (sqlstore Value), because Get would take a second connection that
//     can wait on this transaction's locks (SQLite has one writer) and
//     would not see the transaction's own increments;
//   - Tx's context and the globals it raised: PublishNotice and Touch take
//     no context, and InTx hands the globals back once it has committed.
type unreads struct {
	counts       *Counters // through its exported methods only
	fields       map[string]map[string]bool
	sql          *sqlstore.Store
	marks        sqlstore.Marks
	cache        *redisstore.Client // nil without a pool
	globalsKey   string
	health       cacheHealth
	clock        Clock
	maxFollowees int
}

// cacheHealth is the outage state the counters keep (see outage.go).
type cacheHealth interface {
	cacheUp() bool
	cacheError(ctx context.Context, op string, err error)
}

func newUnreads(c *Counters, maxFollowees int) *unreads {
	u := &unreads{counts: c, fields: map[string]map[string]bool{}, sql: c.sql, marks: sqlstore.NewMarks(c.sql), cache: c.cache,
		globalsKey: c.keys.Globals, health: c.cs, clock: c.clock, maxFollowees: maxFollowees}
	for _, k := range c.Kinds() {
		u.fields[k.Name] = map[string]bool{}
		for _, f := range k.Fields {
			u.fields[k.Name][f] = true
		}
	}
	return u
}

// check makes sure feed names a declared counter.
func (u *unreads) check(feed Feed) error {
	fields, ok := u.fields[feed.Kind]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownKind, feed.Kind)
	}
	if !fields[feed.Field] {
		return fmt.Errorf("%w %q of kind %q", ErrUnknownField, feed.Field, feed.Kind)
	}
	return nil
}

// PublishNotice takes the next notice id, in the transaction, so the app
// stores its notice under it. It costs one SQL row write and, after the
// commit, one Redis write, whatever the number of users.
func (t *Tx) PublishNotice() (int64, error) {
	id, err := t.c.unread.marks.NextSeq(t.ctx, t.Tx, markNotices)
	if err != nil {
		return 0, err
	}
	t.setGlobal(markNotices, id)
	return id, nil
}

// Touch records that something was updated now, for the red dot: one
// global write. The time never goes back, even across processes whose
// clocks differ.
func (t *Tx) Touch() error {
	u := t.c.unread
	now := u.clock.Now().UnixMilli()
	cur, err := u.marks.LockedSeq(t.ctx, t.Tx, markDot)
	if err != nil {
		return err
	}
	v := max(now, cur+1)
	if err := u.marks.RaiseSeq(t.ctx, t.Tx, markDot, v); err != nil {
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
	u := t.c.unread
	if err := u.check(feed); err != nil {
		return err
	}
	n, err := u.sql.Value(t.ctx, t.Tx, feed.Kind, followee, feed.Field)
	if err != nil || n == 0 {
		return err
	}
	return u.marks.AddMark(t.ctx, t.Tx, user, markFeed, n)
}

// storeGlobals caches what a committed transaction raised.
func (u *unreads) storeGlobals(ctx context.Context, globals map[string]int64) {
	if len(globals) == 0 || !u.health.cacheUp() {
		return
	}
	args := []any{globalsTTL.Milliseconds()}
	for name, v := range globals {
		args = append(args, name, v)
	}
	if _, err := u.cache.Run(ctx, redisstore.SetIfGreater.Cmd([]string{u.globalsKey}, args...)); err != nil {
		// The cached values may lag SQL: drop them, or let them expire.
		if _, err2 := u.cache.Do(context.WithoutCancel(ctx), "DEL", u.globalsKey); err2 != nil {
			u.health.cacheError(ctx, "globals", errors.Join(err, err2))
		}
	}
}

// globals reads the notice sequence and the last-update time, from Redis
// when cached, else from SQL (and caches them).
func (u *unreads) globals(ctx context.Context) (notices, dot int64, err error) {
	if u.health.cacheUp() {
		vals, err := redis.Values(u.cache.Do(ctx, "HMGET", u.globalsKey, markNotices, markDot))
		if err == nil && len(vals) == 2 && vals[0] != nil && vals[1] != nil {
			n, err1 := redis.Int64(vals[0], nil)
			d, err2 := redis.Int64(vals[1], nil)
			if err1 == nil && err2 == nil {
				return n, d, nil
			}
		}
		if err != nil {
			u.health.cacheError(ctx, "globals", err)
		}
	}
	vals, err := u.marks.SeqPair(ctx, markNotices, markDot)
	if err != nil {
		return 0, 0, fmt.Errorf("entity: unread: %w", err)
	}
	u.storeGlobals(ctx, vals)
	return vals[markNotices], vals[markDot], nil
}

// feedSum sums feed.Field over the followees, at most MaxFollowees of them
// (the first ones given), in batch reads of up to MaxBatchIDs: one Redis
// round trip per thousand followees when they are cached.
func (u *unreads) feedSum(ctx context.Context, feed Feed, followees []int64) (int64, error) {
	if len(followees) == 0 {
		return 0, nil
	}
	if err := u.check(feed); err != nil {
		return 0, err
	}
	followees = followees[:min(len(followees), u.maxFollowees)]
	var sum int64
	for len(followees) > 0 {
		n := min(len(followees), MaxBatchIDs)
		counts, err := u.counts.BatchGet(ctx, feed.Kind, followees[:n])
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
	u := c.unread
	m, err := u.marks.ReadMarks(ctx, user)
	if err != nil {
		return Unread{}, fmt.Errorf("entity: unread: %w", err)
	}
	if len(m) == 0 {
		return Unread{}, nil
	}
	notices, dot, err := u.globals(ctx)
	if err != nil {
		return Unread{}, err
	}
	var out Unread
	if v, ok := m[markNotices]; ok {
		out.Notices = max(0, notices-v)
	}
	if v, ok := m[markDot]; ok {
		out.Dot = dot > v
	}
	if v, ok := m[markFeed]; ok && len(followees) > 0 {
		sum, err := u.feedSum(ctx, feed, followees)
		if err != nil {
			return Unread{}, err
		}
		out.Feed = max(0, sum-v)
	}
	return out, nil
}

// MarkRead records that user has read everything now: notices, feed and
// the red dot. Only their marks are written.
func (c *Counters) MarkRead(ctx context.Context, user int64, feed Feed, followees []int64) error {
	u := c.unread
	notices, dot, err := u.globals(ctx)
	if err != nil {
		return err
	}
	sum, err := u.feedSum(ctx, feed, followees)
	if err != nil {
		return err
	}
	return u.setMarks(ctx, user, map[string]int64{
		markNotices: notices,
		markFeed:    sum,
		markDot:     max(dot, u.clock.Now().UnixMilli()),
	})
}

// MarkFeedRead records that user has read their feed now.
func (c *Counters) MarkFeedRead(ctx context.Context, user int64, feed Feed, followees []int64) error {
	sum, err := c.unread.feedSum(ctx, feed, followees)
	if err != nil {
		return err
	}
	return c.unread.setMarks(ctx, user, map[string]int64{markFeed: sum})
}

func (u *unreads) setMarks(ctx context.Context, user int64, marks map[string]int64) error {
	if err := u.marks.SetMarks(ctx, user, markOrder, marks, u.clock.Now()); err != nil {
		return fmt.Errorf("entity: mark read: %w", err)
	}
	return nil
}

// PruneInactive drops the read marks of users whose last read was before
// cutoff: they then read as having read everything. It reports how many
// marks it dropped. With Config.InactiveAfter set, the background work
// runs it every FoldInterval.
func (c *Counters) PruneInactive(ctx context.Context, cutoff time.Time) (int64, error) {
	n, err := c.unread.marks.PruneMarks(ctx, cutoff)
	if err != nil {
		return 0, fmt.Errorf("entity: prune inactive users: %w", err)
	}
	return n, nil
}
