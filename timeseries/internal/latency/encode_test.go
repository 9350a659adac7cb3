package latency

import (
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// applyFields does to hash what Redis does with fs: HINCRBY for Add, a
// compare and HSET for Lower and Raise.
func applyFields(t *testing.T, hash map[string]string, fs []Field) {
	t.Helper()
	for _, f := range fs {
		old, ok := hash[f.Name]
		v, _ := strconv.ParseInt(old, 10, 64)
		switch {
		case !ok:
			v = f.Value
		case f.Op == Add:
			v += f.Value
		case f.Op == Lower:
			v = min(v, f.Value)
		case f.Op == Raise:
			v = max(v, f.Value)
		default:
			t.Fatalf("field %q: unknown op %d", f.Name, f.Op)
		}
		hash[f.Name] = strconv.FormatInt(v, 10)
	}
}

func TestEncodeRoundTrip(t *testing.T) {
	m := mustMapping(t, Config{Min: time.Millisecond, Max: 10 * time.Second})
	for _, tc := range []struct {
		name   string
		ds     []time.Duration
		fields int
	}{
		{"empty", nil, 0},
		{"one", []time.Duration{20 * time.Millisecond}, 5},
		{"under and over", []time.Duration{0, time.Microsecond, time.Minute}, 6},
		{"log-normal", logNormal(rand.New(rand.NewPCG(7, 7)), 5000, 20*time.Millisecond, 1), -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := histogramOf(m, tc.ds)
			fs := h.Fields()
			if tc.fields >= 0 && len(fs) != tc.fields {
				t.Errorf("%d fields, want %d: %v", len(fs), tc.fields, fs)
			}
			hash := map[string]string{}
			applyFields(t, hash, fs)
			got, err := Decode(m, hash)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(h) {
				t.Errorf("decoded count %d sum %v min %v max %v; encoded %d %v %v %v",
					got.Count(), got.Sum(), got.Min(), got.Max(), h.Count(), h.Sum(), h.Min(), h.Max())
			}
			into := histogramOf(m, []time.Duration{time.Hour}) // DecodeReply must empty it first
			if err := DecodeReply(into, replyOf(hash)); err != nil {
				t.Fatal(err)
			}
			if !into.Equal(h) {
				t.Errorf("DecodeReply: count %d sum %v min %v max %v; encoded %d %v %v %v",
					into.Count(), into.Sum(), into.Min(), into.Max(), h.Count(), h.Sum(), h.Min(), h.Max())
			}
		})
	}
}

// TestEncodeMerges: the fields of several histograms applied to one hash,
// as several instances flushing into one bucket do, decode to their merge.
func TestEncodeMerges(t *testing.T) {
	m := mustMapping(t, Config{})
	rng := rand.New(rand.NewPCG(3, 3))
	hash := map[string]string{}
	want := NewHistogram(m)
	for i := range 5 {
		h := histogramOf(m, logNormal(rng, 100*(i+1), time.Duration(i+1)*10*time.Millisecond, 1))
		applyFields(t, hash, h.Fields())
		if err := want.Merge(h); err != nil {
			t.Fatal(err)
		}
	}
	got, err := Decode(m, hash)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Equal(want) {
		t.Errorf("hash holds count %d min %v max %v; merge has %d %v %v", got.Count(), got.Min(), got.Max(), want.Count(), want.Min(), want.Max())
	}
}

