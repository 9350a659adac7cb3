package timeseries

import (
	"strconv"

	"github.com/pulse-dev/pulse/timeseries/internal/latency"
)

// pendingKey is hits of one series in one second, still due at the
// precisions whose bit is set in due. Hits stay by second until batched,
// so MaxPendingAge drops exactly the old ones; a group busy with a batch
// in flight takes its precisions later, so an entry can lose bits.
type pendingKey struct {
	counter int32
	sec     int64
	due     uint32
}

// deltaKey is one bucket of one series at one precision.
type deltaKey struct {
	counter int32
	prec    int8
	bucket  int64
}

// batch is the deltas for keys of one marker (the one server, one cluster
// node, or one cluster slot), guarded by that marker key: one script call.
// Its seq lets Redis refuse a second application, so a batch whose reply
// was lost is resent as it is, never rebuilt.
type batch struct {
	Marker string `json:"marker"`
	Seq    int64  `json:"seq"`
	// Node marks a node batch (keys of many slots of one cluster node),
	// sent by the node script; any other goes by the flush script.
	Node    bool     `json:"node,omitempty"`
	Keys    []string `json:"keys"`
	Fields  []string `json:"fields"`
	Deltas  []int64  `json:"deltas"`
	Members []string `json:"members"` // known-set member of each key
	// Lat are the durations of the batch, by lat key: in the slots, so
	// the groups, of the count keys of the same series and precisions.
	Lat        []latDelta `json:"lat,omitempty"`
	Newest     int64      `json:"newest"`
	incr       int64      // sum of Deltas
	durationsN int64      // durations in Lat, summed over its keys
	file       string     // spill file it came from, if any
	// src are the pending entries the batch was made of, each with the
	// bit of one of this batch's precisions (none for a spilled batch), so
	// a batch that surely did not land can go back to pending; durationSrc
	// likewise for durations.
	src         map[pendingKey]int64
	durationSrc []durationSource
	// uncertain is set once a send of the batch may have landed (a lost
	// connection, a WAIT short of replicas): from then on only Redis can
	// settle it, so it is resent as it is until Redis answers, even if a
	// later send is refused outright.
	uncertain bool
	// renewAt is when a node script call asked to renew the marker's
	// expiry with this batch (unix seconds), 0 if it did not.
	renewAt int64
}

// building is a new batch and where each of its deltas is.
type building struct {
	b             *batch
	deltas        map[deltaKey]int // index into b's slices
	lat           map[deltaKey]int // index into b.Lat and durationHists
	durationHists []*latency.Histogram
}

// full reports whether the batch has no room for a delta of weight w. A
// node batch takes a node's writes of every slot at once, so it may grow
// to maxNodeDeltas.
func (bl *building) full(w int) bool {
	limit := maxBatchDeltas
	if bl.b.Node {
		limit = maxNodeDeltas
	}
	return len(bl.b.Keys)+latWeight*len(bl.b.Lat)+w > limit
}

func itoa(v int64) string { return strconv.FormatInt(v, 10) }

// add adds n to the delta of dk, which is key's field, unless that needs
// a new delta and the batch is full.
func (bl *building) add(dk deltaKey, key, member string, n int64) bool {
	b := bl.b
	j, ok := bl.deltas[dk]
	if !ok {
		if bl.full(1) {
			return false
		}
		j = len(b.Keys)
		bl.deltas[dk] = j
		b.Keys = append(b.Keys, key)
		b.Fields = append(b.Fields, strconv.FormatInt(dk.bucket, 10))
		b.Deltas = append(b.Deltas, 0)
		b.Members = append(b.Members, member)
	}
	b.Deltas[j] += n
	b.incr += n
	return true
}
