package visitors

import (
	"crypto/hmac"
	"crypto/sha256"
	"hash"
	"sync"
	"testing"
)

const benchUA = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36"

// BenchmarkID compares the two keyed hashes a visitor id could use, on a
// typical address and desktop User-Agent: SHA-256 over salt and fields
// (what ClientID does), HMAC-SHA-256 made per call, and HMAC-SHA-256 from
// a pool (Reset between uses, so its keyed state is reused).
func BenchmarkID(b *testing.B) {
	var s Salt
	s[0] = 7
	var sink uint64
	b.Run("sha256", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink += s.ClientID("203.0.113.7", benchUA)
		}
		b.ReportMetric(float64(len(s)+9+len("203.0.113.7")+len(benchUA)), "input-bytes")
	})
	b.Run("hmac", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sink += s.hmacID(kindClient, "203.0.113.7", benchUA)
		}
	})
	pool := sync.Pool{New: func() any { return hmac.New(sha256.New, s[:]) }}
	b.Run("hmac-pooled", func(b *testing.B) {
		b.ReportAllocs()
		var sum [sha256.Size]byte
		for b.Loop() {
			m := pool.Get().(hash.Hash)
			m.Reset()
			m.Write([]byte("203.0.113.7"))
			m.Write([]byte(benchUA))
			sink += uint64(m.Sum(sum[:0])[0])
			pool.Put(m)
		}
	})
	_ = sink
}
