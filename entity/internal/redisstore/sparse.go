package redisstore

import (
	"math/bits"
	"strconv"
)

// The sparse layout keeps the buckets of the compact one (same scripts,
// same generations, same packed values) but addresses them by a hash of
// the id, so ids of any shape fill them alike: snowflake ids, random
// 63-bit ids, sharded sequences with gaps, and dense ids too.
//
// A kind has n buckets, sized from its expected population. An id, taken
// as an unsigned 64-bit number u, splits into hi = u / n and lo = u % n;
// its bucket is (lo + mix(hi)) % n and its field encodes hi alone. The
// map from id to (bucket, hi) is one to one — lo comes back as
// (bucket - mix(hi)) % n — so two ids in one bucket never share a field,
// and the field need not hold the bits the bucket already tells. Dense
// ids have a small hi (a one-byte field, as in the compact layout) and
// fill every bucket evenly; sparse ids have a hi of about 50 bits, kept
// in 7 bytes.

// SparseFill is how many entities a sparse bucket holds on average at the
// expected population: half of what a bucket may hold. Ids hashed into
// buckets fill them unevenly; at 64 on average the fullest of a million
// entities' buckets stays under BucketSize even when the population
// outgrows its estimate by half (at 80, a third more fills some past it,
// and Redis then keeps them in its larger hash encoding). An estimate too
// large costs little: a few more keys.
const SparseFill = 64

// SparseBuckets is how many buckets a kind of the expected population
// has: at least one.
func SparseBuckets(population int64) uint64 {
	return uint64(max(1, (population+SparseFill-1)/SparseFill))
}

// Sparse names the keys of entity (kind, id) in the sparse layout of a
// kind with n buckets. The bucket count is in the key, so counters that
// were given different populations never read each other's fields.
func (k Keys) Sparse(kind string, n uint64, id int64) Bucket {
	u := uint64(id)
	hi, lo := u/n, u%n
	b := lo + mix(hi)%n
	if b >= n || b < lo { // b < lo: the sum wrapped past 2^64
		b -= n
	}
	young := k.prefix + "pulse:es:{" + kind + ":" + strconv.FormatUint(n, 10) + ":" + strconv.FormatUint(b, 10) + "}"
	e := strconv.FormatInt(id, 10)
	return Bucket{Young: young, Old: young + ":old", Field: sparseField(hi), Lease: young + ":l" + e, Marks: young + ":w" + e}
}

// sparseField encodes hi, one to one. Below 2^31 it is decimal, which a
// listpack stores as an integer of one to five bytes; above, big-endian
// bytes whose first has its top bit set, so that no such field reads as
// a decimal number (a listpack would store that as the number, and it
// could equal a decimal field).
func sparseField(hi uint64) string {
	if hi < 1<<31 {
		return strconv.FormatUint(hi, 10)
	}
	n := (bits.Len64(hi) + 8) / 8 // bytes for its bits and the flag
	b := make([]byte, n)
	for i := n - 1; i >= 0; i-- {
		b[i] = byte(hi)
		hi >>= 8
	}
	b[0] |= 0x80
	return string(b)
}

// mix is the finalizer of SplitMix64: every output bit depends on every
// input bit, so ids that differ only in their high bits (a snowflake's
// timestamp) land in unrelated buckets.
func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
