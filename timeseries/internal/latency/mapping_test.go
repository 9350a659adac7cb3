package latency

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

func mustMapping(t testing.TB, cfg Config) *Mapping {
	t.Helper()
	m, err := NewMapping(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// within reports whether est is within relative error alpha of exact
// (the 1e-12 forgives the float rounding of this check itself).
func within(est, exact time.Duration, alpha float64) bool {
	return math.Abs(float64(est-exact)) <= alpha*float64(exact)*(1+1e-12)
}

func relErr(est, exact time.Duration) float64 {
	if exact == 0 {
		return math.Abs(float64(est))
	}
	return math.Abs(float64(est-exact)) / float64(exact)
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config
		want string
	}{
		{"accuracy too fine", Config{Accuracy: 0.005}, "accuracy"},
		{"accuracy too coarse", Config{Accuracy: 0.06}, "accuracy"},
		{"negative accuracy", Config{Accuracy: -0.02}, "accuracy"},
		{"NaN accuracy", Config{Accuracy: math.NaN()}, "accuracy"},
		{"negative min", Config{Min: -time.Second}, "negative"},
		{"negative max", Config{Max: -time.Second}, "negative"},
		{"min below a microsecond", Config{Min: 999}, "below"},
		{"min equals max", Config{Min: time.Second, Max: time.Second}, "not below"},
		{"min above max", Config{Min: 2 * time.Second, Max: time.Second}, "not below"},
		{"min above default max", Config{Min: time.Hour}, "not below"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewMapping(tc.cfg)
			if err == nil {
				t.Fatalf("NewMapping(%+v) = nil error", tc.cfg)
			}
			if !strings.HasPrefix(err.Error(), "latency: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q: want prefix %q and %q in it", err, "latency: ", tc.want)
			}
		})
	}
	for _, cfg := range []Config{{}, {Accuracy: 0.01}, {Accuracy: 0.05, Min: time.Millisecond, Max: time.Millisecond + 1}} {
		if _, err := NewMapping(cfg); err != nil {
			t.Errorf("NewMapping(%+v): %v", cfg, err)
		}
	}
}

// TestMappingBins checks the mapping itself: indexes never decrease with
// the duration, no bin spans more than a factor γ, and every tracked
// duration is within the accuracy of its bin's value.
func TestMappingBins(t *testing.T) {
	for _, alpha := range []float64{0.01, 0.02, 0.05} {
		m := mustMapping(t, Config{Accuracy: alpha})
		gamma := (1 + alpha) / (1 - alpha)
		lo, hi := m.Bins()
		for i := lo; i <= hi; i++ {
			if l, h := m.bounds(i); h/l > gamma*(1+1e-12) {
				t.Fatalf("α=%g: bin %d spans (%g, %g], ratio %g > γ=%g", alpha, i, l, h, h/l, gamma)
			}
		}
		rng := rand.New(rand.NewPCG(1, 2))
		prev, worst := lo, 0.0
		// Every duration of the first 20000 ns, then random ones up to Max.
		for d := m.Min(); d <= m.Max(); {
			i := m.Index(d)
			if i < prev || i > hi {
				t.Fatalf("α=%g: Index(%d) = %d after %d (range %d..%d)", alpha, d, i, prev, lo, hi)
			}
			prev = i
			if v := m.Value(i); !within(v, d, alpha) {
				t.Fatalf("α=%g: Value(Index(%d)) = %d, off by %.4f", alpha, d, v, relErr(v, d))
			}
			worst = max(worst, relErr(m.Value(i), d))
			if d < 20000 {
				d++
			} else {
				d += time.Duration(rng.Int64N(int64(d)/1000 + 1))
			}
		}
		t.Logf("α=%g: bins %d..%d (%d), worst value error %.5f", alpha, lo, hi, hi-lo+1, worst)
	}
}

