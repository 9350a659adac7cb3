package fromstore_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
)

// A settled bucket scores the same on every scan of a Scanner, though the
// window slides and the fit's parameters move with it; fresh fits of the
// same data, a bucket on, score it otherwise. The bucket still filling
// (within Settle) is not kept: its next scan may read more counts.
func TestScannerKeepsSettledScores(t *testing.T) {
	_, clock, sc, names := scannerFixture(t)
	ctx := context.Background()
	cfg := forecast.Config{FlagsOnly: true}
	clock.Advance(30 * time.Second) // Settle has passed since the last minute closed
	first, err := sc.FitAll(ctx, names, 60, cfg)
	if err != nil {
		t.Fatal(err)
	}
	moved, kept := 0, 0
	for step := 1; step <= 5; step++ {
		clock.Advance(time.Minute)
		again, err := sc.FitAll(ctx, names, 60, cfg)
		if err != nil {
			t.Fatal(err)
		}
		fresh, err := fromstore.FitAll(ctx, sc.Store, names, 60, cfg)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range names {
			was := scores(first[name].Fitted)
			for b, s := range scores(again[name].Fitted) {
				if w, ok := was[b]; ok && !math.IsNaN(w) {
					kept++
					if s != w {
						t.Errorf("%s at %v: scored %v, then %v a scan later", name, time.Unix(b, 0).UTC(), w, s)
					}
				}
			}
			for b, s := range scores(fresh[name].Fitted) {
				if w, ok := was[b]; ok && !math.IsNaN(w) && s != w {
					moved++
				}
			}
		}
	}
	if kept == 0 || moved == 0 {
		t.Errorf("%d buckets compared, %d moved in fresh fits: the test shows nothing", kept, moved)
	}
}

func scores(fd *forecast.Fitted) map[int64]float64 {
	out := map[int64]float64{}
	if fd == nil {
		return out
	}
	for _, p := range fd.History {
		out[p.Time.Unix()] = p.Score
	}
	return out
}
