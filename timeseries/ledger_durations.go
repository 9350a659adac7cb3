package timeseries

import (
	"math/bits"
	"time"

	"github.com/pulse-dev/pulse/timeseries/internal/latency"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// latDelta is the durations one batch adds to one lat key (one series,
// precision and bucket): the bins and the count n by name, merged into
// the hash's by the flush script, the sum by HINCRBY, min and max kept if
// smaller or larger, and the key's expiry.
type latDelta struct {
	Key    string   `json:"key"`
	Expire int64    `json:"expire"` // EXPIREAT, unix seconds
	Fields []string `json:"fields"`
	Counts []int64  `json:"counts"`
	Sum    int64    `json:"sum"`
	Min    int64    `json:"min"`
	Max    int64    `json:"max"`
}

// count is the number of durations d adds.
func (d latDelta) count() int64 {
	for i, f := range d.Fields {
		if f == latency.FieldCount {
			return d.Counts[i]
		}
	}
	return 0
}

// latWeight is what one lat delta counts against maxBatchDeltas: it
// carries a few dozen bins where a count delta carries one number.
const latWeight = 16

// durationSource is a pending histogram a batch took for one precision, so a
// batch that surely did not land can give it back.
type durationSource struct {
	key pendingKey // with the one precision bit
	h   *latency.Histogram
}

// addDurations adds the durations of one stripe slot, recorded at second sec,
// to series id's pending histogram of sec's step.
func (l *ledger) addDurations(id int32, sec int64, bins []uint32, sum int64, lo, hi time.Duration) {
	k := pendingKey{counter: id, sec: series.BucketStart(sec, int(l.durationStep)), due: l.allDue}
	h := l.pendingDurations[k]
	if h == nil {
		h = latency.NewHistogram(l.durationMapping)
		l.pendingDurations[k] = h
		l.waiting = nil
	}
	_ = h.AddSlots(bins, sum, lo, hi) // bins of l.durationMapping
	_ = l.totalOf(id).AddSlots(bins, sum, lo, hi)
}

// addDuration adds one duration: the write-through path.
func (l *ledger) addDuration(id int32, sec int64, d time.Duration) {
	k := pendingKey{counter: id, sec: series.BucketStart(sec, int(l.durationStep)), due: l.allDue}
	h := l.pendingDurations[k]
	if h == nil {
		h = latency.NewHistogram(l.durationMapping)
		l.pendingDurations[k] = h
		l.waiting = nil
	}
	h.Add(d)
	l.totalOf(id).Add(d)
}

// giveBackDurations merges h into the pending histogram of k. Pending owns its
// histograms, and h may be shared by a batch's sources: a copy goes in.
func (l *ledger) giveBackDurations(k pendingKey, h *latency.Histogram) {
	if p := l.pendingDurations[k]; p != nil {
		_ = p.Merge(h)
		return
	}
	l.pendingDurations[k] = h.Clone()
}

// takeDurations moves the pending durations it can into the round's batches,
// as takePending does for hits.
func (r *roundBuilder) takeDurations() {
	l := r.l
	var partial []durationSource
	for k, h := range l.pendingDurations {
		if r.saturated() {
			break
		}
		l.visited++
		left := r.takeDurationsEntry(k, h)
		if left == k.due {
			continue
		}
		delete(l.pendingDurations, k)
		if left != 0 {
			partial = append(partial, durationSource{pendingKey{counter: k.counter, sec: k.sec, due: left}, h})
		}
	}
	for _, p := range partial {
		l.giveBackDurations(p.key, p.h)
	}
}

// takeDurationsEntry adds the histogram of k to the batch of each precision's
// group that can take it, and returns the precision bits still due.
func (r *roundBuilder) takeDurationsEntry(k pendingKey, h *latency.Histogram) (left uint32) {
	l := r.l
	s := &l.series[k.counter]
	left = k.due
	for i, prec := range l.schema.Precisions {
		bit := uint32(1) << i
		if k.due&bit == 0 {
			continue
		}
		bl := r.batchFor(s.groups[i])
		if bl == nil {
			continue
		}
		bucket := series.BucketStart(k.sec, prec)
		dk := deltaKey{counter: k.counter, prec: int8(i), bucket: bucket}
		if !bl.addDurations(dk, s.lat[i], series.LatExpireAt(bucket, prec), h) {
			r.leftover = true
			r.shutMarker(bl.b.Marker)
			continue
		}
		b := bl.b
		b.Newest = max(b.Newest, k.sec)
		b.durationSrc = append(b.durationSrc, durationSource{pendingKey{counter: k.counter, sec: k.sec, due: bit}, h})
		left &^= bit
	}
	return left
}

// addDurations merges h into the batch's delta of dk, unless that needs a new
// delta and the batch is full.
func (bl *building) addDurations(dk deltaKey, prefix string, expire int64, h *latency.Histogram) bool {
	j, ok := bl.lat[dk]
	if !ok {
		if bl.full(latWeight) {
			return false
		}
		j = len(bl.durationHists)
		if bl.lat == nil {
			bl.lat = map[deltaKey]int{}
		}
		bl.lat[dk] = j
		bl.durationHists = append(bl.durationHists, latency.NewHistogram(h.Mapping()))
		bl.b.Lat = append(bl.b.Lat, latDelta{Key: prefix + itoa(dk.bucket), Expire: expire})
	}
	_ = bl.durationHists[j].Merge(h) // one mapping per recorder
	return true
}

// finish writes the merged histograms into the batch's lat deltas, once
// the round has taken all it can: from then on the batch is sent as it
// is, however often.
func (bl *building) finish() {
	for j, h := range bl.durationHists {
		d := &bl.b.Lat[j]
		for _, f := range h.Fields() {
			switch {
			case f.Name == latency.FieldSum:
				d.Sum = f.Value
			case f.Op == latency.Lower:
				d.Min = f.Value
			case f.Op == latency.Raise:
				d.Max = f.Value
			default:
				d.Fields = append(d.Fields, f.Name)
				d.Counts = append(d.Counts, f.Value)
			}
		}
		bl.b.durationsN += int64(h.Count())
	}
	bl.durationHists = nil
}

// ageDurations drops pending durations older than cutoff.
func (l *ledger) ageDurations(cutoff int64) {
	for k, h := range l.pendingDurations {
		if k.sec < cutoff {
			l.droppedDurations += int64(h.Count()) * int64(bits.OnesCount32(k.due))
			delete(l.pendingDurations, k)
		}
	}
}
