package entity

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/race"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"

	"github.com/pulse-dev/pulse/timeseries"
)

var userPosts = Feed{Kind: "user", Field: "posts"}

// insertMarks gives users read marks in bulk, as if each had read
// everything before the test started.
func insertMarks(t *testing.T, c *Counters, users int, noticesRead int64) {
	t.Helper()
	now := time.Now().Unix()
	for from := 1; from <= users; from += 500 {
		var b strings.Builder
		var args []any
		b.WriteString("INSERT INTO " + c.sql.Marks + " (user_id, name, value, seen_at) VALUES ")
		for u := from; u < from+500 && u <= users; u++ {
			for _, name := range []string{markNotices, markFeed, markDot} {
				if len(args) > 0 {
					b.WriteString(", ")
				}
				b.WriteString("(?, ?, ?, ?)")
				v := int64(0)
				if name == markNotices {
					v = noticesRead
				}
				args = append(args, u, name, v, now)
			}
		}
		if _, err := c.sql.DB().Exec(c.sql.Bind(b.String()), args...); err != nil {
			t.Fatal(err)
		}
	}
}

func publish(t *testing.T, c *Counters) int64 {
	t.Helper()
	var id int64
	err := c.InTx(context.Background(), func(ctx context.Context, tx *Tx) error {
		var err error
		id, err = tx.PublishNotice()
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// tableRows counts the rows of every table of c.
func tableRows(t *testing.T, c *Counters) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	for _, tbl := range []string{c.sql.Table, c.sql.Batches, c.sql.Stale, c.sql.Marks, c.sql.Seqs} {
		var n int64
		if err := c.sql.DB().QueryRow("SELECT COUNT(*) FROM " + tbl).Scan(&n); err != nil {
			t.Fatal(err)
		}
		out[tbl] = n
	}
	return out
}

func TestNoticeToManyUsersCostsConstantWrites(t *testing.T) {
	race.SkipMeasurement(t)
	// Enough users that a write per user would show; the cost asserted
	// (one Redis call, no row) does not grow with them.
	const users = 2000
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		srv := redistest.Start(t)
		var trips atomic.Int64
		c := newCounters(t, Config{DB: db, Dialect: d, Layout: lay, Pool: countingPool(t, srv, &trips), FlushInterval: time.Hour})
		if id := publish(t, c); id != 1 { // loads the script too
			t.Errorf("first notice id = %d, want 1", id)
		}
		insertMarks(t, c, users, 1) // everyone has read notice 1
		rowsBefore := tableRows(t, c)
		keysBefore, _ := redis.Int(srv.Do("DBSIZE"), nil)
		trips.Store(0)
		id := publish(t, c)
		cmds := trips.Load()
		rowsAfter := tableRows(t, c)
		keysAfter, _ := redis.Int(srv.Do("DBSIZE"), nil)
		if id != 2 {
			t.Errorf("second notice id = %d, want 2", id)
		}
		if keysAfter != keysBefore {
			t.Errorf("Redis went from %d to %d keys", keysBefore, keysAfter)
		}
		for tbl, n := range rowsAfter {
			if n != rowsBefore[tbl] {
				t.Errorf("table %s went from %d to %d rows: a notice must not add rows", tbl, rowsBefore[tbl], n)
			}
		}
		var seq int64
		if err := db.QueryRow(c.sql.Bind("SELECT value FROM "+c.sql.Seqs+" WHERE name = ?"), markNotices).Scan(&seq); err != nil || seq != 2 {
			t.Fatalf("notice sequence = %d, %v", seq, err)
		}
		// One script call caching the new sequence value.
		if cmds != 1 {
			t.Errorf("one notice took %d Redis calls, want 1", cmds)
		}
		t.Logf("one notice, %d users: 1 SQL row updated (the sequence), %d Redis write(s)", users, cmds)

		var wg sync.WaitGroup
		errs := make(chan error, users)
		work := make(chan int64)
		for w := 0; w < 8; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for u := range work {
					got, err := c.Unread(context.Background(), u, userPosts, nil)
					if err != nil {
						errs <- err
					} else if got.Notices != 1 {
						errs <- fmt.Errorf("user %d: %d unread notices, want 1", u, got.Notices)
					}
				}
			}()
		}
		for u := int64(1); u <= users; u++ {
			work <- u
		}
		close(work)
		wg.Wait()
		close(errs)
		for err := range errs {
			t.Fatal(err)
		}
		// Reading clears it for that user only.
		if err := c.MarkRead(context.Background(), 7, userPosts, nil); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			user int64
			want int64
		}{{7, 0}, {8, 1}, {users + 1, 0}} { // users+1 has no marks: all read
			got, err := c.Unread(context.Background(), tc.user, userPosts, nil)
			if err != nil || got.Notices != tc.want {
				t.Errorf("user %d: notices = %d, %v; want %d", tc.user, got.Notices, err, tc.want)
			}
		}
	})
}

