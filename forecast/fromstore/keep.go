package fromstore

import (
	"cmp"
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/internal/redisconn"
)

// shareScores makes the scores of the settled buckets of fits the ones
// Redis keeps: a bucket new to this Scanner, or kept while Redis failed,
// is sent, and the score kept (the first writer's) is remembered. While
// Redis fails the Scanner's own scores stand, and are sent again.
func (sc *Scanner) shareScores(ctx context.Context, p int, mem *memory, fits map[string]Result, settledBy time.Time) error {
	todo := map[string]map[int64]float64{}
	oldest := settledBy.Unix()
	mem.mu.Lock()
	for name, r := range fits {
		fd := r.Fitted
		if fd == nil || len(fd.History) == 0 {
			continue
		}
		oldest = min(oldest, fd.History[0].Time.Unix())
		s := mem.seenOf(name)
		first := !s.asked // a restarted Scanner reads the scores of its warm-up too
		s.asked = true
		for _, pt := range fd.History {
			b := pt.Time.Unix()
			if pt.Time.After(settledBy) {
				break
			}
			v, ok := s.scores[b]
			switch {
			case ok && !s.unsaved[b]:
				continue
			case !ok && math.IsNaN(pt.Score) && !first:
				continue
			case !ok:
				v = pt.Score
			}
			if todo[name] == nil {
				todo[name] = map[int64]float64{}
			}
			todo[name][b] = v
		}
	}
	mem.mu.Unlock()
	kept, err := keepScores(ctx, sc.router(), sc.Store.Schema(), p, oldest, todo)
	mem.mu.Lock()
	defer mem.mu.Unlock()
	for name, byBucket := range todo {
		s := mem.seenOf(name)
		for b, v := range byBucket {
			if k, ok := kept[name][b]; ok {
				s.scores[b] = k
				delete(s.unsaved, b)
				continue
			}
			if _, ok := s.scores[b]; !ok && !math.IsNaN(v) {
				s.scores[b] = v
				s.unsaved[b] = true
			}
		}
	}
	return err
}

// record writes the incidents of fits to Redis as events, merged with
// those already kept: an event that shares a series with a kept record
// on the same side, at the same time, is that record; a break to the
// other side within a kept record's recovery is its return to normal,
// not an incident; an incident whose peak scores under the band is not
// one. Records whose write fails are kept and sent with the next scan's.
func (sc *Scanner) record(ctx context.Context, p int, cfg forecast.Config, mem *memory, fits map[string]Result, settledBy time.Time) error {
	mem.recording.Lock()
	defer mem.recording.Unlock()
	step := time.Duration(p) * time.Second
	band := cmp.Or(cfg.Band, forecast.DefaultBandFor(step))
	from := settledBy.Add(-Window * step)
	var incs []forecast.Incident
	fitted := map[string]bool{}
	for name, r := range fits {
		if r.Fitted == nil {
			continue
		}
		fitted[name] = true
		for _, in := range r.Fitted.Incidents {
			if math.Abs(in.Score) < band || in.Start.After(settledBy) {
				continue
			}
			if in.End.After(settledBy) {
				in.End = settledBy
			}
			incs = append(incs, in)
		}
	}
	r := sc.router()
	kept, err := readIncidents(ctx, r, sc.Store.Schema(), p, from.Unix(), math.MaxInt64)
	if err != nil {
		return sc.keepPending(mem, nil, err)
	}
	changed := map[string]Record{}
	matched := map[string]bool{}
	for _, ev := range Group(incs) {
		rec := sc.recordOf(ev, p)
		i := slices.IndexFunc(kept, func(k Record) bool { return sameEvent(k, rec, step) })
		switch {
		case i >= 0:
			rec = merge(kept[i], rec)
			matched[rec.ID()] = true
			if rec.encode() == kept[i].encode() {
				continue
			}
			kept[i] = rec
		case slices.ContainsFunc(kept, func(k Record) bool { return recovery(k, rec, step) }):
			continue
		default:
			kept = append(kept, rec)
			matched[rec.ID()] = true
		}
		changed[rec.ID()] = rec
	}
	quiet := settledBy.Add(-time.Duration(forecast.DefaultCloseAfter) * step).Unix()
	for _, k := range kept {
		if k.Open && !matched[k.ID()] && fitted[k.Series] && k.End < quiet {
			k.Open = false // its fits no longer see it: it is over
			changed[k.ID()] = k
		}
	}
	return sc.keepPending(mem, changed, sc.writeRecords(ctx, r, p, mem, changed))
}

