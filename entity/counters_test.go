package entity

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

func TestConfigValidation(t *testing.T) {
	db := sqliteDB(t)
	pool := deadPool(t)
	ok := []Kind{{Name: "post", Fields: []string{"likes", "views"}}}
	tests := []struct {
		name string
		cfg  Config
	}{
		{"no db", Config{Dialect: SQLite, Kinds: ok}},
		{"no dialect", Config{DB: db, Kinds: ok}},
		{"unknown dialect", Config{DB: db, Dialect: "oracle", Kinds: ok}},
		{"buffered field not declared", Config{DB: db, Dialect: SQLite, Kinds: []Kind{{Name: "post", Fields: []string{"likes"}, Buffered: []string{"views"}}}}},
		{"negative statement timeout", Config{DB: db, Dialect: SQLite, Kinds: ok, StatementTimeout: -1}},
		{"no kinds", Config{DB: db, Dialect: SQLite}},
		{"empty kind name", Config{DB: db, Dialect: SQLite, Kinds: []Kind{{Fields: []string{"a"}}}}},
		{"kind name with colon", Config{DB: db, Dialect: SQLite, Kinds: []Kind{{Name: "po:st", Fields: []string{"a"}}}}},
		{"upper-case kind name", Config{DB: db, Dialect: SQLite, Kinds: []Kind{{Name: "Post", Fields: []string{"a"}}}}},
		{"kind name too long", Config{DB: db, Dialect: SQLite, Kinds: []Kind{{Name: "p" + string(make([]byte, 64)), Fields: []string{"a"}}}}},
		{"duplicate kind", Config{DB: db, Dialect: SQLite, Kinds: append(ok, ok[0])}},
		{"kind without fields", Config{DB: db, Dialect: SQLite, Kinds: []Kind{{Name: "post"}}}},
		{"bad field name", Config{DB: db, Dialect: SQLite, Kinds: []Kind{{Name: "post", Fields: []string{"#batch"}}}}},
		{"duplicate field", Config{DB: db, Dialect: SQLite, Kinds: []Kind{{Name: "post", Fields: []string{"likes", "likes"}}}}},
		{"hot field not declared", Config{DB: db, Dialect: SQLite, Kinds: []Kind{{Name: "post", Fields: []string{"likes"}, Hot: map[string]int{"views": 4}}}}},
		{"hot with one slot", Config{DB: db, Dialect: SQLite, Kinds: []Kind{{Name: "post", Fields: []string{"likes"}, Hot: map[string]int{"likes": 1}}}}},
		{"hot with too many slots", Config{DB: db, Dialect: SQLite, Kinds: []Kind{{Name: "post", Fields: []string{"likes"}, Hot: map[string]int{"likes": MaxHotSlots + 1}}}}},
		{"table with a space", Config{DB: db, Dialect: SQLite, Kinds: ok, Table: "pulse counters"}},
		{"table with a quote", Config{DB: db, Dialect: SQLite, Kinds: ok, Table: "x`; DROP TABLE y"}},
		{"table starting with a digit", Config{DB: db, Dialect: SQLite, Kinds: ok, Table: "1counters"}},
		{"negative ttl", Config{DB: db, Dialect: SQLite, Kinds: ok, TTL: -time.Second}},
		{"ttl below a second", Config{DB: db, Dialect: SQLite, Kinds: ok, TTL: time.Millisecond}},
		{"negative flush interval", Config{DB: db, Dialect: SQLite, Kinds: ok, FlushInterval: -1}},
		{"negative fold interval", Config{DB: db, Dialect: SQLite, Kinds: ok, FoldInterval: -1}},
		{"negative cache timeout", Config{DB: db, Dialect: SQLite, Kinds: ok, CacheTimeout: -1}},
		{"write-behind without redis", Config{DB: db, Dialect: SQLite, Kinds: ok, WriteBehind: true}},
		{"unknown layout", Config{DB: db, Dialect: SQLite, Kinds: ok, Layout: "columnar"}},
		{"compact kind with too many fields", Config{DB: db, Dialect: SQLite, Layout: LayoutCompact,
			Kinds: []Kind{{Name: "post", Fields: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}}}}},
		{"sparse kind with too many fields", Config{DB: db, Dialect: SQLite, Layout: LayoutSparse,
			Kinds: []Kind{{Name: "post", Fields: []string{"a", "b", "c", "d", "e", "f", "g", "h", "i"}}}}},
		{"negative population", Config{DB: db, Dialect: SQLite, Layout: LayoutSparse,
			Kinds: []Kind{{Name: "post", Fields: []string{"likes"}, Population: -1}}}},
		{"population too large", Config{DB: db, Dialect: SQLite, Layout: LayoutSparse,
			Kinds: []Kind{{Name: "post", Fields: []string{"likes"}, Population: MaxPopulation + 1}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(context.Background(), tt.cfg)
			if err == nil {
				c.Close(context.Background())
				t.Fatal("New accepted the config")
			}
			t.Log(err)
		})
	}
	t.Run("valid with defaults", func(t *testing.T) {
		c := newCounters(t, Config{DB: db, Dialect: SQLite, Pool: pool, Kinds: forumKinds})
		if c.sql.Table != DefaultTable || c.ttl != DefaultTTL || c.flushInterval != DefaultFlushInterval ||
			c.foldInterval != DefaultFoldInterval || c.cache.Timeout() != DefaultCacheTimeout {
			t.Errorf("defaults not applied: table %q ttl %v flush %v fold %v cache timeout %v",
				c.sql.Table, c.ttl, c.flushInterval, c.foldInterval, c.cache.Timeout())
		}
		want := []KindInfo{
			{Name: "user", Fields: []string{"following", "followers", "posts", "replies", "coins", "groups"}},
			{Name: "post", Fields: []string{"views", "replies", "likes", "favorites"}},
			{Name: "group", Fields: []string{"subscribers", "posts", "featured"}},
			{Name: "message", Fields: []string{"replies", "mentions", "likes", "followers", "direct"}},
		}
		if got := c.Kinds(); !reflect.DeepEqual(got, want) {
			t.Errorf("Kinds() = %v, want %v", got, want)
		}
		// New is idempotent on the tables it made.
		again := newCounters(t, Config{DB: db, Dialect: SQLite, Kinds: forumKinds})
		_ = again
	})
}

