package forecast

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"
)

func flat(n int, v float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = v
	}
	return out
}

func TestFitRejectsBadInput(t *testing.T) {
	start := time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		name string
		s    Series
		kind Kind
		want string
	}{
		{"no values", Series{Step: time.Minute, Start: start}, Counts, "no values"},
		{"zero step", Series{Values: flat(20, 1), Start: start}, Counts, "whole number of seconds"},
		{"sub-second step", Series{Step: time.Millisecond, Values: flat(20, 1), Start: start}, Counts, "whole number of seconds"},
		{"negative count", Series{Step: time.Minute, Values: append(flat(20, 1), -1), Start: start}, Counts, "value -1"},
		{"infinite", Series{Step: time.Minute, Values: append(flat(20, 1), math.Inf(1)), Start: start}, Counts, "value +Inf"},
		{"hits missing", Series{Step: time.Minute, Values: flat(20, 1), Start: start}, ErrorRatio, "0 hits for 20"},
		{"more errors than hits", Series{Step: time.Minute, Values: flat(20, 3), Hits: flat(20, 2), Start: start}, ErrorRatio, "3 errors over 2 hits"},
		{"too few values", Series{Step: time.Minute, Values: []float64{1, 2, math.NaN(), 3}, Start: start}, Counts, "3 buckets with a value"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := FitWithConfig(c.s, Config{Kind: c.kind})
			if err == nil || !strings.Contains(err.Error(), c.want) || !strings.HasPrefix(err.Error(), "forecast: ") {
				t.Fatalf("err = %v, want one containing %q", err, c.want)
			}
		})
	}
	if _, err := Fit(Series{Step: time.Minute}); !errors.Is(err, errNoValues) {
		t.Fatalf("err = %v, want errNoValues", err)
	}
}

// The model says which seasons it fitted, borrowed or refused, and why.
func TestModelSeasons(t *testing.T) {
	hourly := generate(genConfig{Step: time.Hour, N: 120, Base: 100, Daily: 0.8}, seeded(1, 0)).series(Counts)
	daily := generate(genConfig{Step: day, N: 120, Base: 2400, Weekend: 0.3}, seeded(1, 1)).series(Counts)
	short := hourly
	short.Values = short.Values[:40]
	sparse := generate(genConfig{Step: time.Hour, N: 120, Base: 0.5, Daily: 0.8}, seeded(1, 4)).series(Counts)
	sparseSum := 0.0
	for _, v := range sparse.Values {
		sparseSum += v
	}
	thin := fmt.Sprintf("%.0f hits over 24 phases, a season needs 10 a phase", sparseSum)
	for _, c := range []struct {
		name string
		s    Series
		cx   Context
		want []Season
	}{
		{"1h daily", hourly, Context{}, []Season{{Name: "daily", Period: 24, Source: "own"},
			{Name: "weekly", Source: "none", Refused: "120 buckets of history, a weekly season of 168 buckets needs 2 seasons (336)"}}},
		{"1h too short", short, Context{}, []Season{
			{Name: "daily", Source: "none", Refused: "40 buckets of history, a daily season of 24 buckets needs 2 seasons (48)"},
			{Name: "weekly", Source: "none", Refused: "40 buckets of history, a weekly season of 168 buckets needs 2 seasons (336)"}}},
		{"1h with 1d", hourly, Context{Daily: &daily}, []Season{{Name: "daily", Period: 24, Source: "own"}, {Name: "weekly", Source: "1d"}}},
		{"1d weekly", daily, Context{}, []Season{{Name: "weekly", Period: 7, Source: "own"}}},
		{"5h sees the day every 5 days", generate(genConfig{Step: 5 * time.Hour, N: 120, Base: 500, Daily: 0.8}, seeded(1, 2)).series(Counts), Context{},
			[]Season{{Name: "daily", Period: 24, Source: "own"}, {Name: "weekly", Source: "none", Refused: "120 buckets of history, a weekly season of 168 buckets needs 2 seasons (336)"}}},
		{"5h takes the day from 1h", generate(genConfig{Step: 5 * time.Hour, N: 120, Base: 500, Daily: 0.8}, seeded(1, 2)).series(Counts), Context{Hourly: &hourly, Daily: &daily},
			[]Season{{Name: "daily", Source: "1h"}, {Name: "weekly", Source: "1d"}}},
		{"5h keeps its own day when 1h is too short", generate(genConfig{Step: 5 * time.Hour, N: 120, Base: 500, Daily: 0.8}, seeded(1, 2)).series(Counts), Context{Hourly: &short},
			[]Season{{Name: "daily", Period: 24, Source: "own"}, {Name: "weekly", Source: "none", Refused: "120 buckets of history, a weekly season of 168 buckets needs 2 seasons (336)"}}},
		{"1h too sparse for a day", sparse, Context{}, []Season{{Name: "daily", Source: "none", Refused: thin},
			{Name: "weekly", Source: "none", Refused: "120 buckets of history, a weekly season of 168 buckets needs 2 seasons (336)"}}},
		{"5m borrows", generate(genConfig{Step: 5 * time.Minute, N: 120, Base: 50, Daily: 0.8}, seeded(1, 3)).series(Counts), Context{Hourly: &hourly, Daily: &daily},
			[]Season{{Name: "daily", Source: "1h"}, {Name: "weekly", Source: "1d"}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fd, err := FitWithConfig(c.s, Config{Context: c.cx})
			if err != nil {
				t.Fatal(err)
			}
			got := fd.Model.Seasons
			if len(got) != len(c.want) {
				t.Fatalf("seasons = %+v, want %+v", got, c.want)
			}
			for i := range got {
				if got[i] != c.want[i] {
					t.Fatalf("season %d = %+v, want %+v", i, got[i], c.want[i])
				}
			}
		})
	}
}

