package entity

import (
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/mariadbtest"
	"github.com/pulse-dev/pulse/internal/testenv/pgtest"
)

// hotWriters is how many goroutines increment the hot counter at once.
const hotWriters = 32

// hotSlots are the slot counts compared; 1 is the plain row.
var hotSlots = []int{1, 4, 16, 64}

// BenchmarkHotRowSlots has 32 goroutines increment one post's views (SQL
// only) on MariaDB and on PostgreSQL, with the value on one row and spread
// over 4, 16 and 64 slot rows. The slot counts take turns within each
// round (one round per b.N), so a machine whose load changes during the
// run slows them alike. It reports increments per second per slot count,
// the ratio to one row, and logs where the server's sessions were while
// the writers ran (sampled from the server's own process list).
func BenchmarkHotRowSlots(b *testing.B) {
	for _, server := range []string{"mariadb", "mariadb-lazy-flush", "postgres"} {
		b.Run(server, func(b *testing.B) {
			db, dialect := hotDB(b, server)
			cs := make([]*Counters, len(hotSlots))
			for i, n := range hotSlots {
				kind := Kind{Name: "post", Fields: []string{"views"}}
				if n > 1 {
					kind.Hot = map[string]int{"views": n}
				}
				cs[i] = newCounters(b, Config{DB: db, Dialect: dialect, Kinds: []Kind{kind},
					Table: fmt.Sprintf("hot_%d", n), FoldInterval: time.Hour, StatementTimeout: time.Minute})
			}
			const perRound = 600
			took := make([]time.Duration, len(cs))
			lockWaits := make([]time.Duration, len(cs))
			states := make([]map[string]int, len(cs))
			for i := range states {
				states[i] = map[string]int{}
			}
			b.ResetTimer()
			for round := 0; round < b.N; round++ {
				for i, c := range cs {
					stop := sampleStates(db, server, states[i])
					before := rowLockWaits(db, dialect)
					took[i] += hammer(b, c, perRound)
					lockWaits[i] += rowLockWaits(db, dialect) - before
					stop()
				}
			}
			b.StopTimer()
			base := float64(perRound*b.N) / took[0].Seconds()
			for i, n := range hotSlots {
				rate := float64(perRound*b.N) / took[i].Seconds()
				b.ReportMetric(rate, fmt.Sprintf("incr/s@%d", n))
				if n > 1 {
					b.ReportMetric(rate/base, fmt.Sprintf("x@%d", n))
				}
				b.Logf("%s, %d slots: %.0f incr/s; row lock waits %.2f ms per increment; sessions seen: %s", server, n, rate,
					float64(lockWaits[i].Microseconds())/1e3/float64(perRound*b.N), topStates(states[i]))
				if got := sqlValue(b, cs[i], "post", 1, "views"); got != int64(perRound*b.N) {
					b.Errorf("%d slots: views = %d, want %d", n, got, perRound*b.N)
				}
			}
		})
	}
}

// hotDB is a database of its own on a private MariaDB or the PostgreSQL
// test server, with room for every writer. "mariadb-lazy-flush" writes
// the redo log at each commit but syncs it to disk once a second
// (innodb_flush_log_at_trx_commit=2), which shows what the commit's fsync
// costs; the test PostgreSQL runs with fsync off.
func hotDB(b *testing.B, server string) (*sql.DB, Dialect) {
	var db *sql.DB
	dialect := MySQL
	if strings.HasPrefix(server, "mariadb") {
		var opts mariadbtest.Options
		if server == "mariadb-lazy-flush" {
			opts.ServerArgs = []string{"--innodb-flush-log-at-trx-commit=2"}
		}
		d, _, err := mariadbtest.StartPrivate(b, opts)
		if err != nil {
			b.Skipf("MariaDB could not be started: %v", err)
		}
		db = d.DB
	} else {
		d, err := pgtest.StartDatabase(b)
		if err != nil {
			b.Skipf("PostgreSQL could not be started: %v", err)
		}
		db, dialect = d.DB, Postgres
	}
	db.SetMaxOpenConns(hotWriters + 8)
	db.SetMaxIdleConns(hotWriters + 8)
	return db, dialect
}

// hammer has hotWriters goroutines make n increments of post 1's views
// between them and says how long they took.
func hammer(b *testing.B, c *Counters, n int) time.Duration {
	ctx := context.Background()
	var left atomic.Int64
	left.Store(int64(n))
	var wg sync.WaitGroup
	start := time.Now()
	for w := 0; w < hotWriters; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := c.Incr(ctx, "post", 1, "views", 1); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	return time.Since(start)
}

// sampleStates counts, every few milliseconds until stop is called, what
// the server says its other sessions on this database are doing:
// PostgreSQL's wait events (pg_stat_activity), MariaDB's thread states
// (its process list; "Sleep" is a session waiting for the client).
func sampleStates(db *sql.DB, server string, into map[string]int) (stop func()) {
	query := "SELECT COALESCE(wait_event_type, 'running') || ':' || COALESCE(wait_event, '') || ' (' || COALESCE(state, '') || ')'" +
		" FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
	if strings.HasPrefix(server, "mariadb") {
		query = "SELECT CONCAT(COMMAND, ': ', COALESCE(STATE, '')) FROM information_schema.PROCESSLIST" +
			" WHERE DB = DATABASE() AND ID <> CONNECTION_ID()"
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			rows, err := db.Query(query)
			if err != nil {
				continue
			}
			for rows.Next() {
				var s string
				if rows.Scan(&s) == nil {
					mu.Lock()
					into[s]++
					mu.Unlock()
				}
			}
			rows.Close()
		}
	}()
	return func() { close(done); wg.Wait() }
}

// rowLockWaits is the time InnoDB's sessions have waited for row locks
// (Innodb_row_lock_time, ms); 0 on PostgreSQL, whose lock waits show in
// the sampled wait events.
func rowLockWaits(db *sql.DB, dialect Dialect) time.Duration {
	if dialect != MySQL {
		return 0
	}
	var name string
	var ms int64
	if err := db.QueryRow("SHOW GLOBAL STATUS LIKE 'Innodb_row_lock_time'").Scan(&name, &ms); err != nil {
		return 0
	}
	return time.Duration(ms) * time.Millisecond
}

// topStates lists the most seen states with their share of the samples.
func topStates(m map[string]int) string {
	total := 0
	for _, n := range m {
		total += n
	}
	keys := slices.SortedFunc(maps.Keys(m), func(x, y string) int { return m[y] - m[x] })
	var parts []string
	for _, k := range keys[:min(len(keys), 5)] {
		parts = append(parts, fmt.Sprintf("%s %.0f%%", k, 100*float64(m[k])/float64(max(total, 1))))
	}
	return strings.Join(parts, ", ")
}
