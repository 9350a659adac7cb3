package series

import (
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
