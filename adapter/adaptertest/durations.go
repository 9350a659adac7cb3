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

// slack bounds what an adapter adds to a request's duration beyond what
// its handler took, measured on a loaded machine: the adapter's own work
// and the scheduling around the handler.
const slack = 5 * time.Millisecond

// Every request's duration is recorded once, in hits and its route, not
// in the status series; the durations' quantiles and sum are those the
// handlers measured of themselves, within the histogram's accuracy and
// the adapter's slack.
func testDurations(t testing.TB, k *kit) {
	rec := k.recorder(t, k.prefix)
	var mu sync.Mutex
	var truth []time.Duration
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
				s.hit(t, http.MethodGet, fmt.Sprintf("/sleep/%d", 1+rand.IntN(30)))
			}
		})
	}
	wg.Wait()
	s.wait()
	flush(t, rec)
	slices.Sort(truth)
	for _, name := range []string{"hits", k.name(http.MethodGet, "/sleep/{ms}")} {
		checkDurations(t, rec, name, truth)
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

// checkDurations compares name's durations today with truth, sorted.
func checkDurations(t testing.TB, rec *timeseries.Recorder, name string, truth []time.Duration) {
	t.Helper()
	d, err := rec.Store().LastDurations(context.Background(), name, 86400, 1)
	if err != nil {
		t.Fatal(err)
	}
	w := d.Window
	if w.Count() != uint64(len(truth)) {
		t.Fatalf("%s: %d durations, want %d", name, w.Count(), len(truth))
	}
	a := w.Mapping().Accuracy()
	for _, q := range []float64{0.5, 0.9, 0.99} {
		exact := truth[min(max(int(float64(len(truth))*q+0.999999), 1), len(truth))-1]
		lo, hi := time.Duration(float64(exact)*(1-a)), time.Duration(float64(exact+slack)*(1+a))
		if got := w.Quantile(q); got < lo || got > hi {
			t.Errorf("%s: p%g = %v, want within [%v, %v] of the handlers' own %v", name, q*100, got, lo, hi, exact)
		}
	}
	var sum time.Duration
	for _, d := range truth {
		sum += d
	}
	if got := w.Sum(); got < sum || got > sum+time.Duration(len(truth))*slack {
		t.Errorf("%s: durations sum to %v, want from %v (the handlers' own) to %v", name, got, sum, sum+time.Duration(len(truth))*slack)
	}
}
