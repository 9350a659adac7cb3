package fromstore

import (
	"math"
	"sync"
	"time"

	"github.com/pulse-dev/pulse/forecast"
)

// memory is what a Scanner keeps of its scans of one precision, so that a
// settled bucket reads the same on every scan and an incident already
// reported keeps its start. A fit sees a window that slides by a bucket
// at each scan, and its parameters move with it: without the memory a
// settled bucket's score would move a little each time, and an incident
// could begin a bucket earlier or later from one scan to the next.
type memory struct {
	mu     sync.Mutex
	series map[string]*seen
	// pending are the incident records a write to Redis failed for, by
	// ID: sent again with the next scan's, so none is lost to an outage.
	pending map[string]Record
	// recording is held through a scan's record, so that two scans at
	// once do not both make a record of one new incident.
	recording sync.Mutex
}

// seen is one series' settled buckets and incidents.
type seen struct {
	scores    map[int64]float64 // a settled bucket's start → its score when first judged settled
	unsaved   map[int64]bool    // kept scores not yet in Redis (with Scanner.Keep): sent again
	asked     bool              // Redis was asked for its scores (with Scanner.Keep)
	incidents []forecast.Incident
}

// seenOf is name's seen, made if new; m.mu must be held.
func (m *memory) seenOf(name string) *seen {
	if m.series == nil {
		m.series = make(map[string]*seen)
	}
	s := m.series[name]
	if s == nil {
		s = &seen{scores: make(map[int64]float64), unsaved: make(map[int64]bool)}
		m.series[name] = s
	}
	return s
}

// keep makes fd agree with what earlier scans saw of it: the scores of
// buckets settled by settledBy, and the starts of the incidents reported
// before. It forgets what has left the window.
func (m *memory) keep(name string, fd *forecast.Fitted, settledBy time.Time) {
	if fd == nil || len(fd.History) == 0 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.seenOf(name)
	from := fd.History[0].Time
	for b := range s.scores {
		if b < from.Unix() {
			delete(s.scores, b)
			delete(s.unsaved, b)
		}
	}
	byBucket := make(map[int64]float64, len(fd.History))
	for i := range fd.History {
		pt := &fd.History[i]
		if pt.Time.After(settledBy) {
			continue
		}
		if old, ok := s.scores[pt.Time.Unix()]; ok {
			pt.Score = old // a bucket in the warm-up of this window too
		} else if !math.IsNaN(pt.Score) {
			s.scores[pt.Time.Unix()] = pt.Score
		} else {
			continue
		}
		byBucket[pt.Time.Unix()] = pt.Score
	}
	rescore(fd, byBucket)
	s.incidents = sameStarts(fd.Incidents, s.incidents, from)
}

// rescore gives the flags and incidents of fd the scores kept.
func rescore(fd *forecast.Fitted, scores map[int64]float64) {
	for i := range fd.Flags {
		if v, ok := scores[fd.Flags[i].Bucket.Unix()]; ok {
			fd.Flags[i].Score = v
		}
	}
	for i := range fd.Incidents {
		in := &fd.Incidents[i]
		if v, ok := scores[in.Peak.Bucket.Unix()]; ok {
			in.Peak.Score, in.Score = v, v
		}
	}
}

// sameStarts gives each incident of now that overlaps one reported
// before, on the same side, that one's start, and returns the incidents
// to remember: those of now, and those before that still end in the
// window.
func sameStarts(now, before []forecast.Incident, from time.Time) []forecast.Incident {
	keep := make([]forecast.Incident, 0, len(now)+len(before))
	for i := range now {
		for _, b := range before {
			if b.Direction == now[i].Direction && overlap(b, now[i]) && b.Start.Before(now[i].Start) {
				now[i].Start = b.Start
				break
			}
		}
		keep = append(keep, now[i])
	}
	for _, b := range before {
		if !b.End.Before(from) && !covered(b, now) {
			keep = append(keep, b)
		}
	}
	return keep
}

func covered(b forecast.Incident, now []forecast.Incident) bool {
	for _, n := range now {
		if n.Direction == b.Direction && overlap(b, n) {
			return true
		}
	}
	return false
}
