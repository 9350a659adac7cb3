package series

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultPrecisions are the bucket widths, in seconds, of the
// "Redis in Action" counter design: 5 s, 1 min, 5 min, 1 h, 5 h, 1 day.
var DefaultPrecisions = []int{5, 60, 300, 3600, 18000, 86400}

// MaxPrecisions bounds the precisions of a schema.
const MaxPrecisions = 16

// MaxNameLen bounds a series name, in bytes.
const MaxNameLen = 200

// Keys names the Redis keys of a set of series: hashes
// "<prefix>count:<precision>:<name>" and the sorted set "<prefix>known:".
// It has the layout of timeseries.Schema, which converts to it
// (series.Keys(s)).
type Keys struct {
	Prefix     string
	Precisions []int
}

// Normalize returns s with nil precisions set to DefaultPrecisions and
// precisions sorted, or an error saying what is wrong.
func (s Keys) Normalize() (Keys, error) {
	if s.Precisions == nil {
		s.Precisions = DefaultPrecisions
	}
	if len(s.Precisions) == 0 {
		return s, errors.New("timeseries: no precisions")
	}
	if len(s.Precisions) > MaxPrecisions {
		return s, fmt.Errorf("timeseries: %d precisions, at most %d", len(s.Precisions), MaxPrecisions)
	}
	ps := slices.Clone(s.Precisions)
	slices.Sort(ps)
	for i, p := range ps {
		if p <= 0 {
			return s, fmt.Errorf("timeseries: precision %d: must be > 0 seconds", p)
		}
		if i > 0 && ps[i-1] == p {
			return s, fmt.Errorf("timeseries: precision %d listed twice", p)
		}
	}
	s.Precisions = ps
	return s, nil
}

// CheckPrecision returns a *PrecisionError when p is not one of the
// schema's precisions.
func (s Keys) CheckPrecision(p int) error {
	if !slices.Contains(s.Precisions, p) {
		return &PrecisionError{Precision: p, Valid: slices.Clone(s.Precisions)}
	}
	return nil
}

// KnownKey is the sorted set that lists every series.
func (s Keys) KnownKey() string { return s.Prefix + "known:" }

// CountKey is the hash holding one series at one precision.
func (s Keys) CountKey(precision int, name string) string {
	return s.MemberKey(Member(precision, name))
}

// MemberKey is the hash of the series named by a known-set member, the
// inverse of Member: CountKey(p, name) == MemberKey(Member(p, name)).
func (s Keys) MemberKey(member string) string { return s.Prefix + "count:" + member }

// Member is the member of the known set for one series at one precision.
func Member(precision int, name string) string {
	return strconv.Itoa(precision) + ":" + name
}

// ParseMember splits a known-set member into precision and name. Names may
// contain colons; the precision never does.
func ParseMember[T string | []byte](m T) (precision int, name T, ok bool) {
	i := 0
	for i < len(m) && m[i] != ':' {
		i++
	}
	if i == 0 || i == len(m) {
		return 0, name, false
	}
	p, err := strconv.Atoi(string(m[:i]))
	if err != nil || p <= 0 {
		return 0, name, false
	}
	return p, m[i+1:], true
}

// ValidateName reports whether name may be used as a series name: valid
// UTF-8, 1 to MaxNameLen bytes, no control characters.
func ValidateName(name string) error {
	if name == "" {
		return errors.New("timeseries: empty series name")
	}
	if len(name) > MaxNameLen {
		return fmt.Errorf("timeseries: series name longer than %d bytes", MaxNameLen)
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("timeseries: series name %q is not valid UTF-8", name)
	}
	if strings.ContainsFunc(name, unicode.IsControl) {
		return fmt.Errorf("timeseries: series name %q has a control character", name)
	}
	return nil
}
