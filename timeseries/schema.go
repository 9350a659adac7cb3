package timeseries

import "github.com/pulse-dev/pulse/timeseries/internal/series"

// Schema names the Redis keys of a set of series. The zero value gives
// exactly the keys of the original design: hashes
// "count:<precision>:<name>" and the sorted set "known:".
type Schema struct {
	// Prefix is put before every key, so several apps can share one Redis.
	Prefix string
	// Precisions are the bucket widths in seconds, each > 0, no repeats,
	// at most 16. Nil means those of the "Redis in Action" design: 5 s,
	// 1 min, 5 min, 1 h, 5 h and 1 day.
	Precisions []int
}

// Normalize returns s with its defaults filled in (nil Precisions become
// the default ones) and its precisions sorted, or an error saying what is
// wrong with it: the schema a Store built from s reads by.
func (s Schema) Normalize() (Schema, error) {
	n, err := series.Keys(s).Normalize()
	if err != nil {
		return s, err
	}
	return Schema(n), nil
}

// CheckPrecision returns a *PrecisionError when p is not one of s's
// precisions.
func (s Schema) CheckPrecision(p int) error { return series.Keys(s).CheckPrecision(p) }

// VisitorPrecisions are s's precisions at which a Recorder keeps
// visitors, in s's order: those of 1 min, 5 min, 1 h and 1 day it has.
func (s Schema) VisitorPrecisions() []int { return series.Keys(s).VisitorPrecisions() }

// CheckVisitorPrecision returns a *PrecisionError for a precision s does
// not have, and a *VisitorPrecisionError for one of its precisions at
// which no visitors are kept.
func (s Schema) CheckVisitorPrecision(p int) error {
	return series.Keys(s).CheckVisitorPrecision(p)
}

// KnownKey is the sorted set that lists every series: one member per
// series and precision (see KnownMember).
func (s Schema) KnownKey() string { return series.Keys(s).KnownKey() }

// CountKey is the hash holding the counts of one series at one precision,
// a field per bucket start.
func (s Schema) CountKey(precision int, name string) string {
	return series.Keys(s).CountKey(precision, name)
}

// MemberKey is the hash of the series a member of the known set names:
// MemberKey(KnownMember(p, name)) == CountKey(p, name), without parsing
// the member.
func (s Schema) MemberKey(member string) string { return series.Keys(s).MemberKey(member) }

// KnownMember is the member of the known set that lists one series at
// one precision.
func KnownMember(precision int, name string) string { return series.Member(precision, name) }

// ParseKnownMember splits a member of the known set into its precision
// and series name, the inverse of KnownMember; ok is false for a member
// KnownMember cannot have made.
func ParseKnownMember(member string) (precision int, name string, ok bool) {
	return series.ParseMember(member)
}

// DurationKey is the hash of one bucket of a series' request durations
// ("lat:{count:<precision>:<name>}:<bucket start>", see the package
// documentation); ok is false for a name whose durations no key can
// hold in its count key's cluster slot ("a}b"), which records none.
func (s Schema) DurationKey(precision int, name string, bucket int64) (key string, ok bool) {
	return series.Keys(s).LatKey(precision, name, bucket)
}

// VisitorKey is the HyperLogLog of one bucket of a series' visitors
// ("uv:{count:<precision>:<name>}:<bucket start>"); ok is false exactly
// when DurationKey's is.
func (s Schema) VisitorKey(precision int, name string, bucket int64) (key string, ok bool) {
	return series.Keys(s).VisitorKey(precision, name, bucket)
}