func TestUnknownKindFieldAndLimits(t *testing.T) {
	c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite})
	ctx := context.Background()
	truth := func(context.Context) (map[int64]int64, error) { return nil, nil }
	_, getErr := c.Get(ctx, "comment", 1)
	_, batchErr := c.BatchGet(ctx, "comment", []int64{1})
	_, topKindErr := c.Top(ctx, "comment", "likes", 10)
	_, topFieldErr := c.Top(ctx, "post", "shares", 10)
	_, recKindErr := c.Reconcile(ctx, "comment", "likes", truth)
	_, recFieldErr := c.Reconcile(ctx, "post", "shares", truth)
	_, tooMany := c.BatchGet(ctx, "post", make([]int64, MaxBatchIDs+1))
	_, topZero := c.Top(ctx, "post", "likes", 0)
	_, topHuge := c.Top(ctx, "post", "likes", MaxTop+1)
	tests := []struct {
		name string
		err  error
		want error
	}{
		{"Incr kind", c.Incr(ctx, "comment", 1, "likes", 1), ErrUnknownKind},
		{"Incr field", c.Incr(ctx, "post", 1, "shares", 1), ErrUnknownField},
		{"Incr field of another kind", c.Incr(ctx, "post", 1, "followers", 1), ErrUnknownField},
		{"Reset kind", c.Reset(ctx, "comment", 1, "replies"), ErrUnknownKind},
		{"Reset field", c.Reset(ctx, "message", 1, "shares"), ErrUnknownField},
		{"Get kind", getErr, ErrUnknownKind},
		{"BatchGet kind", batchErr, ErrUnknownKind},
		{"Top kind", topKindErr, ErrUnknownKind},
		{"Top field", topFieldErr, ErrUnknownField},
		{"Reconcile kind", recKindErr, ErrUnknownKind},
		{"Reconcile field", recFieldErr, ErrUnknownField},
		{"BatchGet too many ids", tooMany, ErrTooManyIDs},
		{"Top n = 0", topZero, ErrBadLimit},
		{"Top n too large", topHuge, ErrBadLimit},
	}
	for _, tt := range tests {
		if !errors.Is(tt.err, tt.want) {
			t.Errorf("%s: error %v, want %v", tt.name, tt.err, tt.want)
		}
	}
	if err := c.Incr(ctx, "post", 1, "likes", MaxDelta+1); err == nil {
		t.Error("a delta beyond MaxDelta was accepted")
	}
	if _, err := c.Reconcile(ctx, "post", "likes", nil); err == nil {
		t.Error("Reconcile accepted a nil Source")
	}
	if got, err := c.BatchGet(ctx, "post", make([]int64, MaxBatchIDs)); err != nil || len(got) != MaxBatchIDs {
		t.Errorf("BatchGet of MaxBatchIDs ids: %d results, %v", len(got), err)
	}
}

// mode is how a test runs the counters.
type mode struct {
	name        string
	cache       bool
	writeBehind bool
}

var modes = []mode{
	{"sql-only", false, false},
	{"write-through", true, false},
	{"write-behind", true, true},
}

func TestCountsReadAndWrite(t *testing.T) {
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		for i, m := range modes {
			t.Run(m.name, func(t *testing.T) {
				cfg := Config{DB: db, Dialect: d, Layout: lay, Table: fmt.Sprintf("rw_%d", i), WriteBehind: m.writeBehind, FlushInterval: time.Hour}
				var srv *redistest.Server
				if m.cache {
					srv = redistest.Start(t)
					cfg.Pool = srv.Pool()
				}
				c := newCounters(t, cfg)
				ctx := context.Background()

				untouched := mustGet(t, c, "user", 42)
				want := Counts{"following": 0, "followers": 0, "posts": 0, "replies": 0, "coins": 0, "groups": 0}
				if !reflect.DeepEqual(untouched, want) {
					t.Errorf("untouched user = %v, want %v", untouched, want)
				}

				mustIncr(t, c, "user", 1, "followers", 3)
				mustIncr(t, c, "user", 1, "posts", 1)
				mustIncr(t, c, "user", 2, "coins", -5) // a count may go negative
				mustIncr(t, c, "post", 10, "views", 7)
				mustIncr(t, c, "post", 10, "likes", 2)
				if m.cache {
					_ = mustGet(t, c, "user", 1) // warm user 1, then write to the warm entry
				}
				mustIncr(t, c, "user", 1, "followers", 1)
				mustIncr(t, c, "user", 2, "coins", 1)

				got, err := c.BatchGet(ctx, "user", []int64{2, 1, 99, 1})
				if err != nil {
					t.Fatal(err)
				}
				fields := c.kinds["user"].fields
				wantRows := []string{
					"following=0 followers=0 posts=0 replies=0 coins=-4 groups=0 ",
					"following=0 followers=4 posts=1 replies=0 coins=0 groups=0 ",
					"following=0 followers=0 posts=0 replies=0 coins=0 groups=0 ",
					"following=0 followers=4 posts=1 replies=0 coins=0 groups=0 ",
				}
				for i := range wantRows {
					if s := fmtCounts(got[i], fields); s != wantRows[i] {
						t.Errorf("BatchGet[%d] = %s, want %s", i, s, wantRows[i])
					}
				}
				post := mustGet(t, c, "post", 10)
				if post["views"] != 7 || post["likes"] != 2 {
					t.Errorf("post 10 = %v", post)
				}

				if m.writeBehind {
					if v := sqlValue(t, c, "user", 1, "followers"); v != 0 {
						t.Errorf("write-behind: SQL has %d before any flush", v)
					}
					mustFlush(t, c)
				}
				for _, check := range []struct {
					kind  string
					id    int64
					field string
					want  int64
				}{{"user", 1, "followers", 4}, {"user", 1, "posts", 1}, {"user", 2, "coins", -4}, {"post", 10, "views", 7}} {
					if v := sqlValue(t, c, check.kind, check.id, check.field); v != check.want {
						t.Errorf("SQL %s %d %s = %d, want %d", check.kind, check.id, check.field, v, check.want)
					}
				}
				if m.cache {
					for _, id := range []int64{1, 2, 99} {
						if cached(t, srv, c, "user", id) == nil {
							t.Errorf("user %d not cached after a read", id)
						}
						assertCacheMatchesSQL(t, srv, c, "user", id)
					}
					ttl, _ := redis.Int64(srv.Do("TTL", c.cs.ref("user", 1).key), nil)
					if ttl <= 0 || ttl > int64(DefaultTTL/time.Second) {
						t.Errorf("cache TTL %d s, want up to %v", ttl, DefaultTTL)
					}
				}
			})
		}
	})
}

