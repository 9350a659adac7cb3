package entity

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/race"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// TestMemoryPerEntity measures what one cached entity costs in Redis
// (MEMORY USAGE of its hash) at realistic values, per kind of the forum,
// and checks the hashes keep the compact listpack encoding.
func TestMemoryPerEntity(t *testing.T) {
	race.SkipMeasurement(t)
	srv := redistest.Start(t)
	kinds := []Kind{
		{Name: "user", Fields: []string{"following", "followers", "posts", "replies"}},
		{Name: "post", Fields: []string{"views", "replies", "likes"}},
		{Name: "message", Fields: []string{"replies", "followers"}},
	}
	values := map[string]int64{"following": 180, "followers": 52_310, "posts": 1_204, "replies": 8_877,
		"views": 1_250_000, "likes": 3_412}
	c := newCounters(t, Config{DB: sqliteDB(t), Dialect: SQLite, Pool: srv.Pool(), Kinds: kinds, FlushInterval: time.Hour})
	ctx := context.Background()
	for _, k := range kinds {
		const n = 100
		for id := int64(1); id <= n; id++ {
			err := c.InTx(ctx, func(ctx context.Context, tx *Tx) error {
				for _, f := range k.Fields {
					if err := tx.Incr(k.Name, id, f, values[f]+id); err != nil {
						return err
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
		}
		if _, err := c.BatchGet(ctx, k.Name, ids(n, 1)); err != nil { // warm
			t.Fatal(err)
		}
		var total int64
		for id := int64(1); id <= n; id++ {
			key := c.keys.Entity(k.Name, id)
			if enc, _ := redis.String(srv.Do("OBJECT", "ENCODING", key), nil); enc != "listpack" {
				t.Errorf("%s encoded as %q, want listpack", key, enc)
			}
			b, err := redis.Int64(srv.Do("MEMORY", "USAGE", key, "SAMPLES", "0"), nil)
			if err != nil {
				t.Fatal(err)
			}
			total += b
		}
		t.Logf("kind %s (%d fields): %d bytes per cached entity (MEMORY USAGE, key %q)", k.Name, len(k.Fields), total/n, c.keys.Entity(k.Name, 1))
	}
}
