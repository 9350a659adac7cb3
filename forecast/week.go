package forecast

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"time"
)

// WeekHours is the number of phases of a Week: the hours of a week.
const WeekHours = 168

// Week is a count series' shape over the week, hour by hour, kept beyond
// the window Pulse holds: 120 buckets at 1 h are five days, and a Saturday
// night has another shape from a Tuesday night, not only another level.
// It is updated online, one closed hour at a time (Observe, Fold), so it
// costs a few hundred bytes a series however long it runs, and is stored
// beside the series (MarshalBinary) so that it survives restarts and every
// instance shares it.
//
// Given as Context.Week, a ready Week lends a count series at 1 h how
// each hour of each weekday departs from that hour's mean over the week,
// in place of the day-of-week factor of the 1 d series, which scales
// every hour of a day alike. The shape of the day stays the window's
// own, whose five days cannot tie it to the week.
//
// The zero value is an empty Week: it folds in the hours from the first
// one it sees.
type Week struct {
	// Next is the start of the first hour not yet folded in (unix
	// seconds); 0 before the first.
	Next int64
	// Level is the mean hits per hour, the season taken out, following
	// the series over about a week.
	Level float64
	// Shape is each hour's hits as a share of Level, over the last few
	// weeks (hour 0 is Thursday 00:00 UTC, as the Unix epoch's week).
	Shape [WeekHours]float32
	// Seen counts the hours folded into each phase, up to 255.
	Seen  [WeekHours]uint8
	hours uint32 // folded in since the start, up to a week: the level's warm-up
}

const (
	weekReady   = 2               // hours seen per phase before a Week lends its shape
	weekLevelA  = 1.0 / WeekHours // the level's smoothing, once warm: a week
	weekShapeA  = 0.25            // a phase's smoothing, once seen 4 times: about four weeks
	weekClip    = 3.0             // an hour further than this factor from its expectation counts as this far
	weekVersion = 1               // of the binary encoding
	weekSize    = 1 + 8 + 8 + 4 + WeekHours*(4+1)
)

// Ready reports whether every hour of the week has been seen twice: a
// Week lends its shape only then.
func (w *Week) Ready() bool {
	if w == nil {
		return false
	}
	for _, n := range w.Seen {
		if n < weekReady {
			return false
		}
	}
	return true
}

// Observe folds in the hits of the hour starting at start. Hours already
// folded in, and NaN hits (unknown), are ignored; so is an hour that does
// not start on the hour.
func (w *Week) Observe(start time.Time, hits float64) {
	u := start.Unix()
	if u%3600 != 0 || (w.Next != 0 && u < w.Next) || math.IsNaN(hits) || hits < 0 {
		return
	}
	w.Next = u + 3600
	h := phase(start, time.Hour, WeekHours)
	mean := w.shapeMean()
	if w.hours < WeekHours {
		w.hours++
	}
	// The level: the hour with its season taken out, once the season is
	// seen, clipped so that one burst or outage moves it little.
	z := hits
	if w.Seen[h] > 0 && mean > 0 && w.Shape[h] > 0 {
		z = hits / (float64(w.Shape[h]) / mean)
	}
	if w.hours > 24 && w.Level > 0 {
		z = math.Min(math.Max(z, w.Level/weekClip), w.Level*weekClip)
	}
	w.Level += math.Max(weekLevelA, 1/float64(w.hours)) * (z - w.Level)
	if w.Level <= 0 {
		return // nothing seen yet: no share to take
	}
	x := hits / w.Level
	if w.Seen[h] >= weekReady {
		s := float64(w.Shape[h])
		x = math.Min(math.Max(x, s/weekClip), math.Max(s, 1e-3)*weekClip)
	}
	a := math.Max(weekShapeA, 1/float64(int(w.Seen[h])+1))
	w.Shape[h] = float32(float64(w.Shape[h]) + a*(x-float64(w.Shape[h])))
	if w.Seen[h] < math.MaxUint8 {
		w.Seen[h]++
	}
}

// Fold observes every bucket of the 1 h series s not folded in yet, and
// returns how many it folded. A series at another step is an error.
func (w *Week) Fold(s Series) (int, error) {
	if s.Step != time.Hour {
		return 0, fmt.Errorf("forecast: a week folds in 1 h buckets, not %v", s.Step)
	}
	n := 0
	for i, v := range s.Values {
		before := w.Next
		w.Observe(s.Time(i), v)
		if w.Next != before {
			n++
		}
	}
	return n, nil
}

func (w *Week) shapeMean() float64 {
	sum, k := 0.0, 0
	for h, s := range w.Shape {
		if w.Seen[h] > 0 {
			sum += float64(s)
			k++
		}
	}
	if k == 0 {
		return 0
	}
	return sum / float64(k)
}

// profile is each hour of the week's share of the mean of that hour of
// the day over the seven days, or nil when w is not ready. The shape of
// the day is the window's own (or the 1 h series'), which follows the
// seasons of the year within days; what the week adds is how each day
// departs from it, which a window of a few days cannot see.
func (w *Week) profile() []float64 {
	if !w.Ready() {
		return nil
	}
	p := make([]float64, WeekHours)
	for hod := range 24 {
		mean := 0.0
		for d := range 7 {
			mean += float64(w.Shape[hod+24*d]) / 7
		}
		for d := range 7 {
			h := hod + 24*d
			p[h] = 1
			if mean > 0 {
				p[h] = math.Max(float64(w.Shape[h])/mean, 0.01)
			}
		}
	}
	return p
}

// MarshalBinary encodes w in a fixed 861 bytes.
func (w *Week) MarshalBinary() ([]byte, error) {
	b := make([]byte, 0, weekSize)
	b = append(b, weekVersion)
	b = binary.LittleEndian.AppendUint64(b, uint64(w.Next))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(w.Level))
	b = binary.LittleEndian.AppendUint32(b, w.hours)
	for _, s := range w.Shape {
		b = binary.LittleEndian.AppendUint32(b, math.Float32bits(s))
	}
	return append(b, w.Seen[:]...), nil
}

// ErrWeekEncoding is returned by UnmarshalBinary for bytes that are not
// a Week's encoding.
var ErrWeekEncoding = errors.New("forecast: not a week's encoding")

// UnmarshalBinary decodes what MarshalBinary encoded.
func (w *Week) UnmarshalBinary(b []byte) error {
	if len(b) != weekSize || b[0] != weekVersion {
		return fmt.Errorf("%w: %d bytes", ErrWeekEncoding, len(b))
	}
	var v Week
	v.Next = int64(binary.LittleEndian.Uint64(b[1:]))
	v.Level = math.Float64frombits(binary.LittleEndian.Uint64(b[9:]))
	v.hours = binary.LittleEndian.Uint32(b[17:])
	off := 21
	for h := range v.Shape {
		v.Shape[h] = math.Float32frombits(binary.LittleEndian.Uint32(b[off+4*h:]))
	}
	copy(v.Seen[:], b[off+4*WeekHours:])
	if math.IsNaN(v.Level) || v.Level < 0 || v.hours > WeekHours {
		return fmt.Errorf("%w: level %v, %d hours", ErrWeekEncoding, v.Level, v.hours)
	}
	*w = v
	return nil
}
