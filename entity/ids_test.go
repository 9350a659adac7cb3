package entity

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/entity/internal/redisstore"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// edgeIDs are ids at the ends of int64 and at the edges of the sparse
// layout's field encodings. Every int64 is an id.
var edgeIDs = []int64{0, 1, -1, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 1<<31 - 1, 1 << 31, -(1 << 31)}

// shippedConf is the listpack limit of the redis.conf Redis ships, lower
// than the one built in (512 entries).
var shippedConf = []string{"--hash-max-listpack-entries", "128"}

// postCounts is what a test expects of one post: likes and views.
type postCounts map[int64][2]int64

// incrPosts adds likes and views to every post: write-through in
// transactions of up to 50 posts, write-behind one increment at a time.
func incrPosts(t *testing.T, c *Counters, posts []int64, want postCounts, likes, views func(x int) int64) {
	t.Helper()
	ctx := context.Background()
	add := func(x int, id int64) {
		w := want[id]
		want[id] = [2]int64{w[0] + likes(x), w[1] + views(x)}
	}
	if c.writeBehind {
		for x, id := range posts {
			mustIncr(t, c, "post", id, "likes", likes(x))
			mustIncr(t, c, "post", id, "views", views(x))
			add(x, id)
		}
		return
	}
	for from := 0; from < len(posts); from += 50 {
		batch := posts[from:min(from+50, len(posts))]
		err := c.InTx(ctx, func(ctx context.Context, tx *Tx) error {
			for x, id := range batch {
				if err := tx.Incr("post", id, "likes", likes(from+x)); err != nil {
					return err
				}
				if err := tx.Incr("post", id, "views", views(from+x)); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		for x, id := range batch {
			add(from+x, id)
		}
	}
}

// assertPosts reads every post in one batch (with a repeat) and one by
// one, and fails unless each answers want.
func assertPosts(t *testing.T, c *Counters, posts []int64, want postCounts) {
	t.Helper()
	asked := append(slices.Clone(posts), posts[0])
	got, err := c.BatchGet(context.Background(), "post", asked)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range asked {
		if w := want[id]; got[i]["likes"] != w[0] || got[i]["views"] != w[1] {
			t.Errorf("BatchGet post %d = likes %d views %d, want %d %d", id, got[i]["likes"], got[i]["views"], w[0], w[1])
		}
	}
	for _, id := range edgeIDs {
		if g, w := mustGet(t, c, "post", id), want[id]; g["likes"] != w[0] || g["views"] != w[1] {
			t.Errorf("Get post %d = %v, want likes %d views %d", id, g, w[0], w[1])
		}
	}
}

// assertStored fails unless SQL holds want for every post and the cache
// holds it too: each post has been read since its last write.
func assertStored(t *testing.T, srv *redistest.Server, c *Counters, posts []int64, want postCounts) {
	t.Helper()
	for _, id := range posts {
		if l, v := sqlValue(t, c, "post", id, "likes"), sqlValue(t, c, "post", id, "views"); l != want[id][0] || v != want[id][1] {
			t.Errorf("SQL post %d = likes %d views %d, want %d %d", id, l, v, want[id][0], want[id][1])
		}
		if e := cached(t, srv, c, "post", id); e == nil || e["likes"] != want[id][0] || e["views"] != want[id][1] {
			t.Errorf("post %d cached as %v, want likes %d views %d", id, e, want[id][0], want[id][1])
		}
	}
}

// Snowflake ids, random 63-bit ids and the ends of int64 (0, -1,
// MinInt64, MaxInt64...) counted side by side in every layout, mode and
// database, with the sparse buckets crowded (about 30 posts each): no two
// ids share an entry, reads answer each id's own counts, SQL and the cache
// agree, and a reset touches its own id alone.
func TestIDsOfEveryShape(t *testing.T) {
	posts := append(slices.Clone(edgeIDs), snowflakeIDs(100)...)
	posts = append(posts, randomIDs(100)...)
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		for i, m := range modes[1:] {
			t.Run(m.name, func(t *testing.T) {
				srv := redistest.Start(t)
				var errs errLog
				kinds := []Kind{{Name: "post", Fields: []string{"views", "likes"}, Population: 500}}
				c := newCounters(t, Config{DB: db, Dialect: d, Layout: lay, Pool: srv.Pool(), Kinds: kinds, Table: fmt.Sprintf("shapes_%d", i),
					WriteBehind: m.writeBehind, FlushInterval: time.Hour, CacheTimeout: 10 * time.Second, OnError: errs.add,
					StatementTimeout: 20 * time.Second}) // what is tested is where counts go, not how fast on a loaded machine
				want := postCounts{}
				incrPosts(t, c, posts, want, func(x int) int64 { return int64(x + 1) }, func(x int) int64 { return -int64(x % 7) })
				// Warm every other post, so the next writes meet warm and
				// cold entries side by side in the buckets.
				var half []int64
				for x := 0; x < len(posts); x += 2 {
					half = append(half, posts[x])
				}
				if _, err := c.BatchGet(context.Background(), "post", half); err != nil {
					t.Fatal(err)
				}
				incrPosts(t, c, posts, want, func(x int) int64 { return 1000 }, func(x int) int64 { return int64(x) << 20 })
				assertPosts(t, c, posts, want)
				if err := c.Reset(context.Background(), "post", math.MaxInt64, "views"); err != nil {
					t.Fatal(err)
				}
				want[math.MaxInt64] = [2]int64{want[math.MaxInt64][0], 0}
				assertPosts(t, c, posts, want)
				mustFlush(t, c)
				assertStored(t, srv, c, posts, want)
				if e := errs.list(); len(e) != 0 {
					t.Errorf("errors reported: %v", e)
				}
			})
		}
	})
}

// A sparse kind whose population was set far too low: its one bucket
// outgrows the listpack encoding (on a server configured as the redis.conf
// Redis ships: 128 entries). Counts stay exact, and OnError hears of it
// once, with what to change.
func TestSparseBucketOverfull(t *testing.T) {
	srv := redistest.StartWith(t, redistest.Options{Args: shippedConf})
	var errs errLog
	kinds := []Kind{{Name: "post", Fields: []string{"views", "likes"}, Population: 10}}
	c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite, Layout: LayoutSparse, Pool: srv.Pool(), Kinds: kinds,
		FlushInterval: time.Hour, OnError: errs.add})
	posts := randomIDs(400)
	want := postCounts{}
	incrPosts(t, c, posts, want, func(x int) int64 { return int64(x) }, func(x int) int64 { return 3 })
	for from := 0; from < len(posts); from += 100 {
		if _, err := c.BatchGet(context.Background(), "post", posts[from:from+100]); err != nil {
			t.Fatal(err)
		}
	}
	incrPosts(t, c, posts, want, func(x int) int64 { return 1 }, func(x int) int64 { return 0 })
	key := c.cs.ref("post", posts[0]).key
	if n, _ := redis.Int(srv.Do("HLEN", key), nil); n != len(posts)+1 {
		t.Errorf("the one bucket holds %d entries, want the %d posts and its birth time", n, len(posts))
	}
	if enc, _ := redis.String(srv.Do("OBJECT", "ENCODING", key), nil); enc != "hashtable" {
		t.Errorf("the overfull bucket is encoded as %q, want hashtable", enc)
	}
	assertPosts(t, c, posts, want)
	reports := errs.list()
	if len(reports) != 1 || !strings.Contains(reports[0].Error(), "Kind.Population") ||
		!strings.Contains(reports[0].Error(), fmt.Sprint(redisstore.BucketSize)) {
		t.Errorf("reports %v, want one naming Kind.Population", reports)
	}
}
