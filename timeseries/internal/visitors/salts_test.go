package visitors

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"testing"
)

// fakeRedis answers Fetch as SET NX GET does: the first proposal of a
// day wins.
type fakeRedis struct {
	salts map[int64]Salt
	calls int
	down  bool
}

func (f *fakeRedis) fetch(day int64, proposal Salt) (Salt, error) {
	f.calls++
	if f.down {
		return Salt{}, errors.New("down")
	}
	if s, ok := f.salts[day]; ok {
		return s, nil
	}
	f.salts[day] = proposal
	return proposal, nil
}

// keep agrees with f on the salts b says are due at now, and keeps them.
func keep(b *Book, now int64, recheck bool, f *fakeRedis) error {
	offers, err := b.Due(now, recheck)
	if err != nil {
		return err
	}
	for i := range offers {
		offers[i].Salt, offers[i].Err = f.fetch(offers[i].Day, offers[i].Salt)
	}
	return b.Keep(now, offers)
}

// A Book knows today's and tomorrow's salts after Keep, fetches them only
// when missing (or asked to recheck), keeps yesterday's for Grace, and
// adopts the salt the shared store holds.
func TestBookKeep(t *testing.T) {
	const day = 1800000000 / Day * Day
	tests := []struct {
		name      string
		now       int64
		wantDays  []int64 // days For must answer
		wantGone  []int64 // days For must not
		wantCalls int     // fetches by the second Keep
	}{
		{"midday", day + 43200, []int64{day, day + Day}, []int64{day - Day, day + 2*Day}, 0},
		{"just after midnight", day + Day + 10, []int64{day, day + Day, day + 2*Day}, nil, 1},
		{"after the grace", day + Day + Grace, []int64{day + Day, day + 2*Day}, []int64{day}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeRedis{salts: map[int64]Salt{}}
			var b Book
			if err := keep(&b, day+43200, false, f); err != nil {
				t.Fatal(err)
			}
			f.calls = 0
			if err := keep(&b, tt.now, false, f); err != nil {
				t.Fatal(err)
			}
			if f.calls != tt.wantCalls {
				t.Errorf("%d fetches, want %d", f.calls, tt.wantCalls)
			}
			for _, d := range tt.wantDays {
				if s := b.For(d + 1); s == nil || *s != f.salts[d] {
					t.Errorf("day %d: salt %v, want the shared one", d, s)
				}
			}
			for _, d := range tt.wantGone {
				if s := b.For(d + 1); s != nil {
					t.Errorf("day %d: still has a salt", d)
				}
			}
		})
	}
}

// A recheck adopts a salt another instance put back after Redis lost it,
// and an outage keeps the salts held.
func TestBookRecheck(t *testing.T) {
	const now = 1800000000
	f := &fakeRedis{salts: map[int64]Salt{}}
	var b Book
	_ = keep(&b, now, false, f)
	held := *b.For(now)
	f.down = true
	if err := keep(&b, now, true, f); err == nil {
		t.Error("Keep with the store down returned no error")
	}
	if s := b.For(now); s == nil || *s != held {
		t.Fatal("an outage lost the salt held")
	}
	f.down = false
	other := Salt{1, 2, 3}
	f.salts[DayOf(now)] = other
	_ = keep(&b, now, true, f)
	if s := b.For(now); s == nil || *s != other {
		t.Error("a recheck did not adopt the salt in force")
	}
}

// Ids depend on the salt and on every field, and an app's id never
// equals an address and User-Agent pair made of the same bytes.
func TestIDs(t *testing.T) {
	a, b := Salt{1}, Salt{2}
	base := a.ClientID("192.0.2.1", "ua")
	tests := []struct {
		name string
		id   uint64
	}{
		{"another salt", b.ClientID("192.0.2.1", "ua")},
		{"another address", a.ClientID("192.0.2.2", "ua")},
		{"another agent", a.ClientID("192.0.2.1", "ub")},
		{"fields shifted", a.ClientID("192.0.2.1u", "a")},
		{"an app id", a.AppID("192.0.2.1")},
		{"a long agent", a.ClientID("192.0.2.1", string(make([]byte, 1000)))},
	}
	for _, tt := range tests {
		if tt.id == base {
			t.Errorf("%s: same id as the base", tt.name)
		}
	}
	if again := a.ClientID("192.0.2.1", "ua"); again != base {
		t.Error("the same visitor got two ids")
	}
	long := string(make([]byte, 1000))
	if a.ClientID("x", long) != a.ClientID("x", long) {
		t.Error("the long-input path is not deterministic")
	}
}

func TestSaltEncoding(t *testing.T) {
	s := Salt{9, 8, 7}
	got, err := DecodeSalt([]byte(s.Encode()))
	if err != nil || got != s {
		t.Fatalf("round trip: %v, %v", got, err)
	}
	for _, bad := range []string{"", "zz", s.Encode()[:10]} {
		if _, err := DecodeSalt([]byte(bad)); err == nil {
			t.Errorf("DecodeSalt(%q) took it", bad)
		}
	}
}

// Short inputs hash on the stack, long ones through sha256.New: both are
// SHA-256 over the same bytes.
func TestIDPathsAgree(t *testing.T) {
	s := Salt{5}
	for _, n := range []int{0, 100, stackInput, 2000} {
		ua := string(make([]byte, n))
		in := append(append([]byte{}, s[:]...), kindClient)
		in = binary.BigEndian.AppendUint32(in, uint32(len("a")))
		in = append(in, "a"...)
		in = binary.BigEndian.AppendUint32(in, uint32(n))
		in = append(in, ua...)
		sum := sha256.Sum256(in)
		if got, want := s.ClientID("a", ua), binary.BigEndian.Uint64(sum[:8]); got != want {
			t.Errorf("User-Agent of %d bytes: id %x, want %x", n, got, want)
		}
	}
}
