package alert_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/alert"
	"github.com/pulse-dev/pulse/timeseries"
)

// Rules come from a file an operator edits; an error names the rule.
func ExampleLoadRules() {
	rules, err := alert.LoadRules("testdata/rules.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range rules {
		fmt.Printf("%s: %s on %q\n", r.Name, r.Kind, r.Series)
	}
	// Output:
	// AppAvailability: availability on "hits"
	// RouteAvailability: availability on "*"
	// PostsAbsent: absence on "GET /posts/:id"
	// RedisDown: health on ""
	// AppLatency: latency on "hits"
}

// Every instance of the app runs an evaluator beside its recorder; the
// lease in Redis makes one of them evaluate.
func ExampleNew() {
	pool := &redis.Pool{Dial: func() (redis.Conn, error) { return redis.DialURL(os.Getenv("REDIS_URL")) }}
	defer pool.Close()
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: pool})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rec.Close(context.Background())

	ev, err := alert.New(alert.Config{
		Pool:     pool,
		Recorder: rec, // the default rules, the recorder's health among them
		Receivers: []alert.Receiver{
			{Name: "alertmanager", Kind: alert.ToAlertmanager, URL: "http://127.0.0.1:9093"},
		},
		DashboardURL: "https://app.example/dashboard/",
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	go ev.Run(ctx)
	http.Handle("/dashboard/api/alerts", ev.Handler())

	// … serve the app; at shutdown:
	cancel()
	closeCtx, done := context.WithTimeout(context.Background(), 5*time.Second)
	defer done()
	fmt.Println(ev.Close(closeCtx))
	// Output: <nil>
}

// A latency SLO reads the requests slower than its threshold as the
// recorders count them: give the recorder the rules' thresholds.
func ExampleSlowThresholds() {
	rules, err := alert.LoadRules("testdata/rules.json")
	if err != nil {
		fmt.Println(err)
		return
	}
	cfg := timeseries.Config{SlowThresholds: alert.SlowThresholds(rules)} // and Pool, as ever
	fmt.Println(cfg.SlowThresholds, timeseries.SlowSeries("GET /posts/:id", cfg.SlowThresholds[0]))
	// Output: [500ms] slow:500ms GET /posts/:id
}