// keepPending adds the records a failed write did not keep to mem's
// pending ones, and returns err.
func (sc *Scanner) keepPending(mem *memory, failed map[string]Record, err error) error {
	mem.mu.Lock()
	defer mem.mu.Unlock()
	for id, rec := range failed {
		if mem.pending == nil {
			mem.pending = map[string]Record{}
		}
		if old, ok := mem.pending[id]; ok {
			rec = merge(old, rec)
		}
		mem.pending[id] = rec
	}
	return err
}

// writeRecords sends the changed records and those pending from failed
// writes, one script call each, in one round trip per node. Those
// written leave changed; those not stay in it for keepPending.
func (sc *Scanner) writeRecords(ctx context.Context, r *redisconn.Router, p int, mem *memory, changed map[string]Record) error {
	mem.mu.Lock()
	for id, rec := range mem.pending {
		if c, ok := changed[id]; ok {
			rec = merge(rec, c)
		}
		changed[id] = rec
	}
	mem.pending = nil
	mem.mu.Unlock()
	if len(changed) == 0 {
		return nil
	}
	records, ends := IncidentKeys(sc.Store.Schema(), p)
	ids := make([]string, 0, len(changed))
	cmds := make([]redisconn.Cmd, 0, len(changed))
	for id, rec := range changed {
		ids = append(ids, id)
		cmds = append(cmds, recordScript.Cmd([]string{records, ends}, id, rec.encode()))
	}
	var errs []error
	for i, rep := range r.DoContext(ctx, cmds, redisconn.Options{Timeout: redisconn.ReadTimeout(ctx)}) {
		if rep.Err != nil {
			errs = append(errs, rep.Err)
			continue
		}
		delete(changed, ids[i])
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	return nil
}

// recordOf is the record of an event.
func (sc *Scanner) recordOf(ev Event, p int) Record {
	rec := Record{App: sc.App, Series: ev.Series, Related: []string{}, Precision: p, Kind: ev.Kind, Direction: ev.Direction,
		Start: ev.Start.Unix(), End: ev.End.Unix(), Open: ev.Open, Peak: peakOf(ev.Peak)}
	for _, r := range ev.Related {
		if !slices.Contains(rec.Related, r.Series) && r.Series != rec.Series {
			rec.Related = append(rec.Related, r.Series)
		}
		if math.Abs(r.Score) > math.Abs(rec.Peak.Score) && r.Series == rec.Series {
			rec.Peak = peakOf(r.Peak)
		}
		rec.End = max(rec.End, r.End.Unix())
		rec.Open = rec.Open || r.Open
	}
	return rec
}

// peakOf is a flag as a record keeps it: to six significant digits, as
// scores are kept, which the script's JSON carries through unchanged, so
// a record read back compares equal to the one written.
func peakOf(f forecast.Flag) Peak {
	return Peak{Bucket: f.Bucket.Unix(), Observed: round6(f.Observed), Expected: round6(f.Expected),
		Lo95: round6(f.Band.Lo), Hi95: round6(f.Band.Hi), Score: round6(f.Score)}
}

func round6(x float64) float64 {
	v, err := strconv.ParseFloat(formatScore(x), 64)
	if err != nil {
		return x
	}
	return v
}

// merge is what recordScript keeps of old and new, done here too so that
// a Scanner writes only what changes a record.
func merge(old, new Record) Record {
	out := new
	out.Start, out.Series, out.App = old.Start, old.Series, cmp.Or(old.App, new.App)
	if old.End > new.End {
		out.End, out.Open = old.End, old.Open
	}
	if math.Abs(old.Peak.Score) > math.Abs(new.Peak.Score) {
		out.Peak = old.Peak
	}
	if old.Kind == forecast.LevelShift {
		out.Kind = old.Kind
	}
	out.Related = []string{}
	for _, s := range slices.Concat(old.Related, []string{new.Series}, new.Related) {
		if s != out.Series && !slices.Contains(out.Related, s) {
			out.Related = append(out.Related, s)
		}
	}
	return out
}

// shares reports whether two records have a series in common.
func shares(a, b Record) bool {
	return a.Has(b.Series) || slices.ContainsFunc(b.Related, a.Has)
}

// sameEvent reports whether rec is the kept record k seen again: on the
// same side, sharing a series, overlapping in time within CloseAfter
// buckets.
func sameEvent(k, rec Record, step time.Duration) bool {
	slack := int64(forecast.DefaultCloseAfter) * int64(step/time.Second)
	return k.Direction == rec.Direction && shares(k, rec) && rec.Start <= k.End+slack && k.Start <= rec.End+slack
}

// recovery reports whether rec is the return to normal after k: a break
// of a series of k to the other side, from k's start to as long after
// its end as k lasted, and a few buckets more.
func recovery(k, rec Record, step time.Duration) bool {
	p := int64(step / time.Second)
	return k.Direction != rec.Direction && shares(k, rec) && rec.Start >= k.Start && rec.Start <= 2*k.End-k.Start+3*p
}
