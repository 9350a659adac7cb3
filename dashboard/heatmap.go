package dashboard

import (
	"net/http"
	"strconv"

	"github.com/pulse-dev/pulse/internal/seriesname"
	"github.com/pulse-dev/pulse/timeseries"
)

// heatEdges are the upper bounds, in milliseconds, of the heatmap's
// duration rows but the last: 1-2-5 steps, about three rows a decade,
// from under 1 ms to 10 s and over.
var heatEdges = []float64{1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10000}

// heatRow is one duration row of the heatmap: durations in [From, To)
// ms; the first row starts at 0, the last has no To.
type heatRow struct {
	Label string   `json:"label"`
	From  float64  `json:"from"`
	To    *float64 `json:"to,omitempty"`
}

// heatmap is the heatmap part of a durations answer: its rows, and per
// bucket of the answer (same order) the count of each row, the hits and
// the 4xx and 5xx answers of the series.
type heatmap struct {
	Rows      []heatRow  `json:"rows"`
	Counts    [][]uint64 `json:"counts"`
	Hits      []int64    `json:"hits"`
	Errors4xx []int64    `json:"errors_4xx"`
	Errors5xx []int64    `json:"errors_5xx"`
}

// rangeLabel names [lo, hi) ms, the unit once when both ends share it:
// "10–20 ms", "500 ms–1 s", "1–2 s".
func rangeLabel(lo, hi float64) string {
	num := func(v float64) string {
		if v >= 1000 {
			v /= 1000
		}
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	if (lo >= 1000) == (hi >= 1000) {
		return num(lo) + "–" + msLabel(hi)
	}
	return msLabel(lo) + "–" + msLabel(hi)
}

func msLabel(v float64) string {
	if v >= 1000 {
		return strconv.FormatFloat(v/1000, 'f', -1, 64) + " s"
	}
	return strconv.FormatFloat(v, 'f', -1, 64) + " ms"
}

// heatRows are the rows of every heatmap.
func heatRows() []heatRow {
	rows := []heatRow{{Label: "< " + msLabel(heatEdges[0]), To: &heatEdges[0]}}
	for i := 1; i < len(heatEdges); i++ {
		rows = append(rows, heatRow{Label: rangeLabel(heatEdges[i-1], heatEdges[i]),
			From: heatEdges[i-1], To: &heatEdges[i]})
	}
	last := heatEdges[len(heatEdges)-1]
	return append(rows, heatRow{Label: "≥ " + msLabel(last), From: last})
}

// heatRowOf is the row of a duration of v ms.
func heatRowOf(v float64) int {
	for i, e := range heatEdges {
		if v < e {
			return i
		}
	}
	return len(heatEdges)
}

// binRows maps every bin of m (Underflow, the tracked range, Overflow) to
// the row of its representative duration: a bin straddling a row's edge
// counts whole in one row, so rows are as sharp as the histogram's
// accuracy.
type binRows struct {
	m    *timeseries.DurationMapping
	lo   int
	rows []int
}

func newBinRows(m *timeseries.DurationMapping) binRows {
	lo, hi := m.Bins()
	br := binRows{m: m, lo: lo, rows: make([]int, hi-lo+1)}
	for i := lo; i <= hi; i++ {
		br.rows[i-lo] = heatRowOf(ms(m.Value(i)))
	}
	return br
}

// counts adds up h's bins per row.
func (br binRows) counts(h *timeseries.Histogram) []uint64 {
	out := make([]uint64, len(heatEdges)+1)
	if h.Count() == 0 {
		return out
	}
	out[heatRowOf(ms(br.m.Value(timeseries.UnderflowBin)))] += h.Bin(timeseries.UnderflowBin)
	out[len(out)-1] += h.Bin(timeseries.OverflowBin)
	for i, r := range br.rows {
		out[r] += h.Bin(br.lo + i)
	}
	return out
}

// wantsHeatmap reads heatmap=1 (or 0, the default).
func wantsHeatmap(r *http.Request) (bool, error) {
	switch r.URL.Query().Get("heatmap") {
	case "", "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, badRequest("heatmap is 1 or 0")
}

// classNames are the series read besides name for a heatmap: its 4xx and
// 5xx status class series.
func classNames(name string) []string {
	return []string{seriesname.WithClass(name, 400), seriesname.WithClass(name, 500)}
}

// newHeatmap builds the heatmap of d, whose buckets are those of the
// answer, with the counts of name and its class series from samples.
func newHeatmap(name string, d timeseries.Durations, samples map[string][]timeseries.Sample) *heatmap {
	byTime := func(n string) map[int64]int64 {
		out := map[int64]int64{}
		for _, s := range samples[n] {
			out[s.Time] += s.Count
		}
		return out
	}
	hits, classes := byTime(name), classNames(name)
	e4, e5 := byTime(classes[0]), byTime(classes[1])
	hm := &heatmap{Rows: heatRows(), Counts: [][]uint64{}, Hits: []int64{}, Errors4xx: []int64{}, Errors5xx: []int64{}}
	var br binRows
	if d.Window != nil {
		br = newBinRows(d.Window.Mapping())
	}
	for _, b := range d.Buckets {
		hm.Counts = append(hm.Counts, br.counts(b.Hist))
		hm.Hits = append(hm.Hits, hits[b.Start])
		hm.Errors4xx = append(hm.Errors4xx, e4[b.Start])
		hm.Errors5xx = append(hm.Errors5xx, e5[b.Start])
	}
	return hm
}
