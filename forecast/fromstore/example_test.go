package fromstore_test

import (
	"context"
	"fmt"
	"log"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/timeseries"
)

// A loop that scans every series at 5 s for anomalies as each bucket
// closes. The Scanner reads the 1 h and 1 d series they borrow from once
// an hour and once a day, not every 5 s.
func ExampleScanner() {
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.Dial("tcp", "localhost:6379") }}
	store, err := timeseries.NewStore(pool, timeseries.Schema{}, nil)
	if err != nil {
		log.Fatal(err)
	}
	sc := &fromstore.Scanner{Store: store}
	ctx := context.Background()
	for range time.Tick(5 * time.Second) {
		names, err := store.NamesAt(ctx, 5)
		if err != nil {
			log.Print(err)
			continue
		}
		all, err := sc.FitAll(ctx, names, 5, forecast.Config{FlagsOnly: true})
		if err != nil {
			log.Print(err)
			continue
		}
		for name, r := range all {
			if r.Fitted == nil {
				continue // too little history yet
			}
			for _, f := range r.Fitted.Flags {
				fmt.Println(name, f.Bucket, f.Kind, f.Observed, f.Expected)
			}
		}
	}
}

// One burst of a route seen in four series is one event: the route is
// its root, the series that broke with it are related.
func ExampleGroup() {
	at := time.Date(2026, 3, 4, 17, 15, 0, 0, time.UTC)
	incident := func(series string, score float64) forecast.Incident {
		return forecast.Incident{Series: series, Precision: time.Minute, Kind: forecast.Spike, Direction: forecast.Up,
			Start: at, End: at.Add(2 * time.Minute), Score: score}
	}
	events := fromstore.Group([]forecast.Incident{
		incident("hits", 9.1), incident("status:2xx", 8.7),
		incident("GET /posts/:id status:2xx", 7.9), incident("GET /posts/:id", 7.6),
	})
	for _, ev := range events {
		fmt.Printf("%s %s %s from %s, score %.1f\n", ev.Series, ev.Kind, ev.Direction, ev.Start.Format("15:04"), ev.Score)
		for _, r := range ev.Related {
			fmt.Printf("  with %s\n", r.Series)
		}
	}
	// Output:
	// GET /posts/:id spike up from 17:15, score 7.6
	//   with hits
	//   with status:2xx
	//   with GET /posts/:id status:2xx
}