// 1000 likes at once on an entity nobody has read: every one is counted
// once in SQL and the cache ends equal to it, while readers keep warming.
func TestConcurrentLikesColdCache(t *testing.T) {
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		for i, m := range modes[1:] {
			t.Run(m.name, func(t *testing.T) {
				srv := redistest.Start(t)
				// 1000 writers at once on one row queue longer than the
				// default statement and cache timeouts on a loaded 2-core
				// machine (they wait for the bounded pool's connections);
				// this test is about exactness, the stall tests about
				// deadlines.
				c := newCounters(t, Config{DB: db, Dialect: d, Layout: lay, Pool: boundedPool(t, srv), Table: fmt.Sprintf("likes_%d", i),
					WriteBehind: m.writeBehind, FlushInterval: 20 * time.Millisecond, StatementTimeout: time.Minute, CacheTimeout: time.Minute})
				ctx := context.Background()
				const likes = 1000
				var wg sync.WaitGroup
				var failed atomic.Int64
				stop := make(chan struct{})
				var readers sync.WaitGroup
				for r := 0; r < 4; r++ {
					readers.Add(1)
					go func() {
						defer readers.Done()
						for {
							select {
							case <-stop:
								return
							default:
							}
							if _, err := c.Get(ctx, "post", 1); err != nil {
								failed.Add(1)
							}
							// Drop the entry now and then, so warm-ups keep racing the writers.
							if rand.IntN(4) == 0 {
								dropCached(srv, c, "post", 1)
							}
						}
					}()
				}
				for i := 0; i < likes; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := c.Incr(ctx, "post", 1, "likes", 1); err != nil {
							failed.Add(1)
							t.Log(err)
						}
					}()
				}
				wg.Wait()
				close(stop)
				readers.Wait()
				if n := failed.Load(); n != 0 {
					t.Fatalf("%d calls failed", n)
				}
				if m.writeBehind {
					mustFlush(t, c)
				}
				if v := sqlValue(t, c, "post", 1, "likes"); v != likes {
					t.Errorf("SQL likes = %d, want %d", v, likes)
				}
				assertCacheMatchesSQL(t, srv, c, "post", 1)
				// Under this load a cache call may time out, which takes the
				// cache out of use for a moment (SQL answers meanwhile) and
				// may leave a lease or write mark that holds warm-ups off
				// until it expires.
				waitFor(t, "a read warms the cache", func() bool {
					if got := mustGet(t, c, "post", 1)["likes"]; got != likes {
						t.Fatalf("Get likes = %d, want %d", got, likes)
					}
					return cached(t, srv, c, "post", 1) != nil
				})
				if e := cached(t, srv, c, "post", 1); e["likes"] != likes {
					t.Errorf("cache after a read = %v, want likes %d", e, likes)
				}
			})
		}
	})
}

// A reader loads a value from SQL; before it caches it, a writer adds to
// SQL and finds the cache cold. The reader's stale value must not be
// cached.
func TestWarmUpRaceStaleSetRefused(t *testing.T) {
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		srv := redistest.Start(t)
		loaded := make(chan struct{})
		release := make(chan struct{})
		var armed atomic.Bool
		cfg := Config{DB: db, Dialect: d, Layout: lay, Pool: srv.Pool()}
		cfg.hooks.afterLoad = func(kind string, ids []int64) {
			if armed.CompareAndSwap(true, false) {
				close(loaded)
				<-release
			}
		}
		c := newCounters(t, cfg)
		mustIncr(t, c, "post", 7, "likes", 5)

		armed.Store(true)
		var readerGot Counts
		var readerErr error
		done := make(chan struct{})
		go func() {
			defer close(done)
			readerGot, readerErr = c.Get(context.Background(), "post", 7)
		}()
		<-loaded                              // the reader holds likes = 5 from SQL
		mustIncr(t, c, "post", 7, "likes", 1) // SQL 6; the cache is cold
		close(release)
		<-done
		if readerErr != nil {
			t.Fatal(readerErr)
		}
		if readerGot["likes"] != 5 {
			t.Errorf("reader got likes %d, want the 5 it loaded", readerGot["likes"])
		}
		if e := cached(t, srv, c, "post", 7); e != nil {
			t.Errorf("the reader cached %v after the write; want no entry", e)
		}
		if got := mustGet(t, c, "post", 7)["likes"]; got != 6 {
			t.Errorf("Get likes = %d, want 6", got)
		}
		if e := cached(t, srv, c, "post", 7); e == nil || e["likes"] != 6 {
			t.Errorf("cache = %v, want likes 6", e)
		}
	})
}

