package entity

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	_ "modernc.org/sqlite"

	"github.com/pulse-dev/pulse/entity/internal/redisstore"
	"github.com/pulse-dev/pulse/internal/testenv/mariadbtest"
	"github.com/pulse-dev/pulse/internal/testenv/pgtest"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m, mariadbtest.Setup, pgtest.Setup) }

// forumKinds are the kinds the example forum declares.
var forumKinds = []Kind{
	{Name: "user", Fields: []string{"following", "followers", "posts", "replies", "coins", "groups"}},
	{Name: "post", Fields: []string{"views", "replies", "likes", "favorites"}, Hot: map[string]int{"views": 8}},
	{Name: "group", Fields: []string{"subscribers", "posts", "featured"}},
	{Name: "message", Fields: []string{"replies", "mentions", "likes", "followers", "direct"}},
}

// sqliteDB opens a SQLite file the way the package documentation says:
// WAL, a busy timeout, one connection.
func sqliteDB(tb testing.TB) *sql.DB {
	tb.Helper()
	path := filepath.Join(tb.TempDir(), "counters.db")
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
	if err != nil {
		tb.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	tb.Cleanup(func() { db.Close() })
	return db
}

func mariaDB(tb testing.TB) *sql.DB {
	tb.Helper()
	db := mariadbtest.Start(tb)
	db.SetMaxOpenConns(64)
	db.SetMaxIdleConns(64)
	return db
}

func postgresDB(tb testing.TB) *sql.DB {
	tb.Helper()
	db := pgtest.Start(tb)
	db.SetMaxOpenConns(64)
	db.SetMaxIdleConns(64)
	return db
}

// dialects are the SQL databases every matrix test runs against. Their
// subtests are named here, at the level under the test, so that one
// pattern (the Makefile's SERVER_LEGS) picks the server legs out.
var dialects = []struct {
	name string
	d    Dialect
	open func(testing.TB) *sql.DB
}{
	{"sqlite", SQLite, sqliteDB},
	{"mariadb", MySQL, mariaDB},
	{"postgres", Postgres, postgresDB},
}

// eachDialect runs fn against SQLite, MariaDB and PostgreSQL, each with a
// database of its own.
func eachDialect(t *testing.T, fn func(t *testing.T, d Dialect, db *sql.DB)) {
	for _, dl := range dialects {
		t.Run(dl.name, func(t *testing.T) { fn(t, dl.d, dl.open(t)) })
	}
}

// errLog collects background errors for a test to look at.
type errLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errLog) add(err error) {
	l.mu.Lock()
	l.errs = append(l.errs, err)
	l.mu.Unlock()
}

// clear forgets what was logged so far: a background sweep that ran
// between New and Migrate, on a loaded machine, found no tables yet.
func (l *errLog) clear() {
	l.mu.Lock()
	l.errs = nil
	l.mu.Unlock()
}

