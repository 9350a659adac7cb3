package latency

import (
	"fmt"
	"math"
	"time"
)

// Names of the reserved fields of a histogram's Redis hash. Every other
// field is a bin: k in decimal names bin lo+k, lo being the bin of
// Config.Min (see Mapping.Bins). Counting from Min keeps the names small:
// with the default mapping every bin up to 140 ms is named below 128,
// which a Redis listpack stores in one byte.
const (
	FieldCount     = "n"   // count, added with HINCRBY
	FieldSum       = "s"   // sum in nanoseconds, added with HINCRBY
	FieldMin       = "min" // min in nanoseconds, kept if smaller
	FieldMax       = "max" // max in nanoseconds, kept if larger
	FieldUnderflow = "u"   // durations below Config.Min, added with HINCRBY
	FieldOverflow  = "o"   // durations above Config.Max, added with HINCRBY
)

// Op says how a field merges into the one of the same name in Redis.
type Op uint8

const (
	Add   Op = iota // HINCRBY: counts and the sum
	Lower           // set if smaller or absent: the min
	Raise           // set if larger or absent: the max
)

// A Field is one field of the Redis hash of a histogram: its name, its
// value and how it merges with what is there.
type Field struct {
	Name  string
	Value int64
	Op    Op
}

// Fields is h in the Redis hash form: its non-empty bins by index, the
// underflow and overflow bins if not empty, then count, sum, min and max.
// Applying them to a hash (Add by HINCRBY, Lower and Raise by a compare
// and HSET) merges h into the histogram the hash holds. An empty h has
// no fields.
func (h *Histogram) Fields() []Field {
	if h.count == 0 {
		return nil
	}
	var fs []Field
	for s, n := range h.bins {
		if n == 0 {
			continue
		}
		fs = append(fs, Field{Name: h.m.fieldName(s), Value: int64(n), Op: Add})
	}
	return append(fs,
		Field{FieldCount, int64(h.count), Add},
		Field{FieldSum, h.sum, Add},
		Field{FieldMin, int64(h.min), Lower},
		Field{FieldMax, int64(h.max), Raise})
}

// fieldName is the Redis field of slot s.
func (m *Mapping) fieldName(s int) string {
	switch s {
	case 0:
		return FieldUnderflow
	case m.hi - m.lo + 2:
		return FieldOverflow
	}
	return m.names[s-1]
}

// Decode reads a histogram of m from its Redis hash, as HGETALL returns
// it. A missing or empty hash is an empty histogram. It fails, with an
// error starting "latency: ", on a field it does not know, a bin outside
// m's range, a value that is not a non-negative integer, or a count that
// is not the sum of the bins.
func Decode(m *Mapping, fields map[string]string) (*Histogram, error) {
	d := decoder{h: NewHistogram(m)}
	for name, text := range fields {
		if err := decodeField(&d, name, text); err != nil {
			return nil, err
		}
	}
	if err := d.finish(); err != nil {
		return nil, err
	}
	return d.h, nil
}

// DecodeReply is Decode on the reply to HGETALL as redigo gives it,
// field names and values alternating, each a []byte, decoded into h,
// which it empties first. It reads the bytes in place, so that decoding
// the many buckets of a long read allocates nothing. On error h is left
// empty.
func DecodeReply(h *Histogram, reply []any) error {
	h.Reset()
	if len(reply)%2 != 0 {
		return fmt.Errorf("latency: a reply of %d entries is not pairs of field and value", len(reply))
	}
	d := decoder{h: h}
	for i := 0; i < len(reply); i += 2 {
		name, ok := reply[i].([]byte)
		text, ok2 := reply[i+1].([]byte)
		if !ok || !ok2 {
			h.Reset()
			return fmt.Errorf("latency: reply entries %d and %d are %T and %T, not strings", i, i+1, reply[i], reply[i+1])
		}
		if err := decodeField(&d, name, text); err != nil {
			h.Reset()
			return err
		}
	}
	if err := d.finish(); err != nil {
		h.Reset()
		return err
	}
	return nil
}

// NewHistograms returns n empty histograms of m made in two allocations,
// for a read that decodes many buckets.
func NewHistograms(m *Mapping, n int) []Histogram {
	hs := make([]Histogram, n)
	bins := make([]uint64, n*m.slots())
	for i := range hs {
		hs[i] = Histogram{m: m, bins: bins[i*m.slots() : (i+1)*m.slots() : (i+1)*m.slots()]}
		hs[i].Reset()
	}
	return hs
}

// text is the two forms a field comes in: a map's strings, a reply's
// bytes.
type text interface{ ~string | ~[]byte }

// decoder fills h from the fields of a hash, in any order, and keeps
// what finish checks.
type decoder struct {
	h                *Histogram
	count            uint64
	haveMin, haveMax bool
}

func decodeField[S text](d *decoder, name, value S) error {
	v, ok := parseCount(value)
	if !ok {
		return fmt.Errorf("latency: field %q: value %q is not a non-negative integer", name, value)
	}
	h := d.h
	switch {
	case same(name, FieldCount):
		d.count = v
	case same(name, FieldSum):
		h.sum = int64(v)
	case same(name, FieldMin):
		h.min, d.haveMin = time.Duration(v), true
	case same(name, FieldMax):
		h.max, d.haveMax = time.Duration(v), true
	default:
		s, err := slotOfField(h.m, name)
		if err != nil {
			return err
		}
		h.bins[s] = v
		h.count += v
	}
	return nil
}

// finish checks that the count is the bins' and that a histogram with
// durations has its min and max.
func (d *decoder) finish() error {
	h := d.h
	if d.count != h.count {
		return fmt.Errorf("latency: count %d, but the bins hold %d", d.count, h.count)
	}
	if d.count > 0 && (!d.haveMin || !d.haveMax || h.min > h.max) {
		return fmt.Errorf("latency: %d durations without a min and max in order", d.count)
	}
	if d.count == 0 {
		h.Reset()
	}
	return nil
}

// slotOfField is the slot of a bin's field name: "u", "o", or the bin's
// offset from lo in decimal, written as strconv.Itoa writes it.
func slotOfField[S text](m *Mapping, name S) (int, error) {
	switch {
	case same(name, FieldUnderflow):
		return 0, nil
	case same(name, FieldOverflow):
		return m.hi - m.lo + 2, nil
	}
	digits := name
	if len(name) > 0 && name[0] == '-' {
		digits = name[1:]
	}
	k, ok := parseCount(digits)
	negative := len(digits) < len(name)
	if !ok || (len(digits) > 1 && digits[0] == '0') || (negative && k == 0) {
		return 0, fmt.Errorf("latency: unknown field %q", name)
	}
	if negative || k > uint64(m.hi-m.lo) {
		return 0, fmt.Errorf("latency: bin field %s outside the mapping's 0..%d", name, m.hi-m.lo)
	}
	return int(k) + 1, nil
}

// parseCount reads a non-negative int64 in decimal digits, without sign.
func parseCount[S text](s S) (uint64, bool) {
	// 19 digits cannot overflow a uint64; MaxInt64 has 19.
	if len(s) == 0 || len(s) > 19 {
		return 0, false
	}
	var v uint64
	for i := 0; i < len(s); i++ {
		c := s[i] - '0'
		if c > 9 {
			return 0, false
		}
		v = v*10 + uint64(c)
	}
	return v, v <= math.MaxInt64
}

// same reports whether name spells lit, without converting name.
func same[S text](name S, lit string) bool {
	if len(name) != len(lit) {
		return false
	}
	for i := 0; i < len(lit); i++ {
		if name[i] != lit[i] {
			return false
		}
	}
	return true
}
