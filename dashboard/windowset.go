package dashboard

import (
	"cmp"
	"slices"

	"github.com/pulse-dev/pulse/timeseries"
)

// windowSet is what one read of every series over a window found: what
// the overview and the routes answer from. It is shared by the requests
// that joined the read: nothing in it may be changed.
type windowSet struct {
	names  []string      // the series kept at the precision, sorted
	sums   []int64       // by names: each one's count over the window
	ranked []seriesTotal // the totals, busiest first, then by name
	// charts are the zero-filled windows of the series the overview may
	// chart: the busiest MaxOverview it would, and the pins listed.
	charts map[string][]timeseries.Sample
}

// windowSet ranks what m holds and charts the series an overview may
// show: the busiest, and pins.
func (m *windowMemo) windowSet(p int, pins []string) *windowSet {
	set := &windowSet{names: m.names, sums: make([]int64, len(m.names)), charts: map[string][]timeseries.Sample{}}
	order := make([]int32, len(m.names))
	for i, ms := range m.series {
		var sum int64
		for _, c := range ms.counts {
			sum += c
		}
		set.sums[i], order[i] = sum, int32(i)
	}
	// Busiest first, then by name: names are sorted, so by index.
	slices.SortFunc(order, func(a, b int32) int { return cmp.Or(cmp.Compare(set.sums[b], set.sums[a]), cmp.Compare(a, b)) })
	set.ranked = make([]seriesTotal, len(order))
	for k, i := range order {
		set.ranked[k] = seriesTotal{Name: set.names[i], Total: set.sums[i]}
	}
	chart := func(i int) {
		counts := m.series[i].counts
		samples := make([]timeseries.Sample, len(counts))
		for j, c := range counts {
			samples[j] = timeseries.Sample{Time: m.from + int64(j)*int64(p), Count: c}
		}
		set.charts[set.names[i]] = samples
	}
	for _, i := range order {
		if len(set.charts) >= MaxOverview || set.sums[i] == 0 {
			break
		}
		if set.charted(set.names[i]) {
			chart(int(i))
		}
	}
	for _, name := range pins {
		if i, ok := slices.BinarySearch(set.names, name); ok && set.charts[name] == nil {
			chart(i)
		}
	}
	return set
}

// total is name's count over the window, and whether name is listed.
func (set *windowSet) total(name string) (int64, bool) {
	i, ok := slices.BinarySearch(set.names, name)
	if !ok {
		return 0, false
	}
	return set.sums[i], true
}

// listed reports whether name is a series of the window.
func (set *windowSet) listed(name string) bool {
	_, ok := set.total(name)
	return ok
}

// charted reports whether the overview charts name among the busiest. A
// route's status class series ("GET /posts/:id status:2xx") follow their
// route and the app's status classes closely, and a slow series
// ("slow:250ms GET /posts/:id") its series: charting them among the
// busiest would crowd out other series. They stay listed, and pinnable.
func (set *windowSet) charted(name string) bool {
	return !isClassOf(name, set.listed) && !isSlowOf(name, set.listed)
}
