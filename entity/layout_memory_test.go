package entity

import (
	"context"
	"database/sql"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/entity/internal/redisstore"
	"github.com/pulse-dev/pulse/entity/internal/sqlstore"
	"github.com/pulse-dev/pulse/internal/testenv/race"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// userKind is the entity the memory figures are for: four counts.
var userKind = Kind{Name: "user", Fields: []string{"following", "followers", "posts", "replies"}}

// realisticCounts draws one user's counts, each log-uniform between 0 and
// a ceiling (most users have a few, a few have very many): following up
// to 2,000, followers up to 1,000,000, posts up to 10,000, replies up to
// 50,000.
func realisticCounts(r *rand.Rand) []int64 {
	logUniform := func(ceil float64) int64 { return int64(math.Exp(r.Float64()*math.Log(ceil+1))) - 1 }
	return []int64{logUniform(2_000), logUniform(1_000_000), logUniform(10_000), logUniform(50_000)}
}

// drawCounts draws the counts of n users, ids 1..n, always the same.
func drawCounts(n int) [][]int64 {
	r := rand.New(rand.NewPCG(34, 26))
	out := make([][]int64, n)
	for i := range out {
		out[i] = realisticCounts(r)
	}
	return out
}

// loadThroughSQL stores the users' counts in SQL and warms every one of
// them through BatchGet, the cache's own warm-up path.
func loadThroughSQL(t testing.TB, c *Counters, counts [][]int64) {
	t.Helper()
	ctx := context.Background()
	rows := make([]sqlstore.Row, 0, 4*len(counts))
	for i, vals := range counts {
		for j, v := range vals {
			rows = append(rows, sqlstore.Row{Kind: "user", ID: int64(i + 1), Field: userKind.Fields[j], Delta: v})
		}
	}
	err := c.sql.InTx(ctx, func(ctx context.Context, tx *sql.Tx) error { return c.sql.Upsert(ctx, tx, rows) })
	if err != nil {
		t.Fatal(err)
	}
	for from := 1; from <= len(counts); from += MaxBatchIDs {
		batch := ids(min(MaxBatchIDs, len(counts)-from+1), int64(from))
		got, err := c.BatchGet(ctx, "user", batch)
		if err != nil {
			t.Fatal(err)
		}
		for i, id := range batch {
			if got[i]["followers"] != counts[id-1][1] {
				t.Fatalf("user %d followers = %d, want %d", id, got[i]["followers"], counts[id-1][1])
			}
		}
	}
}

// keyspaceBytes sums MEMORY USAGE over every key of the server.
func keyspaceBytes(t testing.TB, srv *redistest.Server) (bytes int64, keys int) {
	t.Helper()
	conn, err := redis.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	cursor := "0"
	for {
		reply, err := redis.Values(conn.Do("SCAN", cursor, "COUNT", 1000))
		if err != nil {
			t.Fatal(err)
		}
		cursor, _ = redis.String(reply[0], nil)
		names, _ := redis.Strings(reply[1], nil)
		for _, k := range names {
			if err := conn.Send("MEMORY", "USAGE", k, "SAMPLES", "0"); err != nil {
				t.Fatal(err)
			}
		}
		if err := conn.Flush(); err != nil {
			t.Fatal(err)
		}
		for range names {
			n, err := redis.Int64(conn.Receive())
			if err != nil && err != redis.ErrNil {
				t.Fatal(err)
			}
			bytes += n
		}
		keys += len(names)
		if cursor == "0" {
			return bytes, keys
		}
	}
}

// memoryGoal is what the compact layout must keep a user of four counts in.
const memoryGoal = 26

// The cache's memory per entity of four counts in either layout, over the
// whole keyspace, for 40 full buckets of users loaded through the real
// warm-up path; BenchmarkLayoutMemory does the same for a million.
func TestLayoutMemory(t *testing.T) {
	race.SkipMeasurement(t)
	const n = 40 * redisstore.BucketSize
	counts := drawCounts(n)
	eachLayout(t, func(t *testing.T, lay Layout) {
		srv := redistest.Start(t)
		c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite, Pool: srv.Pool(), Kinds: []Kind{userKind},
			FlushInterval: time.Hour, Layout: lay, CacheTimeout: 10 * time.Second, StatementTimeout: time.Minute})
		loadThroughSQL(t, c, counts)
		bytes, keys := keyspaceBytes(t, srv)
		per := float64(bytes) / n
		t.Logf("layout %s: %d users, %d keys, %d bytes: %.1f B per user", lay, n, keys, bytes, per)
		if lay != LayoutCompact {
			return
		}
		if per > memoryGoal {
			t.Errorf("compact layout: %.1f B per user, want at most %d", per, memoryGoal)
		}
		for b := int64(0); b*redisstore.BucketSize <= n; b++ {
			key := c.ref("user", b*redisstore.BucketSize+1).key
			if enc, _ := redis.String(srv.Do("OBJECT", "ENCODING", key), nil); enc != "listpack" {
				t.Errorf("%s encoded as %q, want listpack", key, enc)
			}
		}
	})
}

