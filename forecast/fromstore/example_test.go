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