// A writer has committed to SQL but not yet updated the cache; a reader
// loads the new value and would cache it, and then the writer would add
// its delta again. The reader's warm-up must be refused.
func TestWriteDuringWarmUpNotCountedTwice(t *testing.T) {
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		srv := redistest.Start(t)
		inSQL := make(chan struct{})
		release := make(chan struct{})
		var armed atomic.Bool
		cfg := Config{DB: db, Dialect: d, Layout: lay, Pool: srv.Pool()}
		cfg.hooks.afterSQLWrite = func(kind string, id int64) {
			if armed.CompareAndSwap(true, false) {
				close(inSQL)
				<-release
			}
		}
		c := newCounters(t, cfg)
		mustIncr(t, c, "post", 8, "likes", 5)

		armed.Store(true)
		done := make(chan struct{})
		go func() {
			defer close(done)
			if err := c.Incr(context.Background(), "post", 8, "likes", 1); err != nil {
				t.Error(err)
			}
		}()
		<-inSQL // SQL holds 6; the cache has not heard of it
		if got := mustGet(t, c, "post", 8)["likes"]; got != 6 {
			t.Errorf("reader got likes %d, want 6", got)
		}
		if e := cached(t, srv, c, "post", 8); e != nil {
			t.Errorf("a read cached %v while a write was under way", e)
		}
		close(release)
		<-done
		assertCacheMatchesSQL(t, srv, c, "post", 8)
		if got := mustGet(t, c, "post", 8)["likes"]; got != 6 {
			t.Errorf("Get likes = %d, want 6", got)
		}
		if e := cached(t, srv, c, "post", 8); e == nil || e["likes"] != 6 {
			t.Errorf("cache = %v, want likes 6", e)
		}
	})
}

// Redis stops mid-test: writes still reach SQL, reads come from SQL, and
// after Redis restarts with its old data the cache serves no stale value.
func TestRedisDownWriteThrough(t *testing.T) {
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		srv := redistest.Start(t)
		var errs errLog
		// What is tested is where counts go with Redis down, not how fast
		// SQL answers a loaded machine: a long StatementTimeout.
		c := newCounters(t, Config{DB: db, Dialect: d, Layout: lay, Pool: srv.Pool(), FlushInterval: 20 * time.Millisecond,
			CacheTimeout: 2 * time.Second, StatementTimeout: time.Minute, OnError: errs.add})
		errs.clear()
		ctx := context.Background()
		mustIncr(t, c, "user", 1, "followers", 3)
		mustIncr(t, c, "message", 9, "replies", 4)
		mustIncr(t, c, "post", 5, "views", 10)
		for _, e := range []struct {
			kind string
			id   int64
		}{{"user", 1}, {"message", 9}, {"post", 5}} {
			mustGet(t, c, e.kind, e.id) // warm
			if cached(t, srv, c, e.kind, e.id) == nil {
				t.Fatalf("%s %d not cached", e.kind, e.id)
			}
		}

		srv.Stop()
		// Every call succeeds on SQL alone.
		mustIncr(t, c, "user", 1, "followers", 2)
		mustIncr(t, c, "post", 5, "views", 1)
		mustIncr(t, c, "user", 3, "posts", 1) // never cached
		if err := c.Reset(ctx, "message", 9, "replies"); err != nil {
			t.Fatalf("reset with Redis down: %v", err)
		}
		if got := mustGet(t, c, "user", 1)["followers"]; got != 5 {
			t.Errorf("Get with Redis down: followers %d, want 5", got)
		}
		got, err := c.BatchGet(ctx, "post", []int64{5, 6})
		if err != nil || got[0]["views"] != 11 || got[1]["views"] != 0 {
			t.Errorf("BatchGet with Redis down = %v, %v", got, err)
		}
		if len(errs.list()) == 0 {
			t.Error("the outage was not reported to OnError")
		}

		srv.Restart() // the append-only file brings the old entries back
		// Until the stale entries are gone, reads still come from SQL.
		if got := mustGet(t, c, "message", 9)["replies"]; got != 0 {
			t.Errorf("right after restart: replies %d, want 0", got)
		}
		waitFor(t, "cache back in use", c.cs.cacheUp)
		for _, e := range []struct {
			kind  string
			id    int64
			field string
			want  int64
		}{{"user", 1, "followers", 5}, {"message", 9, "replies", 0}, {"post", 5, "views", 11}, {"user", 3, "posts", 1}} {
			assertCacheMatchesSQL(t, srv, c, e.kind, e.id)
			if got := mustGet(t, c, e.kind, e.id)[e.field]; got != e.want {
				t.Errorf("after restart %s %d %s = %d, want %d", e.kind, e.id, e.field, got, e.want)
			}
			if entry := cached(t, srv, c, e.kind, e.id); entry == nil || entry[e.field] != e.want {
				t.Errorf("after restart cache %s %d = %v, want %s %d", e.kind, e.id, entry, e.field, e.want)
			}
		}
		var stale int
		if err := db.QueryRow("SELECT COUNT(*) FROM " + c.sql.Stale).Scan(&stale); err != nil || stale != 0 {
			t.Errorf("%d stale records left (%v)", stale, err)
		}
		// Writes use the cache again.
		mustIncr(t, c, "user", 1, "followers", 1)
		if entry := cached(t, srv, c, "user", 1); entry == nil || entry["followers"] != 6 {
			t.Errorf("cache after a write = %v, want followers 6", entry)
		}
	})
}