func TestMappingRange(t *testing.T) {
	m := mustMapping(t, Config{Min: time.Millisecond, Max: time.Second})
	lo, hi := m.Bins()
	for _, tc := range []struct {
		d    time.Duration
		want int
	}{
		{-time.Second, Underflow},
		{0, Underflow},
		{time.Duration(m.uppers[0]), Underflow},
		{time.Duration(m.uppers[0]) + 1, lo},
		{time.Second, hi},
		// 1 s is a bin's upper bound, 2^0 seconds: the next bin is past Max's.
		{time.Second + 1, Overflow},
		{time.Hour, Overflow},
	} {
		if got := m.Index(tc.d); got != tc.want {
			t.Errorf("Index(%v) = %d, want %d", tc.d, got, tc.want)
		}
	}
	if m.Index(time.Millisecond) != lo || m.Index(time.Second) != hi {
		t.Errorf("Index(Min), Index(Max) = %d, %d; Bins = %d, %d", m.Index(time.Millisecond), m.Index(time.Second), lo, hi)
	}
	if m.Value(Underflow) != time.Duration(m.uppers[0]) || m.Value(Overflow) != time.Second {
		t.Errorf("Value(Underflow), Value(Overflow) = %v, %v", m.Value(Underflow), m.Value(Overflow))
	}
}

func TestRank(t *testing.T) {
	for _, tc := range []struct {
		q    float64
		n    uint64
		want uint64
	}{
		{0.5, 0, 0},
		{0, 10, 1},
		{-1, 10, 1},
		{math.NaN(), 10, 1},
		{0.01, 10, 1},
		{0.1, 10, 1},
		{0.11, 10, 2},
		{0.5, 10, 5},
		{0.5, 11, 6},
		{0.99, 1000, 990},
		{1, 10, 10},
		{2, 10, 10},
	} {
		if got := Rank(tc.q, tc.n); got != tc.want {
			t.Errorf("Rank(%g, %d) = %d, want %d", tc.q, tc.n, got, tc.want)
		}
	}
}

// Slot's table gives exactly the slot the search of the bins' tops gives: around every cut
// of the table, at every power of two, and for random durations, at each
// accuracy and below, within and above the tracked range.
func TestSlotTableExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	for _, cfg := range []Config{{Accuracy: 0.01}, {Accuracy: 0.02}, {}, {Accuracy: 0.033, Min: 3 * time.Microsecond, Max: time.Hour}} {
		m, err := NewMapping(cfg)
		if err != nil {
			t.Fatal(err)
		}
		check := func(d time.Duration) {
			if got, want := m.Slot(d), m.slot(max(d, 0)); got != want {
				t.Fatalf("accuracy %g: Slot(%d) = %d, want %d", m.accuracy, d, got, want)
			}
		}
		slow := 0
		for _, e := range m.table {
			if e.cut < 0 {
				slow++
				continue
			}
			if e.cut != math.MaxInt64 {
				for _, d := range []int64{e.cut - 1, e.cut, e.cut + 1} {
					check(time.Duration(d))
				}
			}
		}
		// A span is narrower than a bin at every scale used: none holds
		// two bounds.
		if slow > 0 {
			t.Errorf("accuracy %g: %d table spans hold two bounds", m.accuracy, slow)
		}
		for e := 0; e < 45; e++ {
			for _, d := range []int64{1<<e - 1, 1 << e, 1<<e + 1} {
				check(time.Duration(d))
			}
		}
		for range 200000 {
			check(time.Duration(math.Exp(rng.Float64() * 30)))
		}
		check(-5)
		check(0)
	}
}

// Upper bounds each bin: a duration is at most its bin's Upper and above
// the previous bin's; the underflow bin is below Min, the overflow bin
// unbounded.
func TestUpper(t *testing.T) {
	m, err := NewMapping(Config{})
	if err != nil {
		t.Fatal(err)
	}
	for d := m.Min(); d <= m.Max(); d = d*1013/1000 + 1 {
		i := m.Index(d)
		if up := m.Upper(i); float64(d) > up {
			t.Fatalf("%v above the upper bound %g ns of its bin %d", d, up, i)
		}
		if lo, _ := m.Bins(); i > lo && float64(d) <= m.Upper(i-1) {
			t.Fatalf("%v not above the upper bound %g ns of bin %d", d, m.Upper(i-1), i-1)
		}
	}
	if lo, _ := m.Bins(); m.Upper(Underflow) != m.Upper(lo-1) || !math.IsInf(m.Upper(Overflow), 1) {
		t.Errorf("underflow %g, overflow %g", m.Upper(Underflow), m.Upper(Overflow))
	}
}
