package timeseries

import "github.com/pulse-dev/pulse/timeseries/internal/series"

// DefaultFlushInterval is how often a Recorder writes when
// Config.FlushInterval is zero.
const DefaultFlushInterval = series.DefaultFlushInterval

// PrecisionError is the error for a precision the schema does not have;
// it matches ErrUnknownPrecision (errors.Is). Valid lists the schema's
// precisions.
type PrecisionError = series.PrecisionError

// VisitorPrecisionError is the error for a precision of the schema at
// which no visitors are kept; it matches ErrNoVisitors (errors.Is). Kept
// lists the precisions that keep them.
type VisitorPrecisionError = series.VisitorPrecisionError

// BucketStart is the start, in unix seconds, of the bucket of width
// precision (seconds, > 0) that holds unix second t: the time the bucket's
// Sample has. It rounds down, also before 1970.
func BucketStart(t int64, precision int) int64 { return series.BucketStart(t, precision) }

// FillZero returns one sample per bucket start within [from, to] at
// precision: the count of the sample on that start in samples (sorted by
// time, as a read returns them), and zero where there is none. It is what
// Range.FillZero gives, for samples read otherwise; the caller bounds the
// window, since the result has one sample per bucket.
func FillZero(samples []Sample, precision int, from, to int64) []Sample {
	return series.FillZero(samples, precision, from, to)
}

// ValidateName returns an error saying what is wrong when name cannot be
// a series name: names are valid UTF-8, 1 to 200 bytes, without control
// characters.
func ValidateName(name string) error { return series.ValidateName(name) }