// One process cannot reach Redis while another can: the entries the first
// could not update are dropped by the second's sweep.
func TestOutageOfOneProcessSweptByAnother(t *testing.T) {
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		srv := redistest.Start(t)
		healthy := newCounters(t, Config{DB: db, Dialect: d, Layout: lay, Pool: srv.Pool(), FlushInterval: 20 * time.Millisecond})
		cut := newCounters(t, Config{DB: db, Dialect: d, Layout: lay, Pool: deadPool(t), FlushInterval: time.Hour,
			OnError: func(error) {}})
		mustIncr(t, healthy, "user", 1, "followers", 3)
		mustGet(t, healthy, "user", 1)
		mustIncr(t, cut, "user", 1, "followers", 2) // SQL only, recorded stale
		waitFor(t, "stale entry swept", func() bool { return cached(t, srv, healthy, "user", 1) == nil })
		if got := mustGet(t, healthy, "user", 1)["followers"]; got != 5 {
			t.Errorf("followers = %d, want 5", got)
		}
	})
}

var errCrash = errors.New("process killed")

// A write-behind flush dies between each pair of its steps; a new process
// recovers. SQL ends exact, nothing lost or doubled, and reads are right
// in every state in between.
func TestWriteBehindCrashBetweenSteps(t *testing.T) {
	steps := []struct {
		name string
		step flushStep
	}{
		{"after move", stepMoved},
		{"after read", stepRead},
		{"inside the SQL transaction", stepApplied},
		{"after commit", stepCommitted},
		{"after delete", stepDone},
	}
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		srv := redistest.Start(t)
		for i, s := range steps {
			t.Run(s.name, func(t *testing.T) {
				cfg := Config{DB: db, Dialect: d, Layout: lay, Pool: srv.Pool(), Kinds: forumKinds, WriteBehind: true, FlushInterval: time.Hour,
					Prefix: fmt.Sprintf("crash%d:", i), Table: fmt.Sprintf("crash_%d", i)}
				dying := cfg
				dying.hooks.flushStep = func(at flushStep) error {
					if at == s.step {
						return errCrash
					}
					return nil
				}
				a, err := New(context.Background(), dying)
				if err == nil {
					err = a.Migrate(context.Background())
				}
				if err != nil {
					t.Fatal(err)
				}
				mustIncr(t, a, "post", 1, "likes", 3)
				mustIncr(t, a, "post", 2, "views", 5) // a hot field
				mustIncr(t, a, "user", 1, "coins", -2)
				if err := a.Flush(context.Background()); !errors.Is(err, errCrash) {
					t.Fatalf("flush = %v, want the crash", err)
				}
				// Reads are right whatever state the flush was left in.
				for _, w := range []struct {
					kind  string
					id    int64
					field string
					v     int64
				}{{"post", 1, "likes", 3}, {"post", 2, "views", 5}, {"user", 1, "coins", -2}} {
					if got := mustGet(t, a, w.kind, w.id)[w.field]; got != w.v {
						t.Errorf("before recovery: %s %d %s = %d, want %d", w.kind, w.id, w.field, got, w.v)
					}
				}
				a.stop() // dies: no final flush

				b := newCounters(t, cfg) // finishes the half-done flush
				mustIncr(t, b, "post", 1, "likes", 4)
				mustFlush(t, b)
				mustFlush(t, b)
				want := []struct {
					kind  string
					id    int64
					field string
					v     int64
				}{{"post", 1, "likes", 7}, {"post", 2, "views", 5}, {"user", 1, "coins", -2}}
				for _, w := range want {
					if v := sqlValue(t, b, w.kind, w.id, w.field); v != w.v {
						t.Errorf("SQL %s %d %s = %d, want %d", w.kind, w.id, w.field, v, w.v)
					}
					if got := mustGet(t, b, w.kind, w.id)[w.field]; got != w.v {
						t.Errorf("Get %s %d %s = %d, want %d", w.kind, w.id, w.field, got, w.v)
					}
					assertCacheMatchesSQL(t, srv, b, w.kind, w.id)
				}
				for _, key := range []string{b.keys.Pending, b.keys.Flushing} {
					if n, _ := redis.Int(srv.Do("EXISTS", key), nil); n != 0 {
						t.Errorf("%s left behind", key)
					}
				}
			})
		}
	})
}

// Two processes flush the same Redis at once: every delta lands once.
func TestWriteBehindConcurrentFlushers(t *testing.T) {
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		srv := redistest.Start(t)
		cfg := Config{DB: db, Dialect: d, Layout: lay, Pool: srv.Pool(), WriteBehind: true, FlushInterval: 5 * time.Millisecond,
			CacheTimeout: 5 * time.Second} // what is tested is the count, not how fast Redis answers a loaded machine
		a := newCounters(t, cfg)
		b := newCounters(t, cfg)
		var wg sync.WaitGroup
		for g := 0; g < 8; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				c := a
				if g%2 == 1 {
					c = b
				}
				for i := 0; i < 100; i++ {
					if err := c.Incr(context.Background(), "post", int64(i%5), "likes", 1); err != nil {
						t.Error(err)
					}
					if i%10 == 0 {
						if err := c.Flush(context.Background()); err != nil {
							t.Error(err)
						}
					}
				}
			}()
		}
		wg.Wait()
		mustFlush(t, a)
		mustFlush(t, b)
		for id := int64(0); id < 5; id++ {
			if v := sqlValue(t, a, "post", id, "likes"); v != 160 {
				t.Errorf("SQL post %d likes = %d, want 160", id, v)
			}
			if got := mustGet(t, b, "post", id)["likes"]; got != 160 {
				t.Errorf("Get post %d likes = %d, want 160", id, got)
			}
		}
	})
}