// Twelve hours of traffic, by the injected clock, in which one user in ten
// is active: the compact cache ends holding the active users alone, and
// the others, no longer cached, still read right from SQL.
func TestCompactFollowsActiveSet(t *testing.T) {
	const n = 40 * redisstore.BucketSize
	counts := drawCounts(n)
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite, Pool: srv.Pool(), Kinds: []Kind{userKind},
		FlushInterval: time.Hour, Layout: LayoutCompact, Clock: clock, CacheTimeout: 10 * time.Second, StatementTimeout: time.Minute})
	loadThroughSQL(t, c, counts)
	full, _ := keyspaceBytes(t, srv)

	var active []int64
	for id := int64(1); id <= n; id += 10 {
		active = append(active, id)
	}
	ctx := context.Background()
	added := map[int64]int64{}
	for step := 0; step < 72; step++ { // 12 h in steps of 10 min
		clock.Advance(10 * time.Minute)
		for from := 0; from < len(active); from += MaxBatchIDs {
			if _, err := c.BatchGet(ctx, "user", active[from:min(from+MaxBatchIDs, len(active))]); err != nil {
				t.Fatal(err)
			}
		}
		mustIncr(t, c, "user", active[step%len(active)], "posts", 1)
		added[active[step%len(active)]]++
	}
	after, keys := keyspaceBytes(t, srv)
	t.Logf("compact: %d users, %d active: %d bytes all warm, %d bytes (%d keys) after 12 h: %.1f B per active user",
		n, len(active), full, after, keys, float64(after)/float64(len(active)))
	// The active users alone, at no more than the goal per user even though
	// each bucket's own cost is now shared by a tenth of the users.
	if limit := int64(len(active)) * memoryGoal; after > limit {
		t.Errorf("after 12 h the cache holds %d bytes, want at most %d (%d B per active user)", after, limit, memoryGoal)
	}
	for _, id := range []int64{1, 2, 11, 12, n - 9, n - 8} {
		isActive := (id-1)%10 == 0
		if e := cached(t, srv, c, "user", id); (e != nil) != isActive {
			t.Errorf("user %d (active %v) cached: %v", id, isActive, e)
		}
		want := counts[id-1][2] + added[id]
		if got := mustGet(t, c, "user", id)["posts"]; got != want {
			t.Errorf("user %d posts = %d, want %d", id, got, want)
		}
	}
}

// BenchmarkLayoutMemory is TestLayoutMemory at a million users (run it
// with -benchtime=1x). Loading a million through SQL would take minutes,
// so the entries are written straight into Redis, pipelined, exactly as
// the warm-up scripts write them; reads of a sample through BatchGet
// check they are taken as cached.
func BenchmarkLayoutMemory(b *testing.B) {
	if !redistest.Installed() {
		b.Skip("redis-server not installed (apt-get install redis-server)")
	}
	const n = 1_000_000
	counts := drawCounts(n)
	for _, lay := range layouts {
		b.Run(string(lay), func(b *testing.B) {
			srv := redistest.Start(b)
			c := newCounters(b, Config{DB: sqliteDB(b), Dialect: SQLite, Pool: srv.Pool(), Kinds: []Kind{userKind},
				FlushInterval: time.Hour, Layout: lay, CacheTimeout: 10 * time.Second, StatementTimeout: time.Minute})
			for i := 0; i < b.N; i++ {
				srv.Do("FLUSHALL")
				loadDirect(b, c, srv, counts)
			}
			sample := ids(MaxBatchIDs, n-MaxBatchIDs+1)
			got, err := c.BatchGet(context.Background(), "user", sample)
			if err != nil {
				b.Fatal(err)
			}
			for i, id := range sample {
				if got[i]["replies"] != counts[id-1][3] {
					b.Fatalf("user %d replies = %d, want %d (SQL is empty: it must come from the cache)", id, got[i]["replies"], counts[id-1][3])
				}
			}
			bytes, keys := keyspaceBytes(b, srv)
			b.ReportMetric(float64(bytes)/n, "B/entity")
			b.ReportMetric(float64(keys), "keys")
		})
	}
}

