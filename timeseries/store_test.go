package timeseries_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

func TestStoreSamples(t *testing.T) {
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(t0)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, clock)
	if err != nil {
		t.Fatal(err)
	}
	// Fields whose string order differs from their numeric order.
	srv.Do("HSET", "count:5:hits", "995", 1, "1000", 2, "90", 3, "junk", 9)
	srv.Do("ZADD", "known:", 0, "5:hits")
	ctx := context.Background()

	tests := []struct {
		name string
		r    timeseries.Range
		want string
	}{
		{"all, numeric order", timeseries.Range{}, "[{90 3} {995 1} {1000 2}]"},
		{"from", timeseries.Range{From: 995}, "[{995 1} {1000 2}]"},
		{"to", timeseries.Range{To: 995}, "[{90 3} {995 1}]"},
		{"filled", timeseries.Range{From: 985, To: 1005, FillZero: true}, "[{985 0} {990 0} {995 1} {1000 2} {1005 0}]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := store.Samples(ctx, "hits", 5, tt.r)
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != tt.want {
				t.Errorf("got %v, want %s", got, tt.want)
			}
		})
	}

	_, err = store.Samples(ctx, "hits", 7, timeseries.Range{})
	var pe *series.PrecisionError
	if !errors.Is(err, series.ErrUnknownPrecision) || !errors.As(err, &pe) || pe.Precision != 7 {
		t.Errorf("precision 7: err = %v, want a *PrecisionError", err)
	}
	if _, err := store.Samples(ctx, "nope", 5, timeseries.Range{}); !errors.Is(err, timeseries.ErrUnknownSeries) {
		t.Errorf("unknown series: err = %v, want ErrUnknownSeries", err)
	}
	if _, err := store.Samples(ctx, "hits", 5, timeseries.Range{From: 10, To: 5}); err == nil {
		t.Error("from after to was accepted")
	}
}

func TestStoreSeriesListsWhatRecordersWrote(t *testing.T) {
	srv := redistest.Start(t)
	r := newRecorder(t, srv, timeseries.Config{Schema: timeseries.Schema{Prefix: "p:", Precisions: []int{60, 5}}})
	for _, name := range []string{"status:2xx", "hits", "GET /posts/:id"} {
		mustCounter(t, r, name).Inc()
	}
	flush(t, r)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{Prefix: "p:", Precisions: []int{5, 60}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := store.Series(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := "[{GET /posts/:id [5 60]} {hits [5 60]} {status:2xx [5 60]}]"
	if fmt.Sprint(got) != want {
		t.Errorf("Series = %v, want %s", got, want)
	}
	samples, err := store.Samples(context.Background(), "GET /posts/:id", 60, timeseries.Range{})
	if err != nil || len(samples) != 1 || samples[0].Count != 1 {
		t.Errorf("Samples = %v, %v; want one sample of 1", samples, err)
	}
	// A series kept at one precision only is listed at that one.
	srv.Do("ZADD", "p:known:", 0, "60:minutes only")
	for p, want := range map[int]string{
		5:  "[GET /posts/:id hits status:2xx]",
		60: "[GET /posts/:id hits minutes only status:2xx]",
		7:  "[]",
	} {
		if got, err := store.NamesAt(context.Background(), p); err != nil || fmt.Sprint(got) != want {
			t.Errorf("NamesAt(%d) = %v, %v; want %s", p, got, err, want)
		}
	}
}

// Ping tells whether Redis answers: nil while it runs, an error once it
// is stopped, nil again after a restart.
func TestStorePing(t *testing.T) {
	srv := redistest.Start(t)
	store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	ping := func() error {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		return store.Ping(ctx)
	}
	if err := ping(); err != nil {
		t.Fatalf("Redis up: %v", err)
	}
	if n := srv.Do("DBSIZE"); n != int64(0) {
		t.Errorf("Ping left %v keys behind, want none", n)
	}
	srv.Stop()
	if err := ping(); err == nil || !strings.HasPrefix(err.Error(), "timeseries: ping: ") {
		t.Errorf("Redis stopped: err = %v, want a timeseries: ping: error", err)
	}
	srv.Restart()
	// Restart counts a server still LOADING its data as up: Ping is to
	// answer once it has loaded.
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if err = ping(); err == nil || !strings.Contains(err.Error(), "LOADING") {
			break
		}
	}
	if err != nil {
		t.Errorf("Redis restarted: %v", err)
	}
}