func TestFeedAndDot(t *testing.T) {
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		srv := redistest.Start(t)
		c := newCounters(t, Config{DB: db, Dialect: d, Layout: lay, Pool: srv.Pool(), FlushInterval: time.Hour})
		ctx := context.Background()
		post := func(author int64) {
			t.Helper()
			err := c.InTx(ctx, func(ctx context.Context, tx *Tx) error {
				if err := tx.Incr("user", author, "posts", 1); err != nil {
					return err
				}
				return tx.Touch()
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		unread := func(user int64, followees []int64) Unread {
			t.Helper()
			u, err := c.Unread(ctx, user, userPosts, followees)
			if err != nil {
				t.Fatal(err)
			}
			return u
		}
		// Users 1 and 2 arrive; 2 has posted twice already.
		post(2)
		post(2)
		for _, u := range []int64{1, 2, 3} {
			if err := c.MarkRead(ctx, u, userPosts, nil); err != nil {
				t.Fatal(err)
			}
		}
		// 1 follows 2: 2's earlier posts are not news.
		follows := []int64{2}
		if err := c.InTx(ctx, func(ctx context.Context, tx *Tx) error { return tx.Followed(1, 2, userPosts) }); err != nil {
			t.Fatal(err)
		}
		if got := unread(1, follows); got != (Unread{}) {
			t.Errorf("after follow: %+v, want nothing unread", got)
		}
		post(2)
		post(3) // not followed: only the dot
		if got := unread(1, follows); got != (Unread{Feed: 1, Dot: true}) {
			t.Errorf("after posts: %+v, want feed 1 and the dot", got)
		}
		if got := unread(3, nil); got != (Unread{Dot: true}) {
			t.Errorf("user 3 after posts: %+v, want the dot only", got)
		}
		if err := c.MarkRead(ctx, 1, userPosts, follows); err != nil {
			t.Fatal(err)
		}
		if got := unread(1, follows); got != (Unread{}) {
			t.Errorf("after read: %+v, want nothing unread", got)
		}
		if got := unread(3, nil); !got.Dot {
			t.Error("user 1's read cleared user 3's dot")
		}
		post(2)
		post(2)
		if got := unread(1, follows); got != (Unread{Feed: 2, Dot: true}) {
			t.Errorf("after two more posts: %+v, want feed 2 and the dot", got)
		}
		if err := c.MarkFeedRead(ctx, 1, userPosts, follows); err != nil {
			t.Fatal(err)
		}
		if got := unread(1, follows); got != (Unread{Dot: true}) {
			t.Errorf("after reading the feed: %+v, want the dot only", got)
		}
		// Inactive users' marks go; they read as all read.
		if n, err := c.PruneInactive(ctx, time.Now().Add(time.Hour)); err != nil || n == 0 {
			t.Fatalf("prune: %d, %v", n, err)
		}
		post(2)
		if got := unread(1, follows); got != (Unread{}) {
			t.Errorf("pruned user: %+v, want all read", got)
		}
	})
}

// The red dot's time and the read marks come from Config.Clock.
func TestUnreadTimesFromClock(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	clock := timeseries.NewManualClock(at)
	c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite, Clock: clock})
	ctx := context.Background()
	if err := c.MarkRead(ctx, 1, Feed{Kind: "user", Field: "posts"}, nil); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	if err := c.InTx(ctx, func(ctx context.Context, tx *Tx) error { return tx.Touch() }); err != nil {
		t.Fatal(err)
	}
	_, dot, err := c.unread.globals(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if want := at.Add(time.Minute).UnixMilli(); dot != want {
		t.Errorf("red dot time %d, want the clock's %d", dot, want)
	}
	if u, _ := c.Unread(ctx, 1, Feed{Kind: "user", Field: "posts"}, nil); !u.Dot {
		t.Errorf("unread %+v: want the dot lit by an update after the read", u)
	}
}
