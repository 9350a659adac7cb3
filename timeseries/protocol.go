package timeseries

import (
	"fmt"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

// The flush scripts' protocol, named once: where each field of a call's
// ARGV is and what each entry of a reply means. Go builds calls and reads
// replies through scriptCall; the Lua reads the same names from
// protocolLua, which declares them from these constants, so neither side
// counts positions of its own.

// The head of a flush script call's ARGV (1-based, as Lua indexes it):
// then Keys' field/delta pairs, the lat blocks and, on one server, the
// unlisted keys' count, their indexes and the length of a count key's
// part before its member.
const (
	flushSeq   = 1 // the batch's seq
	flushTTL   = 2 // the marker's ttl
	flushNKeys = 3 // n, the count keys (KEYS 2 to n+1)
	flushNLat  = 4 // m, the lat keys (KEYS n+2 to n+m+1)
	flushHead  = 4 // the fields before the pairs
)

// The head of a node script call's ARGV: then the f indexes of keys
// listed anyway, Keys' key/field/delta triples and the lat blocks, each
// after its key.
const (
	nodeSeq     = 1 // the batch's seq
	nodeTTL     = 2 // the marker's ttl
	nodeRenew   = 3 // its new ttl, or 0 to keep the ttl it has
	nodeNKeys   = 4 // n
	nodeNLat    = 5 // m
	nodeNListed = 6 // f
	nodeHead    = 6
)

// A lat block, from its first field (0-based offsets, both scripts): then
// k bin field/count pairs.
const (
	latExpireAt = 0 // the key's EXPIREAT
	latSum      = 1
	latMin      = 2
	latMax      = 3
	latBins     = 4 // k
	latHead     = 5
)

// What a reply's first entry says of the batch.
const (
	statusSeen    = 0 // applied before: a resend
	statusApplied = 1
	statusFenced  = 2 // node script: abandoned, none of it applied
)

// A reply's later entries name keys of the call by index: count key i
// (1 to n) and, after it, the known set (refused) and lat key j (refused);
// -i is count key i, whose hash the call created. knownRef and latRef
// are those indexes; protocolLua declares the same.
func knownRef(n int) int64  { return int64(n) + 1 }
func latRef(n, j int) int64 { return int64(n) + 1 + int64(j) }

// protocolLua declares the protocol's names for both scripts.
var protocolLua = fmt.Sprintf(`local FLUSH_SEQ, FLUSH_TTL, FLUSH_NKEYS, FLUSH_NLAT, FLUSH_HEAD = %d, %d, %d, %d, %d
local NODE_SEQ, NODE_TTL, NODE_RENEW, NODE_NKEYS, NODE_NLAT, NODE_NLISTED, NODE_HEAD = %d, %d, %d, %d, %d, %d, %d
local LAT_EXPIREAT, LAT_SUM, LAT_MIN, LAT_MAX, LAT_BINS, LAT_HEAD = %d, %d, %d, %d, %d, %d
local STATUS_SEEN, STATUS_APPLIED, STATUS_FENCED = %d, %d, %d
local function known_ref(n) return n + 1 end
local function lat_ref(n, j) return n + 1 + j end
local function lat_len(e) return LAT_HEAD + 2 * tonumber(ARGV[e + LAT_BINS]) end
`, flushSeq, flushTTL, flushNKeys, flushNLat, flushHead,
	nodeSeq, nodeTTL, nodeRenew, nodeNKeys, nodeNLat, nodeNListed, nodeHead,
	latExpireAt, latSum, latMin, latMax, latBins, latHead,
	statusSeen, statusApplied, statusFenced)

// scriptReply is a script's answer for one batch, read against the batch.
type scriptReply struct {
	status int64
	// refused are the indexes in Keys and in Lat of keys that refused
	// their increments; known, that the known set refused its members.
	refused, refusedDurations []int
	known                     bool
	// created are the indexes in Keys of count keys whose hash the call
	// created.
	created []int
	// outside is, for a fenced node batch, the key found not on the
	// node; "" if none.
	outside string
}

// decodeReply reads a script's reply to b's call. An index that names no
// key of b is ignored.
func decodeReply(b *batch, reply any) (scriptReply, error) {
	vals, err := redis.Int64s(reply, nil)
	if err != nil || len(vals) == 0 {
		return scriptReply{}, fmt.Errorf("unexpected flush script reply %v: %w", reply, err)
	}
	return readReply(b, vals), nil
}

// readReply reads the entries of a reply, vals[0] its status.
func readReply(b *batch, vals []int64) scriptReply {
	out := scriptReply{status: vals[0]}
	n := len(b.Keys)
	for _, v := range vals[1:] {
		switch {
		case v < 0 && -v <= int64(n):
			out.created = append(out.created, int(-v)-1)
		case v >= 1 && v <= int64(n):
			out.refused = append(out.refused, int(v)-1)
		case v == knownRef(n):
			out.known = true
		case v > knownRef(n) && v <= latRef(n, len(b.Lat)):
			out.refusedDurations = append(out.refusedDurations, int(v-latRef(n, 1)))
		}
	}
	if out.status == statusFenced {
		// The fenced reply's one entry is the key not on the node.
		switch {
		case len(out.refused) > 0:
			out.outside = b.Keys[out.refused[0]]
		case len(out.refusedDurations) > 0:
			out.outside = b.Lat[out.refusedDurations[0]].Key
		}
		out.refused, out.refusedDurations = nil, nil
	}
	return out
}

// cmd is the flush script call of b. listed reports whether this
// recorder has listed a member already; the call is made under s.mu.
func (s *sender) cmd(b *batch, listed func(string) bool) redisconn.Cmd {
	keys := make([]string, 0, len(b.Keys)+len(b.Lat)+2)
	keys = append(keys, b.Marker)
	keys = append(keys, b.Keys...)
	args := make([]any, flushHead, flushHead+2*len(b.Keys)+(latHead+2)*len(b.Lat)+3)
	args[flushSeq-1], args[flushTTL-1] = b.Seq, s.markerTTL()
	args[flushNKeys-1], args[flushNLat-1] = len(b.Keys), len(b.Lat)
	for i := range b.Keys {
		args = append(args, b.Fields[i], b.Deltas[i])
	}
	for _, d := range b.Lat {
		args = appendLat(args, d)
		keys = append(keys, d.Key)
	}
	if !s.router.IsCluster() {
		keys = append(keys, s.schema.KnownKey())
		args = appendUnlisted(args, b, listed)
		// A count key is the member after this: the script needs no list.
		args = append(args, len(s.schema.MemberKey("")))
	}
	return flushScript.Cmd(keys, args...)
}

// nodeCmd is the node script call of node batch b. listed reports whether
// this recorder has listed a member already; the call is made under s.mu.
func (s *sender) nodeCmd(b *batch, listed func(string) bool) redisconn.Cmd {
	size := nodeHead + 4*len(b.Keys)
	for _, d := range b.Lat {
		size += 1 + latHead + 2*len(d.Fields)
	}
	args := make([]any, nodeHead-1, size)
	args[nodeSeq-1], args[nodeTTL-1], args[nodeRenew-1] = b.Seq, s.markerTTL(), s.ttlFor(b)
	args[nodeNKeys-1], args[nodeNLat-1] = len(b.Keys), len(b.Lat)
	args = appendUnlisted(args, b, listed) // nodeNListed, then the indexes
	for i, k := range b.Keys {
		args = append(args, k, b.Fields[i], b.Deltas[i])
	}
	for _, d := range b.Lat {
		args = append(args, d.Key)
		args = appendLat(args, d)
	}
	return nodeScript.Cmd([]string{b.Marker}, args...)
}

// appendUnlisted appends the count, then the 1-based indexes, of b's keys
// whose member this recorder has not listed yet.
func appendUnlisted(args []any, b *batch, listed func(string) bool) []any {
	at := len(args)
	args = append(args, 0)
	for i, m := range b.Members {
		if !listed(m) {
			args = append(args, i+1)
		}
	}
	args[at] = len(args) - at - 1
	return args
}

// appendLat appends d's lat block.
func appendLat(args []any, d latDelta) []any {
	var head [latHead]any
	head[latExpireAt], head[latSum], head[latMin], head[latMax] = d.Expire, d.Sum, d.Min, d.Max
	head[latBins] = len(d.Fields)
	args = append(args, head[:]...)
	for i, f := range d.Fields {
		args = append(args, f, d.Counts[i])
	}
	return args
}
