package entity

import (
	"context"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisinfo"
	"github.com/pulse-dev/pulse/internal/testenv/race"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// shapeOf is the id shape a layout is tested with: the compact layouts'
// own (dense for LayoutCompact, snowflake for LayoutSparse), dense for
// the hash layout, which takes any.
func shapeOf(lay Layout) idShape {
	if lay == LayoutSparse {
		return snowflakeShape
	}
	return denseShape
}

// infoInt reads one number from INFO.
func infoInt(t testing.TB, srv *redistest.Server, section, name string) int64 {
	t.Helper()
	info, err := redis.String(srv.Do("INFO", section), nil)
	if err != nil {
		t.Fatal(err)
	}
	if v := redisinfo.Field(info, name); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	t.Fatalf("INFO %s has no %s", section, name)
	return 0
}

// Redis full and evicting: maxmemory 192 KiB above what the server holds
// once its connections and scripts are set up, a fraction of the users'
// cache. Write-through runs with allkeys-lru (any key may go: buckets,
// leases, write marks), write-behind with volatile-lru (keys with a TTL:
// the cache, never the pending deltas), as its documentation asks. While
// buckets and entities are evicted, every read answers the true counts,
// no cache call fails but for want of memory (the server's buffers may
// fill what little is left: then SQL answers), and SQL ends with every
// increment. Sequential traffic over many users, which the race detector
// slows tenfold: it runs in the pass without it.
func TestCacheEvicting(t *testing.T) {
	race.SkipMeasurement(t)
	const n = 30_000
	counts := drawCounts(n)
	eachLayout(t, func(t *testing.T, lay Layout) {
		users := shapeOf(lay).draw(n)
		for _, m := range modes[1:] {
			t.Run(m.name, func(t *testing.T) {
				policy := "allkeys-lru"
				if m.writeBehind {
					policy = "volatile-lru"
				}
				srv := redistest.StartWith(t, redistest.Options{Args: shippedConf})
				pool := &redis.Pool{MaxIdle: 2, MaxActive: 2, Wait: true, Dial: func() (redis.Conn, error) { return redis.Dial("tcp", srv.Addr) }}
				t.Cleanup(func() { pool.Close() })
				var errs errLog
				c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite, Pool: pool, Kinds: []Kind{usersOf(n)}, Layout: lay,
					WriteBehind: m.writeBehind, FlushInterval: 50 * time.Millisecond, CacheTimeout: 10 * time.Second, StatementTimeout: time.Minute,
					OnError: errs.add})
				errs.clear()
				storeSQL(t, c, users, counts)
				if _, err := c.BatchGet(context.Background(), "user", users[:evictBatch]); err != nil {
					t.Fatal(err)
				}
				limit := infoInt(t, srv, "memory", "used_memory") + 192<<10
				srv.Do("CONFIG", "SET", "maxmemory", limit, "maxmemory-policy", policy)
				added := evictingTraffic(t, c, users, counts)
				if e := infoInt(t, srv, "stats", "evicted_keys"); e == 0 {
					t.Fatal("nothing was evicted: the test did not fill the cache")
				} else {
					t.Logf("%d keys evicted; %d left", e, srv.Do("DBSIZE"))
				}
				oom := 0
				for _, err := range errs.list() {
					if !strings.Contains(err.Error(), "OOM") {
						t.Errorf("eviction is not a failure, but the cache reported %v", err)
					}
					oom++
				}
				t.Logf("%d cache calls refused for want of memory", oom)
				mustFlush(t, c)
				for i, a := range added {
					if v := sqlValue(t, c, "user", users[i], "posts"); v != counts[i][2]+a {
						t.Errorf("SQL user %d posts = %d, want %d", users[i], v, counts[i][2]+a)
					}
				}
			})
		}
	})
}

// evictBatch is how many users one read of TestCacheEvicting asks for: few
// enough that the server's buffers for a batch stay well within the 192 KiB
// its keys are left (a batch of 1,000 scripts takes about 200 KB).
const evictBatch = 100

// evictingTraffic reads every user, then batches of random users while
// incrementing some, checking every read; it returns what it added, by
// user index.
func evictingTraffic(t *testing.T, c *Counters, users []int64, counts [][]int64) map[int]int64 {
	t.Helper()
	for from := 0; from < len(users); from += evictBatch {
		if _, err := c.BatchGet(context.Background(), "user", users[from:from+evictBatch]); err != nil {
			t.Fatal(err)
		}
	}
	r := rand.New(rand.NewPCG(3, 4))
	added := map[int]int64{}
	batch := make([]int64, evictBatch)
	at := make([]int, len(batch))
	for step := 0; step < 150; step++ {
		if step%3 == 0 {
			i := r.IntN(len(users))
			mustIncr(t, c, "user", users[i], "posts", 1)
			added[i]++
			continue
		}
		for x := range batch {
			at[x] = r.IntN(len(users))
			batch[x] = users[at[x]]
		}
		got, err := c.BatchGet(context.Background(), "user", batch)
		if err != nil {
			t.Fatal(err)
		}
		for x, i := range at {
			if got[x]["posts"] != counts[i][2]+added[i] || got[x]["followers"] != counts[i][1] {
				t.Fatalf("step %d: user %d = %v, want posts %d followers %d", step, users[i], got[x], counts[i][2]+added[i], counts[i][1])
			}
		}
	}
	return added
}

