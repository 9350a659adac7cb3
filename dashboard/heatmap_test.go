package dashboard_test

import (
	"slices"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
	"github.com/pulse-dev/pulse/internal/testenv/testnow"
)

// heatTraffic is what the heatmap fixture records for GET /heat: per
// duration, how many requests and the status of each, in the first 5 s
// bucket (at 1 s) or the third (at 11 s). No duration sits near a row's
// edge, so each one's row is certain.
var heatTraffic = []struct {
	ms     float64
	at     time.Duration
	status []int
}{
	{0.5, time.Second, []int{200, 200}},                         // row 0: < 1 ms
	{3, time.Second, []int{200, 200, 200, 404, 404}},            // row 2: 2–5 ms
	{7, time.Second, []int{200, 200, 503}},                      // row 3: 5–10 ms
	{30, time.Second, []int{200, 200, 200, 200}},                // row 5: 20–50 ms
	{150, time.Second, []int{500}},                              // row 7: 100–200 ms
	{3000, time.Second, []int{200, 200}},                        // row 11: 2–5 s
	{20000, time.Second, []int{200}},                            // row 13: ≥ 10 s
	{15, 11 * time.Second, []int{200, 200, 200, 200, 500, 500}}, // row 4: 10–20 ms
}

type heatAnswer struct {
	Buckets []map[string]float64 `json:"buckets"`
	Heatmap struct {
		Rows []struct {
			Label string   `json:"label"`
			From  float64  `json:"from"`
			To    *float64 `json:"to"`
		} `json:"rows"`
		Counts    [][]uint64 `json:"counts"`
		Hits      []int64    `json:"hits"`
		Errors4xx []int64    `json:"errors_4xx"`
		Errors5xx []int64    `json:"errors_5xx"`
	} `json:"heatmap"`
}

func TestLatencyHeatmap(t *testing.T) {
	start := time.Unix(testnow.Now().Unix()/60*60, 0)
	f := dashtest.New(t, dashtest.Options{NoTraffic: true, NoEntities: true, Start: start})
	tr, err := adapter.HitsConfig[any]{Recorder: f.Rec, Routes: true, StatusClasses: true}.Meter(adapter.Glue[any]{})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range heatTraffic {
		f.Clock.Advance(start.Add(h.at).Sub(f.Clock.Now()))
		for _, st := range h.status {
			tr.Count(nil, "GET", "/heat", st, time.Duration(h.ms*float64(time.Millisecond)))
		}
	}
	f.Clock.Advance(start.Add(12 * time.Second).Sub(f.Clock.Now()))
	f.Flush(t)

	var got heatAnswer
	getJSON(t, f.Root+"api/durations/"+seg("GET /heat")+"?precision=5&last=3&heatmap=1", &got)
	hm := got.Heatmap
	if len(hm.Rows) != 14 || hm.Rows[0].Label != "< 1 ms" || hm.Rows[13].Label != "≥ 10 s" || hm.Rows[13].To != nil ||
		hm.Rows[4].Label != "10–20 ms" || hm.Rows[4].From != 10 || *hm.Rows[4].To != 20 ||
		hm.Rows[9].Label != "500 ms–1 s" || hm.Rows[11].Label != "2–5 s" {
		t.Errorf("rows: %+v", hm.Rows)
	}
	want := [][]uint64{
		{2, 0, 5, 3, 0, 4, 0, 1, 0, 0, 0, 2, 0, 1},
		make([]uint64, 14),
		{0, 0, 0, 0, 6, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	}
	if len(hm.Counts) != 3 || len(got.Buckets) != 3 {
		t.Fatalf("%d rows of counts for %d buckets, want 3", len(hm.Counts), len(got.Buckets))
	}
	for i := range want {
		if !slices.Equal(hm.Counts[i], want[i]) {
			t.Errorf("bucket %d: counts %v, want %v", i, hm.Counts[i], want[i])
		}
	}
	if !slices.Equal(hm.Hits, []int64{18, 0, 6}) || !slices.Equal(hm.Errors4xx, []int64{2, 0, 0}) ||
		!slices.Equal(hm.Errors5xx, []int64{2, 0, 2}) {
		t.Errorf("hits %v 4xx %v 5xx %v, want [18 0 6] [2 0 0] [2 0 2]", hm.Hits, hm.Errors4xx, hm.Errors5xx)
	}

	// Without heatmap=1 the answer is as before; a bad value is 400.
	var plain map[string]any
	getJSON(t, f.Root+"api/durations/"+seg("GET /heat")+"?precision=5&last=3", &plain)
	if _, ok := plain["heatmap"]; ok {
		t.Error("a heatmap without heatmap=1")
	}
	if r := dashtest.Get(t, f.Root+"api/durations/"+seg("GET /heat")+"?precision=5&heatmap=yes"); r.Status != 400 {
		t.Errorf("heatmap=yes: status %d, want 400", r.Status)
	}
}
