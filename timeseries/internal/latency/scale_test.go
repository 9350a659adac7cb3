package latency

import (
	"math"
	"math/big"
	"testing"
	"time"
)

// refUpper is 10⁹·2^(i/2^s) in ns to 256 bits, worked out apart from
// the Mapping: 2^(1/2^s) by s square roots, then raised to i.
func refUpper(i, s int) *big.Float {
	const prec = 256
	root := new(big.Float).SetPrec(prec).SetInt64(2)
	for range s {
		root.Sqrt(root)
	}
	if i < 0 {
		root.Quo(new(big.Float).SetPrec(prec).SetInt64(1), root)
		i = -i
	}
	v := new(big.Float).SetPrec(prec).SetInt64(1e9)
	for range i {
		v.Mul(v, root)
	}
	return v
}

// refFloor is the floor of v, taking a v within 2^-200 of a whole
// number (the reference's rounding) as that number.
func refFloor(v *big.Float) int64 {
	n, _ := new(big.Float).Add(v, big.NewFloat(0.5)).Int64() // nearest
	diff := new(big.Float).Sub(v, new(big.Float).SetInt64(n))
	if diff.Abs(diff).Cmp(new(big.Float).SetMantExp(big.NewFloat(1), -200)) < 0 {
		return n
	}
	f, _ := v.Int64() // truncation: the floor
	return f
}

// roundedBound reports whether u is 10⁹·2^(i/2^s) rounded to the nearest
// float64: the bound B lies strictly between u less and u plus half an
// ulp, each side compared exactly as x^(2^s) against 10^(9·2^s)·2^i.
func roundedBound(u float64, i, s int) bool {
	half := math.Nextafter(u, math.Inf(1)) - u
	lo, _ := new(big.Float).SetPrec(200).Sub(big.NewFloat(u), big.NewFloat(half/2)).Rat(nil)
	hi, _ := new(big.Float).SetPrec(200).Add(big.NewFloat(u), big.NewFloat(half/2)).Rat(nil)
	return cmpBound(lo, i, s) < 0 && cmpBound(hi, i, s) > 0
}

// cmpBound compares the rational x with 10⁹·2^(i/2^s), exactly.
func cmpBound(x *big.Rat, i, s int) int {
	k := big.NewInt(int64(1) << s)
	num := new(big.Int).Exp(x.Num(), k, nil)
	den := new(big.Int).Exp(x.Denom(), k, nil)
	rhs := new(big.Int).Exp(big.NewInt(1e9), k, nil)
	if i >= 0 {
		rhs.Lsh(rhs, uint(i))
	} else {
		num.Lsh(num, uint(-i))
	}
	// x^k ? rhs  ⇔  num ? rhs·den
	return num.Cmp(rhs.Mul(rhs, den))
}

// TestScaleBounds: the bins are the base-2 exponential buckets of
// Prometheus native histograms and OpenTelemetry on seconds. Each bin's
// whole-nanosecond top is the floor of the reference bound, the scale
// is the one each accuracy names, and a bound that is a whole number of
// nanoseconds (1 s, 0.5 s, 2 s) belongs to the bin it closes.
func TestScaleBounds(t *testing.T) {
	for _, tc := range []struct {
		accuracy float64
		scale    int
	}{{0.05, 3}, {0.044, 3}, {0.04, 4}, {0.03, 4}, {0.02, 5}, {0.015, 5}, {0.01, 6}} {
		m := mustMapping(t, Config{Accuracy: tc.accuracy})
		if m.Scale() != tc.scale {
			t.Errorf("accuracy %g: scale %d, want %d", tc.accuracy, m.Scale(), tc.scale)
		}
		lo, hi := m.Bins()
		for i := lo - 1; i <= hi; i++ {
			ref := refFloor(refUpper(i, m.Scale()))
			if got := m.uppers[i-lo+1]; got != ref {
				t.Fatalf("accuracy %g: top of bin %d is %d ns, reference %d", tc.accuracy, i, got, ref)
			}
			if !roundedBound(m.Upper(i), i, m.Scale()) {
				t.Errorf("accuracy %g: Upper(%d) = %g is not the bound rounded to the nearest float", tc.accuracy, i, m.Upper(i))
			}
		}
		k := 1 << m.Scale() // bins per power of two
		for _, c := range []struct {
			d    time.Duration
			want int
		}{
			{time.Second, 0}, {time.Second + 1, 1},
			{time.Second / 2, -k}, {time.Second/2 + 1, -k + 1},
			{2 * time.Second, k}, {2*time.Second + 1, k + 1},
		} {
			if got := m.Index(c.d); got != c.want {
				t.Errorf("accuracy %g: Index(%v) = %d, want %d", tc.accuracy, c.d, got, c.want)
			}
		}
		if z, ref := m.ZeroThreshold(), m.Upper(lo-1); z != ref || float64(m.Min()) <= z {
			t.Errorf("accuracy %g: zero threshold %g, want %g below Min %v", tc.accuracy, z, ref, m.Min())
		}
	}
}
