package dashboard

import (
	"context"
	"sync"

	"github.com/pulse-dev/pulse/timeseries"
)

// windowMemo keeps the counts of every series over the window last read
// at one precision, so that the next read of that window, moved on by a
// bucket or a few, reads again only the buckets that may have changed
// since: those not settled when the last read began (closed for less
// than settle, the time a recorder's hits take to land in the normal
// course of things), and the new ones.
//
// It reads every bucket again (a full read) when it holds nothing (at
// start, after any failed read), when the clock went back or jumped past
// the window, and once a window's span after its last full read, so a
// write that lands long after its bucket closed (a recorder catching up
// after an outage the dashboard did not see) shows within that span. A
// series new to the known set is read in full; one gone from it is
// dropped. Each kept series is checked by its oldest bucket the memo
// holds, read again with the new ones: gone (the cleaner trimmed into
// the window, the series was deleted and written again) or changed, the
// series is read again in full.
type windowMemo struct {
	settle   int64 // seconds
	mu       sync.Mutex
	kept     bool  // false: nothing held
	from, to int64 // the window held
	readAt   int64 // the store's clock as the last read began
	builtAt  int64 // and as the last full read began
	names    []string
	series   []*memoSeries // by names
}

// memoSeries is one series' window: per bucket from the memo's from, its
// count and whether its field is there.
type memoSeries struct {
	counts  []int64
	present []bool
}

// refresh brings m to the window from..to of names (sorted, unique), now
// being the store's clock. On error m is left empty, for the next read
// to start afresh.
func (m *windowMemo) refresh(ctx context.Context, store *timeseries.Store, p int, names []string, from, to, now int64) error {
	width := int((to-from)/int64(p)) + 1
	shift, recent, ok := m.plan(p, from, to, now, width)
	var old []*memoSeries
	if ok {
		old = m.matched(names)
	} else {
		old, m.builtAt = make([]*memoSeries, len(names)), now
	}
	m.kept = false
	full := bucketTimes(p, from, to)
	queries, checks := queries(names, old, p, from, full, bucketTimes(p, recent, to), shift)
	got, err := store.BucketsMany(ctx, p, queries)
	if err != nil {
		return err
	}
	next := make([]*memoSeries, len(names))
	var again []timeseries.BucketQuery
	var where []int
	for i, q := range queries {
		if next[i] = merge(old[i], q, checks[i], got[i], p, from, shift); next[i] == nil {
			again = append(again, timeseries.BucketQuery{Name: q.Name, Times: full})
			where = append(where, i)
		}
	}
	if len(again) > 0 {
		if got, err = store.BucketsMany(ctx, p, again); err != nil {
			return err
		}
		for k, i := range where {
			next[i] = &memoSeries{counts: got[k].Counts, present: got[k].Present}
		}
	}
	m.kept, m.names, m.series = true, names, next
	m.from, m.to, m.readAt = from, to, now
	return nil
}

// matched is, for each of names, the series m holds of that name or nil.
// Both lists are sorted.
func (m *windowMemo) matched(names []string) []*memoSeries {
	out := make([]*memoSeries, len(names))
	j := 0
	for i, name := range names {
		for j < len(m.names) && m.names[j] < name {
			j++
		}
		if j < len(m.names) && m.names[j] == name {
			out[i] = m.series[j]
		}
	}
	return out
}

// plan says whether the window from..to may be read on from what m holds:
// by how many buckets it moved on, and the first bucket to read again.
func (m *windowMemo) plan(p int, from, to, now int64, width int) (shift int, recent int64, ok bool) {
	pp := int64(p)
	if !m.kept || now < m.readAt || now-m.builtAt >= int64(width)*pp ||
		to < m.to || (to-m.to)%pp != 0 || int((m.to-m.from)/pp)+1 != width {
		return 0, from, false
	}
	shift = int((to - m.to) / pp)
	// A bucket b had settled as the last read began if b+p+settle <= readAt.
	recent = timeseries.BucketStart(m.readAt-pp-m.settle, p) + pp
	if shift >= width || recent <= from {
		return 0, from, false
	}
	return shift, recent, true
}

// queries lists what to read of each name: every bucket of a series not
// held (old[i] nil); for one held, its oldest bucket there (the check)
// and the recent ones. checks[i] is where the check's bucket is in the
// window, -1 when there is none.
func queries(names []string, old []*memoSeries, p int, from int64, full, recent []int64, shift int) ([]timeseries.BucketQuery, []int) {
	queries := make([]timeseries.BucketQuery, len(names))
	checks := make([]int, len(names))
	withCheck := make([]int64, 0, len(names)*(len(recent)+1))
	for i, name := range names {
		checks[i] = -1
		ms := old[i]
		if ms == nil {
			queries[i] = timeseries.BucketQuery{Name: name, Times: full}
			continue
		}
		oldest := ms.oldestFrom(shift, len(full)-len(recent))
		if oldest < 0 {
			queries[i] = timeseries.BucketQuery{Name: name, Times: recent}
			continue
		}
		start := len(withCheck)
		withCheck = append(withCheck, from+int64(oldest)*int64(p))
		withCheck = append(withCheck, recent...)
		queries[i] = timeseries.BucketQuery{Name: name, Times: withCheck[start:len(withCheck):len(withCheck)]}
		checks[i] = oldest
	}
	return queries, checks
}

// oldestFrom is the index, in the window moved on by shift, of the oldest
// bucket ms holds that is present and settled (before index settled), or
// -1.
func (ms *memoSeries) oldestFrom(shift, settled int) int {
	for j := shift; j < len(ms.present) && j-shift < settled; j++ {
		if ms.present[j] {
			return j - shift
		}
	}
	return -1
}

// merge is the series of q's answer got: read in full (ms nil), or ms
// moved on by shift with the recent buckets read again. It is nil when
// the check failed: the series must be read in full.
func merge(ms *memoSeries, q timeseries.BucketQuery, check int, got timeseries.Buckets, p int, from int64, shift int) *memoSeries {
	if ms == nil {
		return &memoSeries{counts: got.Counts, present: got.Present}
	}
	ms.advance(shift)
	times, counts, present := q.Times, got.Counts, got.Present
	if check >= 0 {
		if !present[0] || counts[0] != ms.counts[check] || !ms.present[check] {
			return nil
		}
		times, counts, present = times[1:], counts[1:], present[1:]
	}
	for k, t := range times {
		j := int((t - from) / int64(p))
		ms.counts[j], ms.present[j] = counts[k], present[k]
	}
	return ms
}

// advance moves ms's window on by shift buckets: the oldest leave it, the
// new ones start absent.
func (ms *memoSeries) advance(shift int) {
	if shift == 0 {
		return
	}
	n := copy(ms.counts, ms.counts[shift:])
	copy(ms.present, ms.present[shift:])
	clear(ms.counts[n:])
	clear(ms.present[n:])
}

// bucketTimes is every bucket start from from to to at precision p.
func bucketTimes(p int, from, to int64) []int64 {
	var times []int64
	for t := from; t <= to; t += int64(p) {
		times = append(times, t)
	}
	return times
}