// Redis out of memory with noeviction (maxmemory 1 byte: every write
// refused with OOM) while posts are read and incremented: every call still
// succeeds, on SQL, and is counted once; once memory is back the cache
// returns and holds the true counts.
func TestCacheOutOfMemory(t *testing.T) {
	eachLayout(t, func(t *testing.T, lay Layout) {
		posts := shapeOf(lay).draw(30)
		for _, m := range modes[1:] {
			t.Run(m.name, func(t *testing.T) {
				srv := redistest.Start(t)
				var errs errLog
				c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite, Pool: srv.Pool(), Layout: lay, WriteBehind: m.writeBehind,
					FlushInterval: 20 * time.Millisecond, CacheTimeout: 2 * time.Second, OnError: errs.add})
				errs.clear()
				want := postCounts{}
				one := func(int) int64 { return 1 }
				incrPosts(t, c, posts, want, one, one)
				if _, err := c.BatchGet(context.Background(), "post", posts[:15]); err != nil {
					t.Fatal(err)
				}
				mustFlush(t, c) // no delta waits in Redis when memory runs out
				restore := srv.Faults().OOM()
				for round := 0; round < 3; round++ {
					incrPosts(t, c, posts, want, one, func(x int) int64 { return int64(x) })
					assertPosts(t, c, posts, want)
				}
				if len(errs.list()) == 0 {
					t.Error("OOM was not reported to OnError")
				}
				restore()
				waitFor(t, "cache back in use", c.cs.cacheUp)
				incrPosts(t, c, posts, want, one, one)
				assertPosts(t, c, posts, want)
				mustFlush(t, c)
				assertStored(t, srv, c, posts, want)
			})
		}
	})
}

// A batch read whose warm-up is written in part: between the read and the
// warm-up, one of the cluster's three masters fails over to its replica,
// so the warm-up's scripts on the two others cache their entities and
// those sent to the old master are refused (MOVED). The read answers
// SQL's counts for all; the cache comes back and serves the true counts,
// the entries written in part included.
func TestPartlyWarmedBatchOnCluster(t *testing.T) {
	eachLayout(t, func(t *testing.T, lay Layout) {
		cl := redistest.SharedCluster(t)
		cl.Reset(t)
		var armed atomic.Bool
		posts := snowflakeIDs(60)
		cfg := Config{DB: sqliteDB(t), Dialect: SQLite, Pool: cl.Client(t), Layout: lay, FlushInterval: 20 * time.Millisecond,
			CacheTimeout: 2 * time.Second, StatementTimeout: time.Minute, OnError: func(error) {}}
		var c *Counters
		cfg.hooks.afterLoad = func(string, []int64) {
			if armed.CompareAndSwap(true, false) {
				cl.Failover(t, cl.MasterOf(c.cs.ref("post", posts[0]).key))
			}
		}
		c = newCounters(t, cfg)
		want := postCounts{}
		incrPosts(t, c, posts, want, func(x int) int64 { return int64(x) }, func(int) int64 { return 7 })
		armed.Store(true)
		assertPosts(t, c, posts, want)
		if armed.Load() {
			t.Fatal("the batch found everything cached: nothing was warmed")
		}
		do := func(key, cmd string, args ...any) any { return cl.Do(t, key, cmd, args...) }
		var warmed int
		for _, id := range posts {
			if cacheEntry(t, c, do, "post", id) != nil {
				warmed++
			}
		}
		t.Logf("%d of %d posts cached by the batch", warmed, len(posts))
		if warmed == 0 || warmed == len(posts) {
			t.Fatalf("%d of %d cached: want the batch written in part", warmed, len(posts))
		}
		waitFor(t, "cache back in use", c.cs.cacheUp)
		incrPosts(t, c, posts, want, func(int) int64 { return 1 }, func(int) int64 { return -1 })
		assertPosts(t, c, posts, want)
		for _, id := range posts {
			if e := cacheEntry(t, c, do, "post", id); e == nil || e["likes"] != want[id][0] || e["views"] != want[id][1] {
				t.Errorf("post %d cached as %v, want likes %d views %d", id, e, want[id][0], want[id][1])
			}
		}
	})
}