func TestWriteBehindCloseFlushes(t *testing.T) { eachLayout(t, testWriteBehindCloseFlushes) }

func testWriteBehindCloseFlushes(t *testing.T, lay Layout) {
	db := sqliteDB(t)
	srv := redistest.Start(t)
	c, err := New(context.Background(), Config{DB: db, Dialect: SQLite, Pool: srv.Pool(), Kinds: forumKinds,
		WriteBehind: true, FlushInterval: time.Hour, Layout: lay})
	if err == nil {
		err = c.Migrate(context.Background())
	}
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 10; i++ {
		mustIncr(t, c, "group", 3, "subscribers", 1)
	}
	if got := mustGet(t, c, "group", 3)["subscribers"]; got != 10 {
		t.Errorf("Get before flush = %d, want 10", got)
	}
	if v := sqlValue(t, c, "group", 3, "subscribers"); v != 0 {
		t.Errorf("SQL before flush = %d, want 0", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := c.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if v := sqlValue(t, c, "group", 3, "subscribers"); v != 10 {
		t.Errorf("SQL after Close = %d, want 10", v)
	}
	if err := c.Close(ctx); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestReconcileRepairsDrift(t *testing.T) {
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		srv := redistest.Start(t)
		c := newCounters(t, Config{DB: db, Dialect: d, Layout: lay, Pool: srv.Pool()})
		ctx := context.Background()
		mustIncr(t, c, "user", 1, "followers", 10)
		mustIncr(t, c, "user", 2, "followers", 3)
		mustIncr(t, c, "user", 3, "followers", 7)
		mustIncr(t, c, "user", 5, "followers", 4)
		mustIncr(t, c, "user", 1, "posts", 2)
		if _, err := c.BatchGet(ctx, "user", []int64{1, 2, 3, 4, 5}); err != nil { // warm them all
			t.Fatal(err)
		}
		// Drift behind the library's back, as a bug or a manual fix would.
		if _, err := db.Exec("UPDATE " + c.sql.Table + " SET value = 12 WHERE kind = 'user' AND entity_id = 1 AND field = 'followers'"); err != nil {
			t.Fatal(err)
		}
		truth := func(context.Context) (map[int64]int64, error) {
			// 1 is right, 2 drifted, 3 lost its followers, 4 was never
			// counted, 5 is right.
			return map[int64]int64{1: 10, 2: 5, 4: 1, 5: 4}, nil
		}
		fixes, err := c.Reconcile(ctx, "user", "followers", truth)
		if err != nil {
			t.Fatal(err)
		}
		want := []Fix{
			{"user", 1, "followers", 12, 10},
			{"user", 2, "followers", 3, 5},
			{"user", 3, "followers", 7, 0},
			{"user", 4, "followers", 0, 1},
		}
		if !reflect.DeepEqual(fixes, want) {
			t.Errorf("fixes = %v, want %v", fixes, want)
		}
		b, _ := json.Marshal(fixes[0])
		if string(b) != `{"kind":"user","id":"1","field":"followers","was":12,"now":10}` {
			t.Errorf("fix JSON = %s", b)
		}
		for id, v := range map[int64]int64{1: 10, 2: 5, 3: 0, 4: 1, 5: 4} {
			if got := sqlValue(t, c, "user", id, "followers"); got != v {
				t.Errorf("SQL user %d followers = %d, want %d", id, got, v)
			}
			assertCacheMatchesSQL(t, srv, c, "user", id)
			if got := mustGet(t, c, "user", id)["followers"]; got != v {
				t.Errorf("Get user %d followers = %d, want %d", id, got, v)
			}
		}
		if got := sqlValue(t, c, "user", 1, "posts"); got != 2 {
			t.Errorf("another field changed: posts = %d", got)
		}
		again, err := c.Reconcile(ctx, "user", "followers", truth)
		if err != nil || len(again) != 0 {
			t.Errorf("second reconcile = %v, %v; want no fixes", again, err)
		}

		// A hot field spread over slots is reconciled as one value.
		for i := 0; i < 20; i++ {
			mustIncr(t, c, "post", 1, "views", 1)
		}
		fixes, err = c.Reconcile(ctx, "post", "views", func(context.Context) (map[int64]int64, error) {
			return map[int64]int64{1: 25}, nil
		})
		if err != nil || !reflect.DeepEqual(fixes, []Fix{{"post", 1, "views", 20, 25}}) {
			t.Errorf("hot field fixes = %v, %v", fixes, err)
		}
		if got := mustGet(t, c, "post", 1)["views"]; got != 25 {
			t.Errorf("views = %d, want 25", got)
		}
		_, err = c.Reconcile(ctx, "post", "views", func(context.Context) (map[int64]int64, error) {
			return nil, errors.New("source down")
		})
		if err == nil {
			t.Error("a failing Source was not reported")
		}
	})
}

// A batch of 1000 ids is read in one Redis round trip once cached; cold,
// in two, with one SQL query.
func TestBatchGetRoundTrips(t *testing.T) {
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		srv := redistest.Start(t)
		var trips atomic.Int64
		var loads atomic.Int64
		// A long CacheTimeout: warming 1,000 entities under -race on a
		// busy machine can take over the default second, and a call cut
		// short falls back to SQL, which is not what this test counts.
		cfg := Config{DB: db, Dialect: d, Layout: lay, Pool: countingPool(t, srv, &trips), FlushInterval: time.Hour, CacheTimeout: 10 * time.Second}
		cfg.hooks.afterLoad = func(string, []int64) { loads.Add(1) }
		c := newCounters(t, cfg)
		ctx := context.Background()
		all := ids(1000, 1)
		for _, id := range []int64{1, 500, 1000} {
			mustIncr(t, c, "post", id, "likes", id)
		}
		// Load the scripts, so the counts below are not about that.
		if _, err := c.BatchGet(ctx, "post", []int64{-1}); err != nil {
			t.Fatal(err)
		}

		trips.Store(0)
		loads.Store(0)
		got, err := c.BatchGet(ctx, "post", all)
		if err != nil {
			t.Fatal(err)
		}
		if n, l := trips.Load(), loads.Load(); n != 2 || l != 1 {
			t.Errorf("cold batch: %d Redis round trips and %d SQL loads, want 2 and 1", n, l)
		}
		trips.Store(0)
		loads.Store(0)
		again, err := c.BatchGet(ctx, "post", all)
		if err != nil {
			t.Fatal(err)
		}
		if n, l := trips.Load(), loads.Load(); n != 1 || l != 0 {
			t.Errorf("warm batch: %d Redis round trips and %d SQL loads, want 1 and 0", n, l)
		}
		for i, id := range all {
			want := int64(0)
			if id == 1 || id == 500 || id == 1000 {
				want = id
			}
			if got[i]["likes"] != want || again[i]["likes"] != want {
				t.Fatalf("post %d likes = %d cold, %d warm; want %d", id, got[i]["likes"], again[i]["likes"], want)
			}
		}
	})
}

