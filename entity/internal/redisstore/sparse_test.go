package redisstore

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// unsparse recovers an id from its bucket number and field: the inverse
// the layout's one-to-one claim rests on.
func unsparse(t *testing.T, n uint64, bucket uint64, field string) int64 {
	t.Helper()
	var hi uint64
	if field[0] >= 0x80 {
		hi = uint64(field[0] &^ 0x80)
		for _, c := range []byte(field[1:]) {
			hi = hi<<8 | uint64(c)
		}
	} else {
		var err error
		if hi, err = strconv.ParseUint(field, 10, 64); err != nil {
			t.Fatalf("field %q: %v", field, err)
		}
	}
	m := mix(hi) % n
	lo := bucket - m
	if bucket < m {
		lo = bucket + (n - m)
	}
	return int64(hi*n + lo)
}

// bucketNumber reads the bucket number out of a young hash's name.
func bucketNumber(t *testing.T, young string) uint64 {
	t.Helper()
	inner := young[strings.IndexByte(young, '{')+1 : strings.IndexByte(young, '}')]
	b, err := strconv.ParseUint(inner[strings.LastIndexByte(inner, ':')+1:], 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Every id, whatever its shape and sign, gets a bucket below n and a field
// that leads back to it alone; binary fields never read as numbers and
// stay within a listpack's value limit.
func TestSparseAddressing(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	ids := []int64{0, 1, -1, 2, math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 1 << 31, 1<<31 - 1}
	for i := 0; i < 5000; i++ {
		ids = append(ids, r.Int64(), -r.Int64(), int64(i), (1_700_000_000_000+int64(i)*97)<<22|int64(i%4096))
	}
	keys := NewKeys("p:")
	for _, n := range []uint64{1, 2, 3, 7, 80, 12_500, SparseBuckets(1 << 40)} {
		seen := map[string]int64{}
		for _, id := range ids {
			b := keys.Sparse("user", n, id)
			num := bucketNumber(t, b.Young)
			if num >= n {
				t.Fatalf("n %d: id %d in bucket %d", n, id, num)
			}
			if got := unsparse(t, n, num, b.Field); got != id {
				t.Fatalf("n %d: id %d addressed as bucket %d field %q, which leads back to %d", n, id, num, b.Field, got)
			}
			if prev, dup := seen[b.Young+"/"+b.Field]; dup && prev != id {
				t.Fatalf("n %d: ids %d and %d share bucket %d field %q", n, prev, id, num, b.Field)
			}
			seen[b.Young+"/"+b.Field] = id
			if len(b.Field) > 10 || b.Field[0] >= 0x80 && len(b.Field) > 9 {
				t.Errorf("field %q of id %d is %d bytes", b.Field, id, len(b.Field))
			}
			if _, err := strconv.ParseInt(b.Field, 10, 64); (err == nil) != (b.Field[0] < 0x80) {
				t.Errorf("field %q of id %d: decimal is %v, flag byte %x", b.Field, id, err == nil, b.Field[0])
			}
			if !strings.HasPrefix(b.Lease, b.Young) || !strings.HasPrefix(b.Marks, b.Young) || b.Old != b.Young+":old" {
				t.Errorf("keys of id %d leave the bucket's hash tag: %+v", id, b)
			}
		}
	}
}

// Dense ids fill the buckets evenly, and their fields are small numbers,
// as the compact layout's offsets are.
func TestSparseDenseIDsFillEvenly(t *testing.T) {
	const pop = 100_000
	n := SparseBuckets(pop)
	keys := NewKeys("")
	fill := map[string]int{}
	for id := int64(1); id <= pop; id++ {
		b := keys.Sparse("user", n, id)
		fill[b.Young]++
		if len(b.Field) > 3 {
			t.Fatalf("id %d: field %q", id, b.Field)
		}
	}
	if uint64(len(fill)) != n {
		t.Errorf("%d ids filled %d of %d buckets", pop, len(fill), n)
	}
	for key, f := range fill {
		if f < SparseFill-1 || f > SparseFill+1 {
			t.Errorf("%s holds %d ids, want %d ± 1", key, f, SparseFill)
		}
	}
}
