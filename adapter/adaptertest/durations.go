package adaptertest

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// Every request's duration is recorded once, in hits and its route, not
// in the status series; the durations' quantiles and sum lie between
// what the handlers measured of themselves and what the client measured
// of its round trips, within the histogram's accuracy. Both bounds hold
// on a machine however loaded: the adapter's clock runs inside the
// client's and around the handler's.
func testDurations(t testing.TB, k *kit) {
	rec := k.recorder(t, k.prefix)
	var mu sync.Mutex
	var truth, trips []time.Duration
	sleep := Route{Method: http.MethodGet, Path: "/sleep/{ms}", Kind: KindSleep, sleep: func(p string) {
		start := time.Now()
		ms, _ := strconv.Atoi(lastSegment(p))
		time.Sleep(time.Duration(ms) * time.Millisecond)
		took := time.Since(start)
		mu.Lock()
		truth = append(truth, took)
		mu.Unlock()
	}}
	s := k.serveRoutes(t, []*timeseries.Recorder{rec}, []Route{sleep})
	const n = 80
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := g; i < n; i += 4 {
				start := time.Now()
				s.hit(t, http.MethodGet, fmt.Sprintf("/sleep/%d", 1+rand.IntN(30)))
				took := time.Since(start)
				mu.Lock()
				trips = append(trips, took)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	s.wait()
	flush(t, rec)
	slices.Sort(truth)
	slices.Sort(trips)
	for _, name := range []string{"hits", k.name(http.MethodGet, "/sleep/{ms}")} {
		checkDurations(t, rec, name, truth, trips)
	}
	d, err := rec.Store().LastDurations(context.Background(), "status:2xx", 86400, 1)
	if err != nil || d.Window.Count() != 0 {
		t.Errorf("status:2xx holds %d durations (%v), want none: status series are counts", d.Window.Count(), err)
	}
}

// A streamed answer's duration covers the whole stream, to its last
// byte, not only the handler that set it up (fasthttp's body stream
// writer runs after the handler has returned).
func testStreamedDurations(t testing.TB, k *kit) {
	rec := k.recorder(t, k.prefix)
	var mu sync.Mutex
	var truth []time.Duration
	stream := Route{Method: http.MethodGet, Path: "/stream", Kind: KindStream, stream: func(w io.Writer, flush func() error) {
		start := time.Now()
		io.WriteString(w, "first\n")
		_ = flush()
		time.Sleep(40 * time.Millisecond)
		io.WriteString(w, "second\n")
		took := time.Since(start)
		mu.Lock()
		truth = append(truth, took)
		mu.Unlock()
	}}
	s := k.serveRoutes(t, []*timeseries.Recorder{rec}, []Route{stream})
	for range 3 {
		if code := s.hit(t, http.MethodGet, "/stream"); code != http.StatusOK {
			t.Fatalf("GET /stream answered %d", code)
		}
	}
	s.wait()
	flush(t, rec)
	slices.Sort(truth)
	d, err := rec.Store().LastDurations(context.Background(), k.name(http.MethodGet, "/stream"), 86400, 1)
	if err != nil {
		t.Fatal(err)
	}
	w, a := d.Window, d.Window.Mapping().Accuracy()
	if w.Count() != uint64(len(truth)) {
		t.Fatalf("%d durations, want %d", w.Count(), len(truth))
	}
	if lo := time.Duration(float64(truth[0]) * (1 - a)); w.Min() < lo {
		t.Errorf("the shortest stream took %v by the adapter, want at least the %v its writer took", w.Min(), truth[0])
	}
}

// checkDurations checks name's durations today against inner, what the
// handlers measured, and outer, the client's round trips, both sorted:
// each request's duration lies between its two, so each quantile and the
// sum do too.
func checkDurations(t testing.TB, rec *timeseries.Recorder, name string, inner, outer []time.Duration) {
	t.Helper()
	d, err := rec.Store().LastDurations(context.Background(), name, 86400, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := d.Window
	if w.Count() != uint64(len(inner)) {
		t.Fatalf("%s: %d durations, want %d", name, w.Count(), len(inner))
	}
	a := w.Mapping().Accuracy()
	rank := func(q float64) int { return min(max(int(float64(len(inner))*q+0.999999), 1), len(inner)) - 1 }
	for _, q := range []float64{0.5, 0.9, 0.99} {
		lo, hi := time.Duration(float64(inner[rank(q)])*(1-a)), time.Duration(float64(outer[rank(q)])*(1+a))
		if got := w.Quantile(q); got < lo || got > hi {
			t.Errorf("%s: p%g = %v, want within [%v, %v]: the handlers' own and the client's round trips", name, q*100, got, lo, hi)
		}
	}
	var sumIn, sumOut time.Duration
	for i := range inner {
		sumIn, sumOut = sumIn+inner[i], sumOut+outer[i]
	}
	if got := w.Sum(); got < sumIn || got > sumOut {
		t.Errorf("%s: durations sum to %v, want from %v (the handlers' own) to %v (the client's round trips)", name, got, sumIn, sumOut)
	}
}
