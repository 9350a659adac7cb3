package cleaner_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/mna/redisc"

	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// errorLog collects what a cleaner reports to OnError.
type errorLog struct {
	mu   sync.Mutex
	errs []error
}

func (l *errorLog) add(err error) { l.mu.Lock(); l.errs = append(l.errs, err); l.mu.Unlock() }

func (l *errorLog) all() []error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]error(nil), l.errs...)
}

// A hash of another type is reported once and skipped; the series beside
// it, in the same script call, are trimmed; with one call per series too.
func TestKeyOfAnotherTypeIsSkipped(t *testing.T) {
	srv := redistest.Start(t)
	for _, perKey := range []bool{false, true} {
		t.Run(fmt.Sprintf("perKey=%v", perKey), func(t *testing.T) {
			srv.FlushAll()
			srv.Do("SET", "count:5:str", "x")
			srv.Do("ZADD", "known:", 0, "5:str")
			fill(srv, "", 5, "good", buckets(t0, 5, 130, 0))
			var log errorLog
			c := newCleaner(t, cleaner.Config{Pool: srv.Pool(), Clock: timeseries.NewManualClock(t0), OnError: log.add})
			if perKey {
				cleaner.SetPerKey(c)
			}
			st := pass(t, c)
			if errs := log.all(); len(errs) != 1 || !strings.Contains(errs[0].Error(), "WRONGTYPE") || !strings.Contains(errs[0].Error(), "count:5:str") {
				t.Errorf("reported %v, want one WRONGTYPE for count:5:str", errs)
			}
			if n := len(fields(t, srv, "count:5:good")); n != 120 || st.FieldsDeleted != 10 {
				t.Errorf("count:5:good keeps %d fields (%d deleted), want 120", n, st.FieldsDeleted)
			}
			if got := known(t, srv, ""); len(got) != 2 {
				t.Errorf("known: = %v, want both listed", got)
			}
		})
	}
}

// otherMaster is a master of cl serving neither known: nor the lock, so
// that a fault on it leaves a pass able to run.
func otherMaster(t *testing.T, cl *redistest.Cluster) *redistest.Server {
	t.Helper()
	for _, m := range cl.Masters() {
		if m.Addr != cl.MasterOf("known:").Addr && m.Addr != cl.MasterOf("pulse:cleaner:lock").Addr {
			return m
		}
	}
	t.Skip("known: and the lock are on different masters of a 2-master cluster")
	return nil
}

// hashLens is the HLEN of every hash of names at every precision.
func hashLens(t *testing.T, cl *redistest.Cluster, names []string) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, name := range names {
		for _, p := range []int{5, 60, 300, 3600, 18000, 86400} {
			key := fmt.Sprintf("count:%d:%s", p, name)
			n, err := redis.Int(cl.Do(t, key, "HLEN", key), nil)
			if err != nil {
				t.Fatal(err)
			}
			out[key] = n
		}
	}
	return out
}