// loadDirect writes every user's cache entry as the layout's warm-up
// script would, a bucket or an entity per command, pipelined.
func loadDirect(b *testing.B, c *Counters, srv *redistest.Server, counts [][]int64) {
	conn, err := redis.Dial("tcp", srv.Addr)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	ttl := int64(c.ttl / time.Second)
	pending := 0
	send := func(cmd string, args ...any) {
		if err := conn.Send(cmd, args...); err != nil {
			b.Fatal(err)
		}
		if pending++; pending == 1000 {
			if _, err := conn.Do(""); err != nil {
				b.Fatal(err)
			}
			pending = 0
		}
	}
	if c.layout == LayoutCompact {
		now := c.clock.Now().Unix()
		for from := 0; from < len(counts); {
			r := c.ref("user", int64(from+1))
			args := []any{r.key, "#t", now}
			for ; from < len(counts) && c.ref("user", int64(from+1)).key == r.key; from++ {
				args = append(args, c.ref("user", int64(from+1)).b.Field, redisstore.Pack(counts[from]))
			}
			send("HSET", args...)
			send("EXPIRE", r.key, ttl)
		}
	} else {
		for i, vals := range counts {
			key := c.keys.Entity("user", int64(i+1))
			args := []any{key}
			for j, v := range vals {
				args = append(args, userKind.Fields[j], v+redisstore.CountOffset)
			}
			send("HSET", args...)
			send("EXPIRE", key, ttl)
		}
	}
	if _, err := conn.Do(""); err != nil {
		b.Fatal(err)
	}
}

// The scripts' packing and Go's agree byte for byte, for zeros, negative
// counts, the varints' byte boundaries and counts far beyond 32 bits; the
// counts come back exact after increments made in the packed form.
func TestCompactPacking(t *testing.T) {
	srv := redistest.Start(t)
	c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite, Pool: srv.Pool(), Kinds: []Kind{userKind}, Layout: LayoutCompact})
	ctx := context.Background()
	for i, vals := range [][]int64{{0, 0, 0, 0}, {1, -1, 63, -64}, {64, 127, 128, 8191}, {0, 0, 5, 0}, {1 << 38, -(1 << 38), 1<<38 - 1, -3}} {
		id := int64(i + 1)
		err := c.InTx(ctx, func(ctx context.Context, tx *Tx) error {
			for j, v := range vals {
				if err := tx.Incr("user", id, userKind.Fields[j], v); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		mustGet(t, c, "user", id)                     // warmed by the script
		mustIncr(t, c, "user", id, "following", 1000) // and updated by one
		vals[0] += 1000
		b := c.keys.Bucket("user", id)
		raw, err := redis.Bytes(srv.Do("HGET", b.Young, b.Field), nil)
		if err != nil {
			t.Fatal(err)
		}
		if want := redisstore.Pack(vals); string(raw) != string(want) {
			t.Errorf("%v packed by the script as %x, by Go as %x", vals, raw, want)
		}
		got := make([]int64, 4)
		if err := redisstore.Unpack(raw, got); err != nil || !slices.Equal(got, vals) {
			t.Errorf("%x unpacks to %v (%v), want %v", raw, got, err, vals)
		}
	}
	if err := redisstore.Unpack([]byte{0x80}, make([]int64, 1)); err == nil {
		t.Error("a value cut inside a number unpacks without error")
	}
}