func TestDecodeErrors(t *testing.T) {
	m := mustMapping(t, Config{})
	lo, hi := m.Bins()
	bin := "10" // bin lo+10
	ok := func(extra map[string]string) map[string]string {
		f := map[string]string{bin: "2", "n": "2", "s": "100000", "min": "40000", "max": "60000"}
		for k, v := range extra {
			if v == "" {
				delete(f, k)
			} else {
				f[k] = v
			}
		}
		return f
	}
	if _, err := Decode(m, ok(nil)); err != nil {
		t.Fatalf("valid hash: %v", err)
	}
	for _, tc := range []struct {
		name   string
		fields map[string]string
		want   string
	}{
		{"unknown field", ok(map[string]string{"x": "1"}), "unknown field"},
		{"padded index", ok(map[string]string{"0" + bin: "1"}), "unknown field"},
		{"bin below range", ok(map[string]string{"-1": "1"}), "outside"},
		{"bin above range", ok(map[string]string{strconv.Itoa(hi - lo + 1): "1"}), "outside"},
		{"not a number", ok(map[string]string{bin: "two"}), "not a non-negative integer"},
		{"negative", ok(map[string]string{"s": "-5"}), "not a non-negative integer"},
		{"count off", ok(map[string]string{"n": "3"}), "count 3"},
		{"no min", ok(map[string]string{"min": ""}), "min and max"},
		{"min above max", ok(map[string]string{"min": "70000"}), "min and max"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(m, tc.fields)
			if err == nil || !strings.HasPrefix(err.Error(), "latency: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode: %v; want an error starting %q about %q", err, "latency: ", tc.want)
			}
			h := NewHistogram(m)
			err = DecodeReply(h, replyOf(tc.fields))
			if err == nil || !strings.HasPrefix(err.Error(), "latency: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("DecodeReply: %v; want an error starting %q about %q", err, "latency: ", tc.want)
			}
			if h.Count() != 0 {
				t.Errorf("DecodeReply failed but left %d durations", h.Count())
			}
		})
	}
}

// replyOf is hash as redigo gives HGETALL's reply.
func replyOf(hash map[string]string) []any {
	var r []any
	for k, v := range hash {
		r = append(r, []byte(k), []byte(v))
	}
	return r
}

// TestDecodeReplyShapes: a reply that is not pairs of strings is an
// error, not a panic.
func TestDecodeReplyShapes(t *testing.T) {
	m := mustMapping(t, Config{})
	for _, tc := range []struct {
		name  string
		reply []any
		want  string
	}{
		{"odd", []any{[]byte("n"), []byte("0"), []byte("s")}, "not pairs"},
		{"integer", []any{[]byte("n"), int64(0)}, "not strings"},
		{"nil", []any{nil, []byte("0")}, "not strings"},
		{"too long", []any{[]byte("s"), []byte("99999999999999999999")}, "not a non-negative integer"},
		{"above int64", []any{[]byte("s"), []byte("9223372036854775808")}, "not a non-negative integer"},
		{"empty value", []any{[]byte("s"), []byte("")}, "not a non-negative integer"},
		{"minus zero bin", []any{[]byte("-0"), []byte("1")}, "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := DecodeReply(NewHistogram(m), tc.reply)
			if err == nil || !strings.HasPrefix(err.Error(), "latency: ") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("DecodeReply: %v; want an error starting %q about %q", err, "latency: ", tc.want)
			}
		})
	}
	if err := DecodeReply(NewHistogram(m), []any{[]byte("s"), []byte("9223372036854775807"), []byte("n"), []byte("0")}); err != nil {
		t.Errorf("largest sum: %v", err)
	}
}

// TestDecodeReplyAllocs: decoding into a histogram made beforehand, as
// a read of many buckets does, allocates nothing.
func TestDecodeReplyAllocs(t *testing.T) {
	m := mustMapping(t, Config{})
	hash := map[string]string{}
	applyFields(t, hash, histogramOf(m, logNormal(rand.New(rand.NewPCG(5, 5)), 1000, 50*time.Millisecond, 1)).Fields())
	reply := replyOf(hash)
	hs := NewHistograms(m, 2)
	if n := testing.AllocsPerRun(100, func() {
		if err := DecodeReply(&hs[1], reply); err != nil {
			t.Fatal(err)
		}
	}); n != 0 {
		t.Errorf("%v allocations per DecodeReply, want 0", n)
	}
	if hs[0].Count() != 0 || hs[1].Count() != 1000 {
		t.Errorf("counts %d and %d after decoding into the second, want 0 and 1000", hs[0].Count(), hs[1].Count())
	}
}

func TestFieldNames(t *testing.T) {
	m := mustMapping(t, Config{})
	lo, _ := m.Bins()
	d := 20 * time.Millisecond
	fs := histogramOf(m, []time.Duration{d}).Fields()
	want := []Field{
		{strconv.Itoa(m.Index(d) - lo), 1, Add},
		{"n", 1, Add}, {"s", int64(d), Add}, {"min", int64(d), Lower}, {"max", int64(d), Raise},
	}
	if !slices.Equal(fs, want) {
		t.Errorf("fields %v, want %v", fs, want)
	}
	if k := m.Index(140*time.Millisecond) - lo; k >= 128 {
		t.Errorf("140 ms is bin field %d, want below 128 as documented", k)
	}
}
