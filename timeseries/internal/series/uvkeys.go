package series

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// VisitorKeyPrefix is the start of the keys holding one series' visitors
// at one precision, one HyperLogLog per bucket:
//
//	<prefix>uv:{<count key>}:<bucket start>
//
// It borrows the lat keys' hash tag (see LatKeyPrefix), so on Redis
// Cluster a series' buckets at one precision share a slot: one PFCOUNT
// over a window's keys reads their union, and they travel in the flush
// group of the series' hits. ok is false exactly when LatKeyPrefix's is.
func (s Keys) VisitorKeyPrefix(precision int, name string) (prefix string, ok bool) {
	l, ok := s.LatKeyPrefix(precision, name)
	if !ok {
		return "", false
	}
	// Swap the family word only: what follows it (tag and count key) is
	// what makes the slot.
	return s.Prefix + "uv:" + strings.TrimPrefix(l, s.Prefix+"lat:"), true
}

// VisitorKey is the HyperLogLog of one bucket of one series' visitors.
func (s Keys) VisitorKey(precision int, name string, bucket int64) (string, bool) {
	u, ok := s.VisitorKeyPrefix(precision, name)
	if !ok {
		return "", false
	}
	return u + strconv.FormatInt(bucket, 10), true
}

// DefaultVisitorPrecisions are the precisions visitors are kept at. Four
// of the six: a busy series fills every sketch to its dense size, and
// five precisions of 120 buckets would pass the 8 MiB budget of a series
// while four stay within it (timeseries' TestVisitorMemoryAtFullDepth
// measures it; docs/visitors.md has the figures). Left out: 5 s, where a
// bucket rarely holds the same person twice, and 5 h, between the hour
// and the day that are kept. 1 min stays: it is the dashboard's live view.
var DefaultVisitorPrecisions = []int{60, 300, 3600, 86400}

// ErrNoVisitors means the series keeps no visitors: at that precision
// (a *VisitorPrecisionError) or at all, its name holding braces that
// cannot put them in its slot (see VisitorKeyPrefix).
var ErrNoVisitors = errors.New("timeseries: no unique visitors")

// VisitorPrecisionError reports a precision of the schema at which no
// visitors are kept.
type VisitorPrecisionError struct {
	Precision int
	Kept      []int
}

func (e *VisitorPrecisionError) Error() string {
	return fmt.Sprintf("timeseries: no unique visitors are kept at precision %d (they are at %v)", e.Precision, e.Kept)
}

// Is makes errors.Is(err, ErrNoVisitors) true.
func (e *VisitorPrecisionError) Is(target error) bool { return target == ErrNoVisitors }

// VisitorPrecisions are the schema's precisions that keep visitors: those
// of DefaultVisitorPrecisions it has, in its order.
func (s Keys) VisitorPrecisions() []int {
	out := []int{}
	for _, p := range s.Precisions {
		if slices.Contains(DefaultVisitorPrecisions, p) {
			out = append(out, p)
		}
	}
	return out
}

// CheckVisitorPrecision returns a *PrecisionError for a precision the
// schema does not have, and a *VisitorPrecisionError for one of its
// precisions that keeps no visitors.
func (s Keys) CheckVisitorPrecision(p int) error {
	if err := s.CheckPrecision(p); err != nil {
		return err
	}
	if kept := s.VisitorPrecisions(); !slices.Contains(kept, p) {
		return &VisitorPrecisionError{Precision: p, Kept: kept}
	}
	return nil
}
