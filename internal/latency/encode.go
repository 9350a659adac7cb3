package latency

import (
	"fmt"
	"strconv"
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
	h := NewHistogram(m)
	var count uint64
	var haveMin, haveMax bool
	for name, text := range fields {
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil || v < 0 {
			return nil, fmt.Errorf("latency: field %q: value %q is not a non-negative integer", name, text)
		}
		switch name {
		case FieldCount:
			count = uint64(v)
		case FieldSum:
			h.sum = v
		case FieldMin:
			h.min, haveMin = time.Duration(v), true
		case FieldMax:
			h.max, haveMax = time.Duration(v), true
		default:
			s, err := m.slotOfField(name)
			if err != nil {
				return nil, err
			}
			h.bins[s] = uint64(v)
			h.count += uint64(v)
		}
	}
	if count != h.count {
		return nil, fmt.Errorf("latency: count %d, but the bins hold %d", count, h.count)
	}
	if count > 0 && (!haveMin || !haveMax || h.min > h.max) {
		return nil, fmt.Errorf("latency: %d durations without a min and max in order", count)
	}
	if count == 0 {
		h.Reset()
	}
	return h, nil
}

// slotOfField is the slot of a bin's field name.
func (m *Mapping) slotOfField(name string) (int, error) {
	switch name {
	case FieldUnderflow:
		return 0, nil
	case FieldOverflow:
		return m.hi - m.lo + 2, nil
	}
	k, err := strconv.Atoi(name)
	if err != nil || strconv.Itoa(k) != name {
		return 0, fmt.Errorf("latency: unknown field %q", name)
	}
	if k < 0 || k > m.hi-m.lo {
		return 0, fmt.Errorf("latency: bin field %d outside the mapping's 0..%d", k, m.hi-m.lo)
	}
	return k + 1, nil
}
