package entity

import (
	"context"
	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/mariadbtest"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// stallBound is how long a call may take while the database is stalled:
// the 2 s statement timeout, a 1 s cache call that a loaded machine (the
// race detector, four test binaries on two cores) lets time out, and room.
// Without the statement timeout a stalled MariaDB holds a write for ever.
const stallBound = DefaultStatementTimeout + DefaultCacheTimeout + 1500*time.Millisecond

// timed runs fn and returns its error and how long it took.
func timed(fn func() error) (error, time.Duration) {
	start := time.Now()
	err := fn()
	return err, time.Since(start)
}

// stallChecks runs what every stall test checks: a cached read answers
// from Redis, a write fails fast with ErrUnavailable and is not stored,
// and coldRead (a read of an entity not cached) ends within the bound.
func stallChecks(t *testing.T, c *Counters, wantColdErr bool) {
	t.Helper()
	ctx := context.Background()
	err, took := timed(func() error { _, err := c.Get(ctx, "post", 1); return err })
	t.Logf("cached read while stalled: %v, err %v", took.Round(time.Millisecond), err)
	if err != nil || took > stallBound {
		t.Errorf("cached read: %v after %v, want an answer from Redis", err, took)
	}
	err, took = timed(func() error { return c.Incr(ctx, "post", 1, "likes", 1) })
	t.Logf("write while stalled: %v, err %v", took.Round(time.Millisecond), err)
	if !errors.Is(err, ErrUnavailable) || took > stallBound {
		t.Errorf("write: %v after %v, want ErrUnavailable within %v", err, took, stallBound)
	}
	err, took = timed(func() error { _, err := c.Get(ctx, "post", 2); return err })
	t.Logf("cold read while stalled: %v, err %v", took.Round(time.Millisecond), err)
	if took > stallBound || (wantColdErr && !errors.Is(err, ErrUnavailable)) || (!wantColdErr && err != nil) {
		t.Errorf("cold read: %v after %v", err, took)
	}
}

// recovered waits until a write succeeds again and checks that the one
// refused during the stall was not stored.
func recovered(t *testing.T, c *Counters) {
	t.Helper()
	ctx := context.Background()
	waitFor(t, "a write after the stall", func() bool { return c.Incr(ctx, "post", 1, "likes", 1) == nil })
	time.Sleep(500 * time.Millisecond) // let a stalled server run what it had queued
	if got := sqlValue(t, c, "post", 1, "likes"); got != 2 {
		t.Errorf("likes in SQL = %d, want 2: the write refused during the stall was stored", got)
	}
	if got := mustGet(t, c, "post", 1)["likes"]; got != 2 {
		t.Errorf("likes read = %d, want 2", got)
	}
}

func TestSQLiteWriteLockHeld(t *testing.T) { eachLayout(t, testSQLiteWriteLockHeld) }

func testSQLiteWriteLockHeld(t *testing.T, lay Layout) {
	path := filepath.Join(t.TempDir(), "counters.db")
	dsn := "file:" + path + "?_pragma=busy_timeout(1000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	srv := redistest.Start(t)
	c := newCounters(t, Config{DB: db, Dialect: SQLite, Pool: srv.Pool(), Layout: lay, StatementTimeout: DefaultStatementTimeout})
	mustIncr(t, c, "post", 1, "likes", 1)
	mustGet(t, c, "post", 1)
	mustIncr(t, c, "post", 2, "likes", 1)
	if err := c.cs.invalidate(context.Background(), "post", []int64{2}); err != nil {
		t.Fatal(err)
	}

	// Another process holds the write lock.
	other, err := sql.Open("sqlite", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	conn, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	// WAL readers are not blocked by a writer: the cold read succeeds.
	stallChecks(t, c, false)
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	recovered(t, c)
}

// The subtest is named for its server, as the matrices' legs are, so that
// it runs in the server pass and not under -race (SERVER_LEGS).
func TestMariaDBStopped(t *testing.T) {
	t.Run("mariadb", func(t *testing.T) { eachLayout(t, testMariaDBStopped) })
}

func testMariaDBStopped(t *testing.T, lay Layout) {
	d, server, err := mariadbtest.StartPrivate(t, mariadbtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d.DB.SetMaxOpenConns(16)
	srv := redistest.Start(t)
	c := newCounters(t, Config{DB: d.DB, Dialect: MySQL, Pool: srv.Pool(), Layout: lay, StatementTimeout: DefaultStatementTimeout})
	mustIncr(t, c, "post", 1, "likes", 1)
	mustGet(t, c, "post", 1)

	if err := server.Pause(); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			_ = server.Resume()
		}
	}()
	stallChecks(t, c, true)
	if err := server.Resume(); err != nil {
		t.Fatal(err)
	}
	stopped = false
	recovered(t, c)
}

// While Redis is back and the probe sweeps SQL for the entries written
// around it, under the whole outage lock, a write waits no longer than its
// context: it fails with ErrUnavailable at its deadline, stores nothing,
// and writes go on once the probe lets go.
func TestWriteWaitForTheProbeEndsWithItsContext(t *testing.T) {
	srv := redistest.Start(t)
	c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite, Pool: srv.Pool(), FlushInterval: time.Hour, StatementTimeout: DefaultStatementTimeout,
		CacheTimeout: 2 * time.Second})
	srv.Stop()
	mustIncr(t, c, "post", 1, "likes", 1) // on SQL alone: the cache is out of use
	if c.cs.cacheUp() {
		t.Fatal("the cache is still in use with Redis stopped")
	}
	if err := c.outage.take(context.Background()); err != nil { // as the probe does
		t.Fatal(err)
	}
	held := time.AfterFunc(3*time.Second, c.outage.give)

	const deadline = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	err, took := timed(func() error { return c.Incr(ctx, "post", 1, "likes", 1) })
	if !errors.Is(err, ErrUnavailable) || took > deadline+time.Second {
		t.Errorf("write during the probe's sweep: %v after %v, want ErrUnavailable at its %v deadline", err, took, deadline)
	}
	if held.Stop() {
		c.outage.give()
	}
	mustIncr(t, c, "post", 1, "likes", 1)
	if got := sqlValue(t, c, "post", 1, "likes"); got != 2 {
		t.Errorf("likes in SQL = %d, want 2: the write refused while the probe swept was stored", got)
	}
}