// A context that cannot lend says so and is not used.
func TestContextRefused(t *testing.T) {
	fine := generate(genConfig{Step: time.Minute, N: 120, Base: 50}, seeded(2, 0)).series(Counts)
	wrong := fine // a 1 min series offered as the hourly one
	fd, err := FitWithConfig(fine, Config{Context: Context{Hourly: &wrong}})
	if err != nil {
		t.Fatal(err)
	}
	if fd.Model.Seasons[0].Source != "none" || len(fd.Model.Notes) != 1 || !strings.Contains(fd.Model.Notes[0], "step 1m0s, want 1h0m0s") {
		t.Fatalf("model = %+v", fd.Model)
	}
}

// History and forecast carry what a chart draws, in order, with bands
// around the expectation.
func TestPointsShape(t *testing.T) {
	for _, kind := range []Kind{Counts, ErrorRatio, Latency} {
		g := generate(genConfig{Step: time.Hour, N: 120, Base: 200, Daily: 0.8}, seeded(3, int(kind)))
		fd, err := FitWithConfig(g.series(kind), Config{Kind: kind})
		if err != nil {
			t.Fatal(err)
		}
		if len(fd.History) != 120 || !fd.History[0].Time.Equal(g.start) {
			t.Fatalf("%v: history %d from %v", kind, len(fd.History), fd.History[0].Time)
		}
		fc := fd.Forecast(30)
		if len(fc) != 30 || !fc[0].Time.Equal(g.start.Add(120*time.Hour)) {
			t.Fatalf("%v: forecast %d from %v", kind, len(fc), fc[0].Time)
		}
		for i, p := range append(fd.History[10:], fc...) {
			if !(p.Band95.Lo <= p.Band80.Lo && p.Band80.Lo <= p.Expected && p.Expected <= p.Band80.Hi && p.Band80.Hi <= p.Band95.Hi) {
				t.Fatalf("%v: point %d bands out of order: %+v", kind, i, p)
			}
		}
		if kind == ErrorRatio && (fc[0].Hits <= 0 || fc[0].Band95.Hi > 1) {
			t.Fatalf("ratio forecast %+v", fc[0])
		}
		if fd.Model.Kind != kind.String() {
			t.Fatalf("model kind %q", fd.Model.Kind)
		}
	}
}

// FlagsOnly finds the same flags and expectations, and leaves out the
// bands of the buckets that did not flag.
func TestFlagsOnly(t *testing.T) {
	gc := genConfig{Step: time.Minute, N: 120, Base: 100, Events: []event{{Kind: Drop, At: 100, Len: 4}}}
	s := generate(gc, seeded(4, 0)).series(Counts)
	full, err := Fit(s)
	if err != nil {
		t.Fatal(err)
	}
	lean, err := FitWithConfig(s, Config{FlagsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(full.Flags) == 0 || len(full.Flags) != len(lean.Flags) {
		t.Fatalf("flags %d and %d", len(full.Flags), len(lean.Flags))
	}
	for i := range full.Flags {
		if full.Flags[i] != lean.Flags[i] {
			t.Fatalf("flag %d: %+v and %+v", i, full.Flags[i], lean.Flags[i])
		}
	}
	for i, p := range lean.History {
		if p.Expected != full.History[i].Expected || (p.Anomaly == nil) != math.IsNaN(p.Band95.Lo) {
			t.Fatalf("bucket %d: %+v against %+v", i, p, full.History[i])
		}
	}
}

// Points encode to JSON: a future bucket's value and score are null.
func TestPointJSON(t *testing.T) {
	s := generate(genConfig{Step: time.Minute, N: 60, Base: 30}, seeded(5, 0)).series(Counts)
	fd, err := FitWithConfig(s, Config{FlagsOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	out, err := json.Marshal(struct {
		History  []Point
		Forecast []Point
	}{fd.History, fd.Forecast(2)})
	if err != nil {
		t.Fatal(err)
	}
	var back struct{ History, Forecast []map[string]any }
	if err := json.Unmarshal(out, &back); err != nil {
		t.Fatal(err)
	}
	f, h := back.Forecast[0], back.History[len(back.History)-1]
	if f["value"] != nil || f["score"] != nil || f["expected"] == nil || f["band95"].(map[string]any)["hi"] == nil {
		t.Errorf("future point %v", f)
	}
	if h["value"] == nil || h["score"] == nil || h["band80"].(map[string]any)["lo"] != nil {
		t.Errorf("past point without bands %v", h)
	}
}

// A coarser series too sparse to show its day lends none: the fine
// series says why and goes on without it.
func TestSparseContextNotLent(t *testing.T) {
	fine := generate(genConfig{Step: time.Minute, N: 120, Base: 0.5}, seeded(2, 1)).series(Counts)
	hourly := generate(genConfig{Step: time.Hour, N: 120, Base: 0.5, Daily: 0.8}, seeded(2, 2)).series(Counts)
	fd, err := FitWithConfig(fine, Config{Context: Context{Hourly: &hourly}})
	if err != nil {
		t.Fatal(err)
	}
	if fd.Model.Seasons[0].Source != "none" || len(fd.Model.Notes) != 1 || !strings.Contains(fd.Model.Notes[0], "a season needs 10 a phase") {
		t.Fatalf("model = %+v", fd.Model)
	}
}
