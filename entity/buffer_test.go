package entity

import (
	"context"
	"database/sql"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// bufferedKinds buffer post views, as the forum does.
var bufferedKinds = []Kind{
	{Name: "post", Fields: []string{"views", "likes"}, Buffered: []string{"views"}},
}

func TestBufferedExactUnderConcurrency(t *testing.T) {
	const writers, each = 32, 500
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		srv := redistest.Start(t)
		var trips atomic.Int64
		c, err := New(context.Background(), Config{DB: db, Dialect: d, Layout: lay, Pool: countingPool(t, srv, &trips),
			Kinds: bufferedKinds, BufferInterval: 20 * time.Millisecond, OnError: func(err error) { t.Logf("background: %v", err) }})
		if err == nil {
			err = c.Migrate(context.Background())
		}
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		mustGet(t, c, "post", 1) // cached, so later reads come from Redis
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := 0; i < each; i++ {
					if err := c.Incr(ctx, "post", 1, "views", 1); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		// While flushes run, reads in this process see every view at once.
		readDone := make(chan struct{})
		go func() {
			defer close(readDone)
			last := int64(0)
			for i := 0; i < 50; i++ {
				got, err := c.Get(ctx, "post", 1)
				if err != nil {
					t.Error(err)
					return
				}
				if got["views"] < last {
					t.Errorf("views went back from %d to %d", last, got["views"])
				}
				last = got["views"]
			}
		}()
		wg.Wait()
		<-readDone
		if got := mustGet(t, c, "post", 1)["views"]; got != writers*each {
			t.Errorf("views read at once = %d, want %d", got, writers*each)
		}
		if err := c.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if got := sqlValue(t, c, "post", 1, "views"); got != writers*each {
			t.Errorf("views in SQL after Close = %d, want %d", got, writers*each)
		}
		assertCacheMatchesSQL(t, srv, c, "post", 1)
	})
}

func TestBufferedIncrementsTouchNeitherRedisNorSQL(t *testing.T) {
	eachLayout(t, testBufferedIncrementsTouchNeitherRedisNorSQL)
}

func testBufferedIncrementsTouchNeitherRedisNorSQL(t *testing.T, lay Layout) {
	srv := redistest.Start(t)
	var trips atomic.Int64
	c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite, Pool: countingPool(t, srv, &trips),
		Kinds: bufferedKinds, BufferInterval: time.Hour, Layout: lay})
	trips.Store(0)
	for i := 0; i < 1000; i++ {
		mustIncr(t, c, "post", 1, "views", 1)
	}
	if n := trips.Load(); n != 0 {
		t.Errorf("1000 buffered increments made %d Redis round trips", n)
	}
	if got := sqlValue(t, c, "post", 1, "views"); got != 0 {
		t.Errorf("SQL has %d views before a flush", got)
	}
	if got := mustGet(t, c, "post", 1)["views"]; got != 1000 {
		t.Errorf("Get = %d, want the 1000 pending", got)
	}
	if err := c.FlushBuffered(context.Background()); err != nil {
		t.Fatal(err)
	}
	if got := sqlValue(t, c, "post", 1, "views"); got != 1000 {
		t.Errorf("SQL after flush = %d, want 1000", got)
	}
	if got := mustGet(t, c, "post", 1)["views"]; got != 1000 {
		t.Errorf("Get after flush = %d, want 1000 (not counted twice)", got)
	}
}

func TestBufferedFlushRetriedOnce(t *testing.T) {
	eachStore(t, func(t *testing.T, d Dialect, db *sql.DB, lay Layout) {
		srv := redistest.Start(t)
		lost := errors.New("reply lost after commit")
		var fail atomic.Bool
		fail.Store(true)
		var batches []string
		var mu sync.Mutex
		c := newCounters(t, Config{DB: db, Dialect: d, Layout: lay, Pool: srv.Pool(), Kinds: bufferedKinds, BufferInterval: time.Hour,
			hooks: hooks{bufferedCommitted: func(batch string) error {
				mu.Lock()
				batches = append(batches, batch)
				mu.Unlock()
				if fail.CompareAndSwap(true, false) {
					return lost
				}
				return nil
			}}})
		ctx := context.Background()
		for i := 0; i < 7; i++ {
			mustIncr(t, c, "post", 3, "views", 1)
		}
		if err := c.FlushBuffered(ctx); !errors.Is(err, lost) {
			t.Fatalf("first flush: %v, want the lost reply", err)
		}
		if got := mustGet(t, c, "post", 3)["views"]; got < 7 {
			t.Errorf("Get while the batch is in doubt = %d, want at least 7", got)
		}
		mustIncr(t, c, "post", 3, "views", 1)
		if err := c.FlushBuffered(ctx); err != nil { // resends the batch in doubt
			t.Fatal(err)
		}
		if err := c.FlushBuffered(ctx); err != nil { // the view made since
			t.Fatal(err)
		}
		if got := sqlValue(t, c, "post", 3, "views"); got != 8 {
			t.Errorf("SQL views = %d, want 8: a resent batch must apply once", got)
		}
		if got := mustGet(t, c, "post", 3)["views"]; got != 8 {
			t.Errorf("Get = %d, want 8", got)
		}
		if len(batches) < 2 || batches[0] != batches[1] {
			t.Errorf("batches sent %v: the retry must reuse the first id", batches)
		}
	})
}

// A read that must wait for a flush (one stuck on a stalled database, say)
// waits no longer than its context: it fails with ErrUnavailable at its
// deadline, not when the flush lets go.
func TestBufferedReadWaitEndsWithItsContext(t *testing.T) {
	srv := redistest.Start(t)
	entered, release := make(chan struct{}), make(chan struct{})
	c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite, Pool: srv.Pool(), Kinds: bufferedKinds, BufferInterval: time.Hour,
		hooks: hooks{bufferedApply: func(string) error {
			close(entered)
			<-release
			return nil
		}}})
	mustIncr(t, c, "post", 1, "views", 1)
	flushed := make(chan error, 1)
	go func() { flushed <- c.FlushBuffered(context.Background()) }()
	<-entered
	// The flush stays stuck a minute at most, so a Get that waited for it
	// rather than for its own deadline is told apart by far more than a
	// loaded machine's delay (internal/testenv/harness).
	stuck := time.AfterFunc(time.Minute, func() { close(release) })
	defer stuck.Stop()

	const deadline = 200 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	start := time.Now()
	_, err := c.Get(ctx, "post", 1)
	if took := time.Since(start); !errors.Is(err, ErrUnavailable) || took > 30*time.Second {
		t.Errorf("Get during a stuck flush: %v after %v, want ErrUnavailable at its %v deadline", err, took, deadline)
	}
	if stuck.Stop() {
		close(release)
	}
	if err := <-flushed; err != nil {
		t.Fatal(err)
	}
	if got := mustGet(t, c, "post", 1)["views"]; got != 1 {
		t.Errorf("Get after the flush = %d, want 1", got)
	}
}
