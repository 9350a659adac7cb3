package cleaner_test

import (
	"context"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/cleaner"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// A pass deletes the incidents that ended more than the retention ago,
// at the keys package fromstore writes them, and keeps the others; a
// negative retention keeps them all.
func TestPassTrimsIncidents(t *testing.T) {
	srv := redistest.Start(t)
	schema := timeseries.Schema{Prefix: "app:"}
	records, ends := fromstore.IncidentKeys(schema, 60)
	write := func() {
		srv.FlushAll()
		for i, end := range []time.Time{t0.Add(-40 * 24 * time.Hour), t0.Add(-31 * 24 * time.Hour), t0.Add(-29 * 24 * time.Hour), t0} {
			id := string(rune('a' + i))
			srv.Do("HSET", records, id, "{}")
			srv.Do("ZADD", ends, end.Unix(), id)
		}
	}
	for _, tt := range []struct {
		retention time.Duration
		left      int
	}{{0, 2}, {10 * 24 * time.Hour, 1}, {-1, 4}} {
		write()
		c := newCleaner(t, cleaner.Config{Pool: srv.Pool(), Schema: schema, Clock: timeseries.NewManualClock(t0), IncidentRetention: tt.retention})
		st, err := c.Pass(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		n, _ := srv.Do("HLEN", records).(int64)
		z, _ := srv.Do("ZCARD", ends).(int64)
		if int(n) != tt.left || int(z) != tt.left || st.IncidentsRemoved != 4-tt.left {
			t.Errorf("retention %v: %d records and %d ends left, %d removed; want %d left", tt.retention, n, z, st.IncidentsRemoved, tt.left)
		}
	}
}