func seriesNames(prefix string, n int) []string {
	names := make([]string, n)
	for i := range names {
		names[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return names
}

// A slot being migrated: a hash already moved to the importing node is
// out of the reach of the old owner's script call. It is deferred, not
// lost and not failing the call: the hash beside it in the same slot,
// still on the old owner, is trimmed. Once the slot has moved, the next
// pass routes by the new map and trims it.
func TestMigratingSlotDefersMovedKeys(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	pool := cl.Client(t)
	const moved, stays = "count:5:{mig}moved", "count:5:{mig}stays"
	for _, key := range []string{moved, stays} {
		fillCluster(t, cl, key, buckets(t0, 5, 130, 0))
	}
	fillCluster(t, cl, "count:5:elsewhere", buckets(t0, 5, 130, 0))
	slot := redisc.Slot(moved)
	from := cl.MasterOf(moved)
	var to *redistest.Server
	for _, m := range cl.Masters() {
		if m.Addr != from.Addr {
			to = m
		}
	}
	fromID, _ := redis.String(from.Do("CLUSTER", "MYID"), nil)
	toID, _ := redis.String(to.Do("CLUSTER", "MYID"), nil)
	to.Do("CLUSTER", "SETSLOT", slot, "IMPORTING", fromID)
	from.Do("CLUSTER", "SETSLOT", slot, "MIGRATING", toID)
	from.Do("MIGRATE", "127.0.0.1", to.Port(), "", 0, 5000, "KEYS", moved)

	c := newCleaner(t, cleaner.Config{Pool: pool, Clock: timeseries.NewManualClock(t0)})
	st := pass(t, c)
	if st.Deferred != 1 || st.FieldsDeleted != 20 {
		t.Errorf("pass during the migration: %+v, want 1 deferred, 20 fields deleted", st)
	}

	from.Do("MIGRATE", "127.0.0.1", to.Port(), "", 0, 5000, "KEYS", stays)
	to.Do("CLUSTER", "SETSLOT", slot, "NODE", toID)
	for _, m := range cl.Masters() {
		if m != to {
			m.Do("CLUSTER", "SETSLOT", slot, "NODE", toID)
		}
	}
	cl.WaitOK(t)
	if n, _ := redis.Int(cl.Do(t, moved, "HLEN", moved), nil); n != 130 {
		t.Errorf("%s has %d fields after the deferring pass, want its 130", moved, n)
	}
	st = pass(t, c)
	if st.Deferred != 0 || st.FieldsDeleted != 10 {
		t.Errorf("pass after the migration: %+v, want 10 fields deleted", st)
	}
	for _, key := range []string{moved, stays, "count:5:elsewhere"} {
		if n, _ := redis.Int(cl.Do(t, key, "HLEN", key), nil); n != 120 {
			t.Errorf("%s has %d fields, want 120", key, n)
		}
	}
}

func fillCluster(t *testing.T, cl *redistest.Cluster, key string, times []int64) {
	t.Helper()
	args := []any{key}
	for _, ts := range times {
		args = append(args, ts, 1)
	}
	cl.Do(t, key, "HSET", args...)
	cl.Do(t, "known:", "ZADD", "known:", 0, strings.TrimPrefix(key, "count:"))
}

// A master dies while the cleaner routes by the map that still names it:
// its series of that page are deferred and the pass fails naming it, but
// the pages after it, routed by the map read again after the failover, and
// the other nodes are trimmed; nothing is unlisted or deleted beyond the
// newest 120. The next pass trims the rest.
func TestMasterKilledDuringPass(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	pool := cl.Client(t)
	dead := otherMaster(t, cl)
	names := seriesNames("kill", 100)
	writeSeries(t, pool, 1, names, 0, 130)
	var log errorLog
	c := newCleaner(t, cleaner.Config{Pool: pool, PageSize: 60, Interval: 24 * time.Hour, Clock: timeseries.NewManualClock(t0), OnError: log.add})
	// With a day's interval every precision is due in every pass.
	pass(t, c) // the cleaner now knows the slot map
	writeSeries(t, pool, 1, names, 120, 130)
	cl.KillMaster(t, dead)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	st, err := c.Pass(ctx)
	if err == nil || !strings.Contains(err.Error(), dead.Addr) {
		t.Errorf("pass with a master gone: %v, want an error naming %s", err, dead.Addr)
	}
	untrimmed := 0
	for key, n := range hashLens(t, cl, names) {
		switch n {
		case 130:
			untrimmed++
		case 120:
		default:
			t.Errorf("%s has %d fields, want 120 or 130", key, n)
		}
	}
	if st.Deferred == 0 || untrimmed != st.Deferred || st.FieldsDeleted != int64(10*(600-st.Deferred)) {
		t.Errorf("stats %+v with %d hashes untrimmed", st, untrimmed)
	}
	if n, _ := redis.Int(cl.Do(t, "known:", "ZCARD", "known:"), nil); n != 600 {
		t.Errorf("%d series listed, want 600", n)
	}
	st = pass(t, c)
	if st.Deferred != 0 || st.FieldsDeleted != int64(10*untrimmed) {
		t.Errorf("next pass: %+v, want the %d deferred hashes trimmed", st, untrimmed)
	}
	for key, n := range hashLens(t, cl, names) {
		if n != 120 {
			t.Errorf("%s has %d fields after the next pass, want 120", key, n)
		}
	}
	if errs := log.all(); len(errs) != 0 {
		t.Errorf("reported %v", errs)
	}
}

// A master out of memory still has its hashes trimmed: the script may
// delete there (allow-oom), which is when deleting matters most.
func TestFullMasterIsTrimmed(t *testing.T) {
	cl := redistest.SharedCluster(t)
	cl.Reset(t)
	pool := cl.Client(t)
	full := otherMaster(t, cl)
	names := seriesNames("full", 50)
	writeSeries(t, pool, 1, names, 0, 130)
	defer full.Faults().OOM()()
	c := newCleaner(t, cleaner.Config{Pool: pool, Clock: timeseries.NewManualClock(t0)})
	if st := pass(t, c); st.Deferred != 0 || st.FieldsDeleted != 10*300 {
		t.Errorf("stats %+v, want 3000 fields deleted", st)
	}
}
