package entity

import (
	"context"
	"database/sql"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/entity/internal/redisstore"
	"github.com/pulse-dev/pulse/entity/internal/sqlstore"
	"github.com/pulse-dev/pulse/internal/testenv/harness"
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

// usersOf is userKind with a population for LayoutSparse to size from.
func usersOf(population int) Kind {
	k := userKind
	k.Population = int64(population)
	return k
}

// storeSQL writes the users' counts into SQL alone.
func storeSQL(t testing.TB, c *Counters, users []int64, counts [][]int64) {
	t.Helper()
	rows := make([]sqlstore.Row, 0, 4*len(counts))
	for i, vals := range counts {
		for j, v := range vals {
			rows = append(rows, sqlstore.Row{Kind: "user", ID: users[i], Field: userKind.Fields[j], Delta: v})
		}
	}
	err := c.sql.InTx(context.Background(), func(ctx context.Context, tx *sql.Tx) error { return c.sql.Upsert(ctx, tx, rows) })
	if err != nil {
		t.Fatal(err)
	}
}

// loadThroughSQL stores the users' counts in SQL and warms every one of
// them through BatchGet, the cache's own warm-up path.
func loadThroughSQL(t testing.TB, c *Counters, users []int64, counts [][]int64) {
	t.Helper()
	storeSQL(t, c, users, counts)
	for from := 0; from < len(users); from += MaxBatchIDs {
		to := min(from+MaxBatchIDs, len(users))
		got, err := c.BatchGet(context.Background(), "user", users[from:to])
		if err != nil {
			t.Fatal(err)
		}
		for i := range got {
			if want := counts[from+i][1]; got[i]["followers"] != want {
				t.Fatalf("user %d followers = %d, want %d", users[from+i], got[i]["followers"], want)
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

// What a user of four counts may cost in the cache: memoryGoal for any
// ids in LayoutSparse (the 24-26 B of the custom store in the counting
// notes), denseGoal for dense ids in either bucketed layout (12.66 B with
// LayoutCompact before LayoutSparse, plus a fifth).
const (
	memoryGoal = 26
	denseGoal  = 15
)

// memoryCase is one layout filled with ids of one shape.
type memoryCase struct {
	lay   Layout
	shape idShape
	goal  float64 // B per entity at most; 0: not checked
	// guess is Kind.Population as a multiple of the users (0: 1): the
	// estimate LayoutSparse was sized from, right or not.
	guess float64
}

func (m memoryCase) name() string {
	if m.guess != 0 {
		return fmt.Sprintf("%s/%s/population=%gx", m.lay, m.shape.name, m.guess)
	}
	return string(m.lay) + "/" + m.shape.name
}

// kind is the users' kind with the population the case guesses.
func (m memoryCase) kind(users int) Kind {
	if m.guess == 0 {
		return usersOf(users)
	}
	return usersOf(int(m.guess * float64(users)))
}

var memoryCases = []memoryCase{
	{lay: LayoutHash, shape: denseShape},
	{lay: LayoutCompact, shape: denseShape, goal: denseGoal},
	{lay: LayoutSparse, shape: denseShape, goal: denseGoal},
	{lay: LayoutSparse, shape: snowflakeShape, goal: memoryGoal},
	{lay: LayoutSparse, shape: randomShape, goal: memoryGoal},
}

// The cache's memory per entity of four counts, over the whole keyspace,
// for 5,080 users (40 full buckets of LayoutCompact) loaded through the
// real warm-up path, per layout and shape of ids; BenchmarkLayoutMemory
// does the same for a million. The server keeps hashes of up to 128
// entries as listpacks, as the redis.conf Redis ships says: the stricter
// of the two stock limits.
func TestLayoutMemory(t *testing.T) {
	race.SkipMeasurement(t)
	const n = 40 * redisstore.BucketSize
	counts := drawCounts(n)
	for _, mc := range memoryCases {
		t.Run(mc.name(), func(t *testing.T) {
			srv := redistest.StartWith(t, redistest.Options{Args: shippedConf})
			c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite, Pool: srv.Pool(), Kinds: []Kind{usersOf(n)},
				FlushInterval: time.Hour, Layout: mc.lay, CacheTimeout: 10 * time.Second, StatementTimeout: time.Minute})
			users := mc.shape.draw(n)
			loadThroughSQL(t, c, users, counts)
			bytes, keys := keyspaceBytes(t, srv)
			per := float64(bytes) / n
			t.Logf("%s: %d users, %d keys, %d bytes: %.2f B per user", mc.name(), n, keys, bytes, per)
			if mc.goal > 0 && per > mc.goal {
				t.Errorf("%s: %.2f B per user, want at most %.0f", mc.name(), per, mc.goal)
			}
			if c.cs.bucketed() {
				assertListpacks(t, srv, c, users)
			}
		})
	}
}

// assertListpacks fails unless every bucket holding the users is a
// listpack: the encoding the memory figures rest on.
func assertListpacks(t *testing.T, srv *redistest.Server, c *Counters, users []int64) {
	t.Helper()
	seen := map[string]bool{}
	for _, id := range users {
		key := c.cs.ref("user", id).key
		if seen[key] {
			continue
		}
		seen[key] = true
		if enc, _ := redis.String(srv.Do("OBJECT", "ENCODING", key), nil); enc != "listpack" {
			t.Errorf("%q encoded as %q, want listpack", key, enc)
		}
	}
}

// Twelve hours of traffic, by the injected clock, in which one user in ten
// is active: the bucketed caches end holding the active users alone, and
// the others, no longer cached, still read right from SQL. The memory of
// sequential traffic over thousands of users: it runs in the pass without
// the race detector, which slows it tenfold and has nothing to find.
func TestCompactFollowsActiveSet(t *testing.T) {
	race.SkipMeasurement(t)
	for _, mc := range []memoryCase{{lay: LayoutCompact, shape: denseShape}, {lay: LayoutSparse, shape: snowflakeShape}} {
		t.Run(mc.name(), func(t *testing.T) { testFollowsActiveSet(t, mc) })
	}
}

func testFollowsActiveSet(t *testing.T, mc memoryCase) {
	const n = 40 * redisstore.BucketSize
	counts := drawCounts(n)
	users := mc.shape.draw(n)
	srv := redistest.StartWith(t, redistest.Options{Args: shippedConf})
	clock := timeseries.NewManualClock(time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC))
	c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite, Pool: srv.Pool(), Kinds: []Kind{usersOf(n)},
		FlushInterval: time.Hour, Layout: mc.lay, Clock: clock, CacheTimeout: 10 * time.Second, StatementTimeout: time.Minute})
	loadThroughSQL(t, c, users, counts)
	full, _ := keyspaceBytes(t, srv)

	var active []int64
	for i := 0; i < n; i += 10 {
		active = append(active, users[i])
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
	t.Logf("%s: %d users, %d active: %d bytes all warm, %d bytes (%d keys) after 12 h: %.1f B per active user",
		mc.name(), n, len(active), full, after, keys, float64(after)/float64(len(active)))
	// The inactive nine tenths have left: memory fell at least fivefold
	// (each bucket's own cost is now shared by a tenth of the users).
	if after*5 > full {
		t.Errorf("after 12 h the cache holds %d bytes, all warm it held %d: the inactive users stayed", after, full)
	}
	for _, i := range []int{0, 1, 10, 11, n - 10, n - 9} {
		id, isActive := users[i], i%10 == 0
		if e := cached(t, srv, c, "user", id); (e != nil) != isActive {
			t.Errorf("user %d (active %v) cached: %v", id, isActive, e)
		}
		want := counts[i][2] + added[id]
		if got := mustGet(t, c, "user", id)["posts"]; got != want {
			t.Errorf("user %d posts = %d, want %d", id, got, want)
		}
	}
}

// BenchmarkLayoutMemory is TestLayoutMemory at a million users (run it
// with -benchtime=1x); besides, LayoutCompact with snowflake ids, which
// leave one user in each of its buckets, and LayoutSparse sized from a
// population that was half, two thirds and four times the users. Loading a million through SQL
// would take minutes, so the entries are written straight into Redis,
// pipelined, exactly as the warm-up scripts write them; reads of a sample
// through BatchGet check they are taken as cached.
func BenchmarkLayoutMemory(b *testing.B) {
	if !redistest.Installed() {
		b.Skip("redis-server not installed (apt-get install redis-server)")
	}
	const n = 1_000_000
	counts := drawCounts(n)
	cases := append(slices.Clone(memoryCases[:2]), memoryCase{lay: LayoutCompact, shape: snowflakeShape})
	cases = append(cases, memoryCases[2:]...)
	for _, g := range []float64{0.5, 0.67, 4} {
		cases = append(cases, memoryCase{lay: LayoutSparse, shape: snowflakeShape, guess: g})
	}
	for _, mc := range cases {
		b.Run(mc.name(), func(b *testing.B) {
			users := mc.shape.draw(n)
			srv := redistest.StartWith(b, redistest.Options{Args: shippedConf})
			c := newCounters(b, Config{DB: sqliteDB(b), Dialect: SQLite, Pool: srv.Pool(), Kinds: []Kind{mc.kind(n)},
				FlushInterval: time.Hour, Layout: mc.lay, CacheTimeout: 10 * time.Second, StatementTimeout: time.Minute})
			fullest := 0
			for i := 0; i < b.N; i++ {
				srv.Do("FLUSHALL")
				fullest = loadDirect(b, c, srv, users, counts)
			}
			got, err := c.BatchGet(context.Background(), "user", users[n-MaxBatchIDs:])
			if err != nil {
				b.Fatal(err)
			}
			for i := range got {
				if want := counts[n-MaxBatchIDs+i][3]; got[i]["replies"] != want {
					b.Fatalf("user %d replies = %d, want %d (SQL is empty: it must come from the cache)", users[n-MaxBatchIDs+i], got[i]["replies"], want)
				}
			}
			bytes, keys := keyspaceBytes(b, srv)
			b.ReportMetric(float64(bytes)/n, "B/entity")
			b.ReportMetric(float64(keys), "keys")
			b.ReportMetric(float64(fullest), "fullest-key-entities")
		})
	}
}

// loadDirect writes every user's cache entry as the layout's warm-up
// script would, a bucket or an entity per command, pipelined, and returns
// the most entities one key holds.
func loadDirect(b *testing.B, c *Counters, srv *redistest.Server, users []int64, counts [][]int64) (fullest int) {
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
			if _, err := redis.DoWithTimeout(conn, harness.Hang, ""); err != nil {
				b.Fatal(err)
			}
			pending = 0
		}
	}
	for _, args := range directWrites(c, users, counts) {
		send("HSET", args...)
		send("EXPIRE", args[0], ttl)
		if c.cs.bucketed() {
			fullest = max(fullest, (len(args)-3)/2)
		} else {
			fullest = 1
		}
	}
	if _, err := redis.DoWithTimeout(conn, harness.Hang, ""); err != nil {
		b.Fatal(err)
	}
	return fullest
}

// directWrites are the HSET arguments that cache the users as the warm-up
// scripts would: a bucket's entities and birth time, or one entity.
func directWrites(c *Counters, users []int64, counts [][]int64) [][]any {
	var out [][]any
	if !c.cs.bucketed() {
		for i, id := range users {
			args := []any{c.keys.Entity("user", id)}
			for j, v := range counts[i] {
				args = append(args, userKind.Fields[j], v+redisstore.CountOffset)
			}
			out = append(out, args)
		}
		return out
	}
	at := map[string]int{}
	for i, id := range users {
		r := c.cs.ref("user", id)
		x, ok := at[r.key]
		if !ok {
			x = len(out)
			at[r.key] = x
			out = append(out, []any{r.key, "#t", c.clock.Now().Unix()})
		}
		out[x] = append(out[x], r.b.Field, redisstore.Pack(counts[i]))
	}
	return out
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
		b := c.cs.ref("user", id).b
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
