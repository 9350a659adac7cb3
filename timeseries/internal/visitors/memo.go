package visitors

import "hash/maphash"

// memoSize is the number of visitors a Memo remembers; a power of two.
const memoSize = 256

// memoSeed keys the Memo's lookup hash. It is made at start and never
// leaves the process, so a client cannot choose inputs that collide.
var memoSeed = maphash.MakeSeed()

// A Memo remembers the ids of the visitors it computed last, so that a
// visitor's further requests skip SHA-256 for a seeded hash of their
// address and User-Agent, many times cheaper (BENCHMARKS.md has both):
// most requests are repeats, and a busy client repeats often.
//
// It holds no address or User-Agent, only that seeded 64-bit hash and the
// id, and only under one salt: a new salt empties it, so nothing in it
// links a visitor across days. A Memo is not safe for concurrent use;
// its zero value is ready.
type Memo struct {
	salt    *Salt
	entries [memoSize]memoEntry
}

type memoEntry struct {
	key, id uint64
	used    bool
}

// ClientID is s.ClientID(addr, userAgent), remembered.
func (m *Memo) ClientID(s *Salt, addr, userAgent string) uint64 {
	return m.id(s, kindClient, addr, userAgent)
}

// AppID is s.AppID(id), remembered.
func (m *Memo) AppID(s *Salt, id string) uint64 { return m.id(s, kindApp, id, "") }

func (m *Memo) id(s *Salt, kind byte, a, b string) uint64 {
	if m.salt != s {
		m.entries = [memoSize]memoEntry{}
		m.salt = s
	}
	key := memoKey(kind, a, b)
	e := &m.entries[key&(memoSize-1)]
	if e.used && e.key == key {
		return e.id
	}
	id := s.id(kind, a, b)
	*e = memoEntry{key: key, id: id, used: true}
	return id
}

// memoKey hashes an identity for the Memo. The two fields are hashed
// apart and mixed unevenly, so swapping them changes the key, and the
// kind is folded in, so an app id never shares a key with an address.
// Two identities share a key with a chance of about 2⁻⁶⁴ per pair; the
// later one would then be counted as the earlier.
func memoKey(kind byte, a, b string) uint64 {
	ha := maphash.String(memoSeed, a)
	hb := maphash.String(memoSeed, b)
	return (ha ^ hb*0x9e3779b97f4a7c15) + uint64(kind)*0xbf58476d1ce4e5b9
}