// Concurrent increments on a hot field spread over its slots, folds run
// meanwhile, and the value stays exact.
func TestHotFieldExactAcrossFolds(t *testing.T) {
	eachDialect(t, func(t *testing.T, d Dialect, db *sql.DB) {
		c := newCounters(t, Config{DB: db, Dialect: d, FoldInterval: time.Hour})
		ctx := context.Background()
		const writers, each = 8, 40
		var wg sync.WaitGroup
		for g := 0; g < writers; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					if err := c.Incr(ctx, "post", int64(1+i%2), "views", 1); err != nil {
						t.Error(err)
					}
				}
			}()
		}
		folding := make(chan struct{})
		go func() {
			defer close(folding)
			for i := 0; i < 10; i++ {
				if err := c.fl.fold(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
		wg.Wait()
		<-folding
		var slots int
		if err := db.QueryRow("SELECT COUNT(DISTINCT slot) FROM " + c.sql.Table + " WHERE kind = 'post' AND field = 'views'").Scan(&slots); err != nil {
			t.Fatal(err)
		}
		if slots < 2 {
			t.Errorf("the hot field used %d slot rows, want several", slots)
		}
		for _, id := range []int64{1, 2} {
			if got := mustGet(t, c, "post", id)["views"]; got != writers*each/2 {
				t.Errorf("before the last fold: post %d views = %d, want %d", id, got, writers*each/2)
			}
		}
		if err := c.fl.fold(ctx); err != nil {
			t.Fatal(err)
		}
		var nonzero int
		if err := db.QueryRow("SELECT COUNT(*) FROM " + c.sql.Table + " WHERE kind = 'post' AND field = 'views' AND slot > 0 AND value <> 0").Scan(&nonzero); err != nil {
			t.Fatal(err)
		}
		if nonzero != 0 {
			t.Errorf("%d slot rows above 0 still hold values after a quiet fold", nonzero)
		}
		for _, id := range []int64{1, 2} {
			var slot0 int64
			if err := db.QueryRow(c.sql.Bind("SELECT value FROM "+c.sql.Table+" WHERE kind = 'post' AND entity_id = ? AND field = 'views' AND slot = 0"), id).Scan(&slot0); err != nil {
				t.Fatal(err)
			}
			if slot0 != writers*each/2 {
				t.Errorf("post %d slot 0 = %d after fold, want %d", id, slot0, writers*each/2)
			}
		}
	})
}

// Increments of distinct powers of two race three resets. The final value
// names exactly which increments survived the last reset: every one that
// finished before it began is gone, every one that began after it ended
// is there, and none is counted twice.
func TestResetRacingIncrements(t *testing.T) {
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		for i, m := range modes[1:] {
			t.Run(m.name, func(t *testing.T) {
				srv := redistest.Start(t)
				c := newCounters(t, Config{DB: db, Dialect: d, Layout: lay, Pool: srv.Pool(), Table: fmt.Sprintf("unread_%d", i),
					WriteBehind: m.writeBehind, FlushInterval: 10 * time.Millisecond})
				ctx := context.Background()
				type span struct{ start, end time.Time }
				const incrs = 36
				var incrSpans [incrs]span
				var resetSpans []span
				var wg sync.WaitGroup
				for i := 0; i < incrs; i++ {
					wg.Add(1)
					go func() {
						defer wg.Done()
						time.Sleep(time.Duration(rand.IntN(40)) * time.Millisecond)
						start := time.Now()
						if err := c.Incr(ctx, "message", 1, "replies", 1<<i); err != nil {
							t.Error(err)
						}
						incrSpans[i] = span{start, time.Now()}
					}()
				}
				wg.Add(1)
				go func() {
					defer wg.Done()
					for r := 0; r < 3; r++ {
						time.Sleep(time.Duration(5+rand.IntN(10)) * time.Millisecond)
						start := time.Now()
						if err := c.Reset(ctx, "message", 1, "replies"); err != nil {
							t.Error(err)
						}
						resetSpans = append(resetSpans, span{start, time.Now()})
						_, _ = c.Get(ctx, "message", 1) // keep the cache warm in between
					}
				}()
				wg.Wait()
				if m.writeBehind {
					mustFlush(t, c)
				}
				v := sqlValue(t, c, "message", 1, "replies")
				if v < 0 || v >= 1<<incrs {
					t.Fatalf("replies = %d: not a sum of distinct increments", v)
				}
				last := resetSpans[len(resetSpans)-1]
				for i, s := range incrSpans {
					present := v>>i&1 == 1
					if s.end.Before(last.start) && present {
						t.Errorf("increment %d finished before the last reset but survived it", i)
					}
					if s.start.After(last.end) && !present {
						t.Errorf("increment %d began after the last reset but is missing", i)
					}
				}
				assertCacheMatchesSQL(t, srv, c, "message", 1)
				if got := mustGet(t, c, "message", 1)["replies"]; got != v {
					t.Errorf("Get = %d, SQL = %d", got, v)
				}
			})
		}
	})
}

