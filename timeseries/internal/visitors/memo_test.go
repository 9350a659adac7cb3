package visitors

import (
	"strconv"
	"testing"
)

// TestMemoAgreesWithHash: whatever the memo remembers, evicts or is asked
// twice, every id it gives is the salt's own, for many more identities
// than it holds (so indexes collide), repeated and interleaved, for both
// kinds, and under a new salt the new salt's.
func TestMemoAgreesWithHash(t *testing.T) {
	s1, s2 := &Salt{1}, &Salt{2}
	var m Memo
	const n = 4 * memoSize
	addr := func(i int) string { return "203.0.113." + strconv.Itoa(i%200) + ":" + strconv.Itoa(i) }
	for _, round := range []struct {
		name string
		salt *Salt
	}{{"first", s1}, {"again", s1}, {"new salt", s2}, {"old salt back", s1}} {
		for i := range n {
			j := (i * 7) % n // interleaved: neighbours are not asked in turn
			a, ua := addr(j), "agent/"+strconv.Itoa(j%3)
			if got, want := m.ClientID(round.salt, a, ua), round.salt.ClientID(a, ua); got != want {
				t.Fatalf("%s: ClientID(%q, %q) = %x, want %x", round.name, a, ua, got, want)
			}
			if got, want := m.ClientID(round.salt, a, ua), round.salt.ClientID(a, ua); got != want {
				t.Fatalf("%s: repeated ClientID(%q, %q) = %x, want %x", round.name, a, ua, got, want)
			}
			if got, want := m.AppID(round.salt, a), round.salt.AppID(a); got != want {
				t.Fatalf("%s: AppID(%q) = %x, want %x", round.name, a, got, want)
			}
		}
	}
}

// TestMemoKeySeparates: the fields' order and the kind change the key.
func TestMemoKeySeparates(t *testing.T) {
	keys := map[uint64]string{}
	for _, c := range []struct {
		name string
		key  uint64
	}{
		{"client a,b", memoKey(kindClient, "a", "b")},
		{"client b,a", memoKey(kindClient, "b", "a")},
		{"client ab,", memoKey(kindClient, "ab", "")},
		{"client ,ab", memoKey(kindClient, "", "ab")},
		{"app ab", memoKey(kindApp, "ab", "")},
		{"client a,a", memoKey(kindClient, "a", "a")},
		{"client ,", memoKey(kindClient, "", "")},
	} {
		if other, ok := keys[c.key]; ok {
			t.Errorf("%s and %s share key %x", c.name, other, c.key)
		}
		keys[c.key] = c.name
	}
}

// TestMemoForgetsOldSalt: a new salt empties the memo, so no entry of an
// earlier day is left to link a visitor across days.
func TestMemoForgetsOldSalt(t *testing.T) {
	var m Memo
	m.ClientID(&Salt{1}, "192.0.2.1", "agent")
	m.ClientID(&Salt{2}, "192.0.2.2", "agent")
	used := 0
	for _, e := range m.entries {
		if e.used {
			used++
		}
	}
	if used != 1 {
		t.Errorf("%d entries after a new salt's first visitor, want 1", used)
	}
}
