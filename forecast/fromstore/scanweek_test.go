package fromstore_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
)

// A Scanner with Keep folds the hours a 1 h scan reads into each series'
// Week in Redis, and fits with a ready Week as the weekly season; a
// series without one begins its Week.
func TestScannerKeepsTheWeek(t *testing.T) {
	_, clock, sc, names := scannerFixture(t)
	sc.Keep = true
	ctx := context.Background()
	ws := fromstore.Weeks{Store: sc.Store}
	primed, err := ws.Load(ctx, names[:1])
	if err != nil {
		t.Fatal(err)
	}
	h := hourly(clock.Now().Add(-100 * time.Hour))
	h.Name = names[0]
	if _, err := ws.Update(ctx, primed, map[string]*forecast.Series{names[0]: h}); err != nil {
		t.Fatal(err)
	}
	before := primed[names[0]].Next

	got, err := sc.FitAll(ctx, names, 3600, forecast.Config{})
	if err != nil {
		t.Fatal(err)
	}
	after, err := ws.Load(ctx, names)
	if err != nil {
		t.Fatal(err)
	}
	if after[names[0]].Next <= before {
		t.Errorf("%s: the Week was folded to %d, before the scan %d; want the hours the scan read folded in", names[0], after[names[0]].Next, before)
	}
	if after[names[1]].Next == 0 {
		t.Errorf("%s: no Week begun by the scan", names[1])
	}
	fd := got[names[0]].Fitted
	if fd == nil {
		t.Fatalf("%s: no fit: %v", names[0], got[names[0]].Err)
	}
	if !slices.ContainsFunc(fd.Model.Seasons, func(s forecast.Season) bool { return s.Source == "week" }) {
		t.Errorf("%s: seasons %+v; want the ready Week lent", names[0], fd.Model.Seasons)
	}
}