func TestTop(t *testing.T) {
	eachDialect(t, func(t *testing.T, d Dialect, db *sql.DB) {
		c := newCounters(t, Config{DB: db, Dialect: d})
		ctx := context.Background()
		for id, views := range map[int64]int64{1: 5, 2: 9, 3: 5, 4: 1, 5: 9} {
			for i := int64(0); i < views; i++ { // spread over the hot slots
				mustIncr(t, c, "post", id, "views", 1)
			}
		}
		mustIncr(t, c, "post", 6, "views", 3)
		if err := c.Reset(ctx, "post", 6, "views"); err != nil { // stored, but 0
			t.Fatal(err)
		}
		mustIncr(t, c, "post", 7, "likes", 100) // another field
		got, err := c.Top(ctx, "post", "views", 4)
		if err != nil {
			t.Fatal(err)
		}
		want := []Ranked{{ID: 2, Count: 9}, {ID: 5, Count: 9}, {ID: 1, Count: 5}, {ID: 3, Count: 5}}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("Top 4 = %v, want %v", got, want)
		}
		all, err := c.Top(ctx, "post", "views", MaxTop)
		if err != nil || len(all) != 5 {
			t.Errorf("Top all = %v, %v; want the 5 nonzero posts", all, err)
		}
		none, err := c.Top(ctx, "group", "posts", 3)
		if err != nil || none == nil || len(none) != 0 {
			t.Errorf("Top of an untouched field = %#v, %v; want an empty list", none, err)
		}
	})
}

// Write-behind with Redis stopped: increments go to SQL directly, deltas
// still pending in Redis are flushed once it is back, and every increment
// that returned nil is counted exactly once.
func TestRedisDownWriteBehind(t *testing.T) {
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		srv := redistest.Start(t)
		c := newCounters(t, Config{DB: db, Dialect: d, Layout: lay, Pool: srv.Pool(), WriteBehind: true,
			FlushInterval: 20 * time.Millisecond, CacheTimeout: 2 * time.Second, OnError: func(error) {}})
		ctx := context.Background()
		var counted int64
		incr := func(n int) {
			for i := 0; i < n; i++ {
				err := c.Incr(ctx, "post", 1, "likes", 1)
				if err == nil {
					counted++
				} else if !c.cacheDown.Load() {
					t.Fatalf("incr failed with the cache in use: %v", err)
				}
			}
		}
		incr(10)
		mustFlush(t, c)
		incr(5) // pending in Redis when it stops
		mustGet(t, c, "post", 1)
		srv.Stop()
		incr(20)
		if got := mustGet(t, c, "post", 1)["likes"]; got < 10 || got > counted {
			t.Errorf("Get with Redis down = %d, want SQL's value, between 10 and %d", got, counted)
		}
		srv.Restart()
		waitFor(t, "cache back in use", c.cs.cacheUp)
		incr(3)
		mustFlush(t, c)
		if v := sqlValue(t, c, "post", 1, "likes"); v != counted {
			t.Errorf("SQL likes = %d, want the %d increments that succeeded", v, counted)
		}
		if got := mustGet(t, c, "post", 1)["likes"]; got != counted {
			t.Errorf("Get likes = %d, want %d", got, counted)
		}
		assertCacheMatchesSQL(t, srv, c, "post", 1)
		if counted < 35 {
			t.Errorf("only %d of 38 increments succeeded", counted)
		}
	})
}

// A write-behind flush moves the deltas between a cold read's SQL query
// and its warm-up: the read starts over rather than miss or double them.
func TestWriteBehindColdReadAcrossFlush(t *testing.T) {
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		srv := redistest.Start(t)
		var armed atomic.Bool
		var c *Counters
		cfg := Config{DB: db, Dialect: d, Layout: lay, Pool: srv.Pool(), Kinds: forumKinds, WriteBehind: true, FlushInterval: time.Hour}
		cfg.hooks.afterLoad = func(string, []int64) {
			if armed.CompareAndSwap(true, false) {
				mustFlush(t, c) // SQL now has what the read took as pending
			}
		}
		c = newCounters(t, cfg)
		mustIncr(t, c, "post", 1, "likes", 3)
		mustIncr(t, c, "post", 2, "likes", 4)
		mustFlush(t, c)
		mustIncr(t, c, "post", 1, "likes", 2) // pending; post 1 is cold
		armed.Store(true)
		got, err := c.BatchGet(context.Background(), "post", []int64{1, 2})
		if err != nil {
			t.Fatal(err)
		}
		if armed.Load() {
			t.Fatal("the hook did not run")
		}
		if got[0]["likes"] != 5 || got[1]["likes"] != 4 {
			t.Errorf("likes = %d, %d; want 5, 4", got[0]["likes"], got[1]["likes"])
		}
		for _, id := range []int64{1, 2} {
			assertCacheMatchesSQL(t, srv, c, "post", id)
		}
	})
}
