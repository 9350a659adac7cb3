package series

import (
	"strconv"
	"strings"
)

// LatKeyPrefix is the start of the keys holding one series' request
// durations at one precision, one hash per bucket:
//
//	<prefix>lat:{<count key>}:<bucket start>
//
// The braces make Redis Cluster hash the lat keys as it hashes the count
// key, so a bucket's durations are in the slot, and so the flush group,
// of its hits: one batch, one marker, exactly once. A count key with a
// hash tag of its own (in the name or the prefix) lends it instead:
//
//	<prefix>lat:{<its tag>}:<count key>:<bucket start>
//
// ok is false when no braces can put the lat keys in the count key's
// slot: a count key without a tag that holds a "}" ("a}b", "x{}y"), or a
// prefix with a "{" that is not a tag of its own. Such
// a series keeps its hits and records no durations, on one server too,
// so the layout does not depend on the deployment.
func (s Keys) LatKeyPrefix(precision int, name string) (prefix string, ok bool) {
	count := s.CountKey(precision, name)
	want, tagged := hashed(count)
	l := s.Prefix + "lat:{" + count + "}:"
	if tagged {
		l = s.Prefix + "lat:{" + want + "}:" + count + ":"
	}
	if tag, ok := hashed(l); !ok || tag != want {
		return "", false
	}
	return l, true
}

// LatKey is the hash of one bucket of one series' durations; see
// LatKeyPrefix for ok.
func (s Keys) LatKey(precision int, name string, bucket int64) (string, bool) {
	l, ok := s.LatKeyPrefix(precision, name)
	if !ok {
		return "", false
	}
	return l + strconv.FormatInt(bucket, 10), true
}

// LatExpireAt is when a lat key of the bucket starting at bucket goes:
// 121 buckets after it starts, so 120 whole buckets are kept, as many as
// the cleaner keeps of a count hash.
func LatExpireAt(bucket int64, precision int) int64 {
	return bucket + LatKeptBuckets*int64(precision)
}

// LatKeptBuckets is how many bucket widths a lat key lives from its
// bucket's start.
const LatKeptBuckets = 121

// hashed is the part of key Redis Cluster hashes, by its rule: the text
// between the first "{" and the first "}" after it when that is not
// empty (tagged), else the whole key.
func hashed(key string) (part string, tagged bool) {
	i := strings.IndexByte(key, '{')
	if i < 0 {
		return key, false
	}
	j := strings.IndexByte(key[i+1:], '}')
	if j <= 0 {
		return key, false
	}
	return key[i+1 : i+1+j], true
}
