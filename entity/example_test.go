package entity_test

import (
	"context"
	"database/sql"
	"fmt"
	"os"

	"github.com/gomodule/redigo/redis"
	_ "modernc.org/sqlite"

	"github.com/pulse-dev/pulse/entity"
)

func Example() {
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, os.Getenv("REDIS_URL")) // e.g. redis://127.0.0.1:6379/0
	}}
	defer pool.Close()
	db, _ := sql.Open("sqlite", "file::memory:")
	db.SetMaxOpenConns(1) // one in-memory database, one writer
	defer db.Close()

	ctx := context.Background()
	counters, err := entity.New(ctx, entity.Config{
		DB:      db,
		Dialect: entity.SQLite,
		Pool:    pool,
		Kinds: []entity.Kind{
			{Name: "post", Fields: []string{"views", "likes"}, Hot: map[string]int{"views": 8}},
			{Name: "message", Fields: []string{"replies", "mentions"}},
		},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer counters.Close(ctx)
	if err := counters.Migrate(ctx); err != nil { // creates the tables
		fmt.Println(err)
		return
	}

	_ = counters.Incr(ctx, "post", 1, "views", 3)
	_ = counters.Incr(ctx, "post", 1, "likes", 1)
	_ = counters.Incr(ctx, "post", 2, "views", 5)
	posts, _ := counters.BatchGet(ctx, "post", []int64{1, 2, 3})
	for _, p := range posts {
		fmt.Println(p["views"], p["likes"])
	}

	_ = counters.Incr(ctx, "message", 7, "replies", 2) // two unread replies
	_ = counters.Reset(ctx, "message", 7, "replies")   // the user opened them
	unread, _ := counters.Get(ctx, "message", 7)
	fmt.Println(unread)

	top, _ := counters.Top(ctx, "post", "views", 10)
	fmt.Println(top)

	// The app's own tables say post 2 has 4 views.
	fixes, _ := counters.Reconcile(ctx, "post", "views", func(context.Context) (map[int64]int64, error) {
		return map[int64]int64{1: 3, 2: 4}, nil
	})
	fmt.Printf("%+v\n", fixes)
	// Output:
	// 3 1
	// 5 0
	// 0 0
	// map[mentions:0 replies:0]
	// [{2 5} {1 3}]
	// [{Kind:post ID:2 Field:views Was:5 Now:4}]
}

// The compact layouts keep the cache of many entities in few Redis keys;
// what the counters answer is the same. LayoutCompact suits ids handed out
// densely, LayoutSparse ids of any shape, such as a snowflake generator's;
// Population, about how many users are cached at once, sizes its buckets.
func Example_compactLayouts() {
	pool := &redis.Pool{DialContext: func(ctx context.Context) (redis.Conn, error) {
		return redis.DialURLContext(ctx, os.Getenv("REDIS_URL"))
	}}
	defer pool.Close()
	db, _ := sql.Open("sqlite", "file::memory:")
	db.SetMaxOpenConns(1)
	defer db.Close()

	ctx := context.Background()
	for _, try := range []struct {
		layout     entity.Layout
		alice, bob int64
	}{
		{entity.LayoutCompact, 1, 2},                                    // 127 users per Redis hash, a packed value each
		{entity.LayoutSparse, 1790165504163524608, 1790165504167718913}, // about 64 per hash
	} {
		counters, err := entity.New(ctx, entity.Config{
			DB: db, Dialect: entity.SQLite, Pool: pool, Prefix: string(try.layout) + ":",
			Layout: try.layout,
			Kinds: []entity.Kind{{Name: "user", Fields: []string{"following", "followers", "posts", "replies"},
				Population: 2_000_000}},
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		defer counters.Close(ctx)
		if err := counters.Migrate(ctx); err != nil {
			fmt.Println(err)
			return
		}
		_ = counters.Incr(ctx, "user", try.alice, "followers", 52310)
		_ = counters.Incr(ctx, "user", try.alice, "posts", 1204)
		users, _ := counters.BatchGet(ctx, "user", []int64{try.alice, try.bob})
		fmt.Println(try.layout, users[0]["followers"], users[0]["posts"], users[1]["followers"])
	}
	// Output:
	// compact 52310 1204 0
	// sparse 52310 1204 0
}
