package timeseries

import (
	"cmp"
	"slices"
)

// abandon takes back a batch Redis fenced: its marker now records the
// seq as abandoned, so no send of the batch, delayed or resent, can ever
// apply, and its writes may go into new batches with new seqs. A batch
// made from pending goes back there, whatever its earlier sends. A
// spilled one has no pending entries: its contents become batches of
// their own per slot, under slotMarker's markers and fresh seqs, queued
// as spilled batches are.
func (l *ledger) abandon(b *batch, slotMarker func(key string) string) {
	if l.outstanding[b.Marker] == b {
		delete(l.outstanding, b.Marker)
	}
	if b.file == "" {
		for k, n := range b.src {
			l.pending[k] += n
		}
		for _, s := range b.durationSrc {
			l.giveBackDurations(s.key, s.h)
		}
		l.waiting = nil // back under other markers, maybe
		return
	}
	parts := l.splitBySlot(b, slotMarker)
	for _, p := range parts {
		l.queued[p.Marker] = append(l.queued[p.Marker], p)
		slices.SortFunc(l.queued[p.Marker], func(a, b *batch) int { return cmp.Compare(a.Seq, b.Seq) })
	}
	l.spillLeft[b.file] += len(parts) - 1
}

// splitBySlot makes one batch per marker slotMarker gives b's keys, each
// with a fresh seq and b's spill file.
func (l *ledger) splitBySlot(b *batch, slotMarker func(key string) string) []*batch {
	byMarker := map[string]*batch{}
	var parts []*batch
	part := func(key string) *batch {
		m := slotMarker(key)
		p, ok := byMarker[m]
		if !ok {
			l.seq++
			p = &batch{Marker: m, Seq: l.seq, Newest: b.Newest, file: b.file}
			byMarker[m] = p
			parts = append(parts, p)
		}
		return p
	}
	for i, k := range b.Keys {
		p := part(k)
		p.Keys = append(p.Keys, k)
		p.Fields = append(p.Fields, b.Fields[i])
		p.Deltas = append(p.Deltas, b.Deltas[i])
		p.Members = append(p.Members, b.Members[i])
		p.incr += b.Deltas[i]
	}
	for _, d := range b.Lat {
		p := part(d.Key)
		p.Lat = append(p.Lat, d)
		p.durationsN += d.count()
	}
	return parts
}