func (l *errLog) list() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// newCounters makes Counters closed when the test ends, with forumKinds
// unless cfg names kinds.
func newCounters(t testing.TB, cfg Config) *Counters {
	t.Helper()
	if cfg.Kinds == nil {
		cfg.Kinds = forumKinds
	}
	if cfg.OnError == nil {
		cfg.OnError = func(err error) { t.Logf("background: %v", err) }
	}
	// A test is about where counts go, so its statements get a hang's
	// bound, not the 2 s default: a loaded machine held a PostgreSQL
	// CREATE TABLE past it. The stall tests, about that default, set it.
	if cfg.StatementTimeout == 0 {
		cfg.StatementTimeout = time.Minute
	}
	c, err := New(context.Background(), cfg)
	if err == nil {
		err = c.Migrate(context.Background())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := c.Close(ctx); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return c
}

// sqlValue reads one counter straight from SQL.
func sqlValue(t testing.TB, c *Counters, kind string, id int64, field string) int64 {
	t.Helper()
	var v sql.NullInt64
	err := c.sql.DB().QueryRow(c.sql.Bind("SELECT "+c.sql.Sum()+" FROM "+c.sql.Table+" WHERE kind = ? AND entity_id = ? AND field = ?"),
		kind, id, field).Scan(&v)
	if err != nil {
		t.Fatal(err)
	}
	return v.Int64
}

// cached reads one entity's cache entry straight from Redis, offset
// removed; nil when it is not cached.
func cached(t testing.TB, srv *redistest.Server, c *Counters, kind string, id int64) map[string]int64 {
	t.Helper()
	return cacheEntry(t, c, func(_, cmd string, args ...any) any { return srv.Do(cmd, args...) }, kind, id)
}

// cacheEntry reads one entity's cache entry, in either layout, through do
// (which routes by its key argument on a cluster); nil when not cached.
func cacheEntry(t testing.TB, c *Counters, do func(key, cmd string, args ...any) any, kind string, id int64) map[string]int64 {
	t.Helper()
	k := c.kinds[kind]
	if c.cs.bucketed() {
		b := c.cs.ref(kind, id).b
		v := do(b.Young, "HGET", b.Young, b.Field)
		if v == nil {
			v = do(b.Old, "HGET", b.Old, b.Field)
		}
		if v == nil {
			return nil
		}
		packed, err := redis.Bytes(v, nil)
		vals := make([]int64, len(k.fields))
		if err == nil {
			err = redisstore.Unpack(packed, vals)
		}
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]int64{}
		for j, f := range k.fields {
			m[f] = vals[j]
		}
		return m
	}
	key := c.keys.Entity(kind, id)
	m, err := redis.Int64Map(do(key, "HGETALL", key), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(m) == 0 {
		return nil
	}
	for f, v := range m {
		m[f] = v - redisstore.CountOffset
	}
	return m
}

// dropCached deletes one entity's cache entry behind the counters' back,
// as an eviction would.
func dropCached(srv *redistest.Server, c *Counters, kind string, id int64) {
	if c.cs.bucketed() {
		b := c.cs.ref(kind, id).b
		srv.Do("HDEL", b.Young, b.Field)
		srv.Do("HDEL", b.Old, b.Field)
		return
	}
	srv.Do("DEL", c.keys.Entity(kind, id))
}

// layouts are the cache layouts every cache test runs against.
var layouts = []Layout{LayoutHash, LayoutCompact, LayoutSparse}

// eachLayout runs fn once per cache layout.
func eachLayout(t *testing.T, fn func(t *testing.T, lay Layout)) {
	for _, lay := range layouts {
		t.Run(string(lay), func(t *testing.T) { fn(t, lay) })
	}
}

// eachStore runs fn against every cache layout on SQLite, MariaDB and
// PostgreSQL, with a database of its own for each: the dialect names the
// subtest under the test, the layout the one under that.
func eachStore(t *testing.T, fn func(t *testing.T, d Dialect, db *sql.DB, lay Layout)) {
	for _, dl := range dialects {
		t.Run(dl.name, func(t *testing.T) {
			eachLayout(t, func(t *testing.T, lay Layout) { fn(t, dl.d, dl.open(t), lay) })
		})
	}
}

// assertCacheMatchesSQL fails unless the entity is not cached or its cache
// entry equals SQL field by field.
func assertCacheMatchesSQL(t testing.TB, srv *redistest.Server, c *Counters, kind string, id int64) {
	t.Helper()
	entry := cached(t, srv, c, kind, id)
	if entry == nil {
		return
	}
	for _, f := range c.kinds[kind].fields {
		if want := sqlValue(t, c, kind, id, f); entry[f] != want {
			t.Errorf("cache %s %d %s = %d, SQL = %d", kind, id, f, entry[f], want)
		}
	}
}

func mustIncr(t testing.TB, c *Counters, kind string, id int64, field string, delta int64) {
	t.Helper()
	if err := c.Incr(context.Background(), kind, id, field, delta); err != nil {
		t.Fatal(err)
	}
}

func mustGet(t testing.TB, c *Counters, kind string, id int64) Counts {
	t.Helper()
	got, err := c.Get(context.Background(), kind, id)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func mustFlush(t testing.TB, c *Counters) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Flush(ctx); err != nil {
		t.Fatal(err)
	}
}

func waitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within a minute", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// countingPool is a pool to srv whose connections count round trips: a
// Do (which flushes what was sent before and reads every reply) or an
// explicit Flush.
func countingPool(tb testing.TB, srv *redistest.Server, trips *atomic.Int64) *redis.Pool {
	p := &redis.Pool{
		MaxIdle: 64,
		Dial: func() (redis.Conn, error) {
			conn, err := redis.Dial("tcp", srv.Addr,
				redis.DialConnectTimeout(time.Second),
				redis.DialReadTimeout(5*time.Second),
				redis.DialWriteTimeout(5*time.Second))
			if err != nil {
				return nil, err
			}
			return &countingConn{Conn: conn, trips: trips}, nil
		},
	}
	tb.Cleanup(func() { p.Close() })
	return p
}

type countingConn struct {
	redis.Conn
	trips   *atomic.Int64
	pending int // commands sent, not yet flushed
}

// exchange counts a round trip if anything is sent.
func (c *countingConn) exchange(cmd string) {
	if cmd != "" || c.pending > 0 {
		c.trips.Add(1)
	}
	c.pending = 0
}

func (c *countingConn) Send(cmd string, args ...any) error {
	c.pending++
	return c.Conn.Send(cmd, args...)
}

func (c *countingConn) Do(cmd string, args ...any) (any, error) {
	c.exchange(cmd)
	return c.Conn.Do(cmd, args...)
}

func (c *countingConn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	c.exchange(cmd)
	return redis.DoContext(c.Conn, ctx, cmd, args...)
}

func (c *countingConn) DoWithTimeout(timeout time.Duration, cmd string, args ...any) (any, error) {
	c.exchange(cmd)
	return redis.DoWithTimeout(c.Conn, timeout, cmd, args...)
}

func (c *countingConn) ReceiveWithTimeout(timeout time.Duration) (any, error) {
	return redis.ReceiveWithTimeout(c.Conn, timeout)
}

func (c *countingConn) Flush() error {
	c.exchange("")
	return c.Conn.Flush()
}

func (c *countingConn) ReceiveContext(ctx context.Context) (any, error) {
	return redis.ReceiveContext(c.Conn, ctx)
}

// boundedPool is a pool to srv that, like a production pool, caps its
// connections and makes callers wait for one.
func boundedPool(tb testing.TB, srv *redistest.Server) *redis.Pool {
	p := &redis.Pool{
		MaxIdle:   32,
		MaxActive: 32,
		Wait:      true,
		Dial: func() (redis.Conn, error) {
			return redis.Dial("tcp", srv.Addr,
				redis.DialConnectTimeout(time.Second),
				redis.DialReadTimeout(2*time.Second),
				redis.DialWriteTimeout(2*time.Second))
		},
	}
	tb.Cleanup(func() { p.Close() })
	return p
}

// deadPool never reaches a server: a process whose Redis is unreachable.
func deadPool(tb testing.TB) *redis.Pool {
	p := &redis.Pool{Dial: func() (redis.Conn, error) {
		return nil, errors.New("redis unreachable from this process")
	}}
	tb.Cleanup(func() { p.Close() })
	return p
}

func ids(n int, from int64) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = from + int64(i)
	}
	return out
}

func fmtCounts(c Counts, fields []string) string {
	s := ""
	for _, f := range fields {
		s += f + "=" + strconv.FormatInt(c[f], 10) + " "
	}
	return s
}
