package main

import (
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// The demo traffic plays several visitors, told apart by their source
// addresses (127.0.0.x; the forum trusts no proxy header) and their
// browsers, so the hits series and the routes count more than one.
func TestDemoTrafficHasVisitors(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	_, stop := startExample(t, srv, options{DemoTraffic: true})
	// The app keeps real time: the traffic may cross midnight, so the
	// count is over the day it started in and the day it is now.
	dayKey := func() string {
		key, _ := timeseries.Schema{}.VisitorKey(86400, "hits", timeseries.BucketStart(time.Now().Unix(), 86400))
		return key
	}
	first := dayKey()
	deadline := time.Now().Add(30 * time.Second)
	for {
		n, _ := redis.Int64(srv.Do("PFCOUNT", first, dayKey()), nil)
		if n >= 5 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d visitors after 30 s of demo traffic, want at least 5", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	routes, _ := redis.Strings(srv.Do("KEYS", "uv:{count:86400:GET *"), nil)
	if len(routes) == 0 {
		t.Error("no route counts visitors")
	}
}
