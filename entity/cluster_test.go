package entity

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/entity/internal/redisstore"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// The counters on a Redis Cluster: entities spread over the three
// masters, writes from many goroutines, batch reads that cross nodes, a
// cold entity told from a zero, unread counts, and a failover of a master
// mid-traffic. Every count ends equal to SQL and to what was written.
func TestCountersOnCluster(t *testing.T) {
	eachLayout(t, testCountersOnCluster)
}

func testCountersOnCluster(t *testing.T, lay Layout) {
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	pool := cl.Client(t)
	c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite, Pool: pool, Layout: lay})
	ctx := context.Background()

	// Compact buckets hold runs of ids: spread the posts over buckets.
	// The sparse layout spreads snowflake ids by itself.
	const posts = 40
	ids := make([]int64, posts)
	for i := range ids {
		ids[i] = 1 + int64(i)
		if lay == LayoutCompact {
			ids[i] = 1 + int64(i)*redisstore.BucketSize
		}
	}
	if lay == LayoutSparse {
		ids = snowflakeIDs(posts)
	}
	nodes := map[string]bool{}
	pos := map[int64]int{}
	for i, id := range ids {
		pos[id] = i
		r := c.cs.ref("post", id)
		nodes[cl.MasterOf(r.key).Addr] = true
		for _, k := range []string{r.lease, r.marks, r.b.Old} {
			if k != "" && redisc.Slot(k) != redisc.Slot(r.key) {
				t.Fatalf("%s and %s are in different slots", r.key, k)
			}
		}
	}
	if len(nodes) < 3 {
		t.Fatalf("the %d posts' keys sit on %d nodes; want all 3", posts, len(nodes))
	}

	// Warm half of them, so writes meet both cold and cached entities.
	if _, err := c.BatchGet(ctx, "post", ids[:posts/2]); err != nil {
		t.Fatal(err)
	}

	var wrote [posts]atomic.Int64
	var failures atomic.Int64
	run := func(stop <-chan struct{}, worker int) {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			x := (worker*7 + i) % posts
			if err := c.Incr(ctx, "post", ids[x], "likes", 1); err != nil {
				failures.Add(1)
				continue
			}
			wrote[x].Add(1)
			if i%5 == 0 {
				if _, err := c.BatchGet(ctx, "post", ids); err != nil {
					failures.Add(1)
				}
			}
		}
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() { defer wg.Done(); run(stop, w) }()
	}
	time.Sleep(time.Second)
	cl.Failover(t, cl.MasterOf(c.cs.ref("post", ids[0]).key))
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()
	if n := failures.Load(); n != 0 {
		t.Errorf("%d calls failed through the failover; the cache's trouble must not fail them", n)
	}

	got, err := c.BatchGet(ctx, "post", ids)
	if err != nil {
		t.Fatal(err)
	}
	do := func(key, cmd string, args ...any) any { return cl.Do(t, key, cmd, args...) }
	for i, id := range ids {
		want := wrote[pos[id]].Load()
		if got[i]["likes"] != want || sqlValue(t, c, "post", id, "likes") != want {
			t.Errorf("post %d likes: read %d, SQL %d, written %d", id, got[i]["likes"], sqlValue(t, c, "post", id, "likes"), want)
		}
		if m := cacheEntry(t, c, do, "post", id); m != nil && m["likes"] != want {
			t.Errorf("post %d cached likes %d, want %d", id, m["likes"], want)
		}
	}

	// A never-written entity reads as zero, and is then cached as zero,
	// not mistaken for a miss.
	zero, err := c.Get(ctx, "post", 999)
	if err != nil || zero["likes"] != 0 {
		t.Fatalf("untouched post: %v, %v", zero, err)
	}
	if m := cacheEntry(t, c, do, "post", 999); m == nil || m["likes"] != 0 {
		t.Errorf("untouched post cached as %v, want a zero entry", m)
	}

	// Unread counts: one notice for everyone, whatever their node. Users
	// start with what they have read (as the forum's CreateUser does).
	for user := int64(1); user <= 10; user++ {
		if err := c.MarkRead(ctx, user, Feed{Kind: "user", Field: "posts"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.InTx(ctx, func(ctx context.Context, tx *Tx) error { _, err := tx.PublishNotice(); return err }); err != nil {
		t.Fatal(err)
	}
	for user := int64(1); user <= 10; user++ {
		u, err := c.Unread(ctx, user, Feed{Kind: "user", Field: "posts"}, nil)
		if err != nil || u.Notices != 1 {
			t.Errorf("user %d unread %+v, %v: want one notice", user, u, err)
		}
	}
	if err := c.MarkRead(ctx, 3, Feed{Kind: "user", Field: "posts"}, nil); err != nil {
		t.Fatal(err)
	}
	if u, _ := c.Unread(ctx, 3, Feed{Kind: "user", Field: "posts"}, nil); u.Notices != 0 {
		t.Errorf("user 3 after reading: %+v", u)
	}
}

// A busy bucket's slot moves to another master, key by key, while posts in
// it are incremented and read: scripts meet ASK and TRYAGAIN and the cache
// steps aside meanwhile. No call fails, and every count ends equal to SQL
// and to what was written.
func TestBucketSlotMigrating(t *testing.T) {
	eachLayout(t, func(t *testing.T, lay Layout) {
		cl := redistest.SharedCluster(t)
		cl.Reset(t)
		// One sparse bucket, one compact bucket: every post in one slot.
		kinds := []Kind{{Name: "post", Fields: []string{"views", "likes"}, Population: 80}}
		var errs errLog
		c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite, Pool: cl.Client(t), Layout: lay, Kinds: kinds,
			FlushInterval: 20 * time.Millisecond, CacheTimeout: 2 * time.Second, OnError: errs.add})
		errs.clear()
		posts := ids(40, 1)
		if lay == LayoutSparse {
			posts = snowflakeIDs(40)
		}
		ctx := context.Background()
		if _, err := c.BatchGet(ctx, "post", posts); err != nil {
			t.Fatal(err)
		}
		key := c.cs.ref("post", posts[0]).key
		from := cl.MasterOf(key)
		var to *redistest.Server
		for _, m := range cl.Masters() {
			if m != from {
				to = m
			}
		}
		var wrote [40]atomic.Int64
		var failures atomic.Int64
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Go(func() {
				for i := w; ; i++ {
					select {
					case <-stop:
						return
					default:
					}
					if err := c.Incr(ctx, "post", posts[i%40], "likes", 1); err != nil {
						failures.Add(1)
					} else {
						wrote[i%40].Add(1)
					}
					if _, err := c.BatchGet(ctx, "post", posts); err != nil {
						failures.Add(1)
					}
				}
			})
		}
		time.Sleep(200 * time.Millisecond)
		cl.MigrateSlotSlowly(t, redisc.Slot(key), to, 20*time.Millisecond)
		time.Sleep(200 * time.Millisecond)
		close(stop)
		wg.Wait()
		if n := failures.Load(); n != 0 {
			t.Errorf("%d calls failed while the slot moved", n)
		}
		redirected := 0
		for _, err := range errs.list() {
			if s := err.Error(); strings.Contains(s, "ASK") || strings.Contains(s, "TRYAGAIN") || strings.Contains(s, "MOVED") {
				redirected++
			}
		}
		t.Logf("%d cache calls redirected or told to try again", redirected)
		if redirected == 0 {
			t.Error("no cache call met the moving slot")
		}
		if got := cl.MasterOf(key); got != to {
			t.Fatalf("slot served by %v, want %s", got, to.Addr)
		}
		waitFor(t, "cache back in use", c.cs.cacheUp)
		got, err := c.BatchGet(ctx, "post", posts)
		if err != nil {
			t.Fatal(err)
		}
		do := func(key, cmd string, args ...any) any { return cl.Do(t, key, cmd, args...) }
		for i, id := range posts {
			want := wrote[i].Load()
			if got[i]["likes"] != want || sqlValue(t, c, "post", id, "likes") != want {
				t.Errorf("post %d likes: read %d, SQL %d, written %d", id, got[i]["likes"], sqlValue(t, c, "post", id, "likes"), want)
			}
			// A write mark left by a write whose script met the moving
			// slot may hold this entity's warm-up off until it expires.
			if e := cacheEntry(t, c, do, "post", id); e != nil && e["likes"] != want {
				t.Errorf("post %d cached as %v, want likes %d", id, e, want)
			}
		}
	})
}
