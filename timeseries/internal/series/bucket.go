package series

import (
	"errors"
	"fmt"
)

// ErrUnknownPrecision is matched (errors.Is) by the error for a precision
// the schema does not have.
var ErrUnknownPrecision = errors.New("timeseries: unknown precision")

// ErrRangeTooLarge means a zero-filled read would hold more than
// MaxSamples samples.
var ErrRangeTooLarge = errors.New("timeseries: range too large")

// MaxSamples bounds the samples of one zero-filled read.
const MaxSamples = 20000

// PrecisionError reports a precision outside the schema.
type PrecisionError struct {
	Precision int
	Valid     []int
}

func (e *PrecisionError) Error() string {
	return fmt.Sprintf("timeseries: unknown precision %d (have %v)", e.Precision, e.Valid)
}

// Is makes errors.Is(err, ErrUnknownPrecision) true.
func (e *PrecisionError) Is(target error) bool { return target == ErrUnknownPrecision }

// BucketStart is the start, in unix seconds, of the bucket of width
// precision that holds unix second t: floor(t/p)·p, also for t < 0.
func BucketStart(t int64, precision int) int64 {
	p := int64(precision)
	b := t / p * p
	if b > t { // Go's division truncates toward zero
		b -= p
	}
	return b
}

// BucketSpan gives the first and last bucket starts within [from, to] at
// precision, and how many buckets that is (0 when none).
func BucketSpan(precision int, from, to int64) (first, last, n int64) {
	p := int64(precision)
	first = BucketStart(from, precision)
	if first < from {
		first += p
	}
	last = BucketStart(to, precision)
	if last < first {
		return first, last, 0
	}
	return first, last, (last-first)/p + 1
}

// sample is the layout of timeseries.Sample: the count of the bucket
// starting at Time. The zero-filling functions take a slice of any type
// with this layout, so that they serve timeseries.Sample without naming it.
type sample = struct {
	Time  int64 `json:"time"`
	Count int64 `json:"count"`
}

// FillZero returns one sample per bucket start within [from, to], with
// the count of samples (sorted by time) where one is on that start and
// zero elsewhere. It is what a chart of the window draws; a caller bounds
// the window first, as FillRange does (ErrRangeTooLarge).
func FillZero[S ~sample](samples []S, precision int, from, to int64) []S {
	first, last, n := BucketSpan(precision, from, to)
	out := make([]S, 0, n)
	i := 0
	for t := first; t <= last; t += int64(precision) {
		for i < len(samples) && sample(samples[i]).Time < t {
			i++ // not on a bucket boundary: written by something else
		}
		c := int64(0)
		if i < len(samples) && sample(samples[i]).Time == t {
			c = sample(samples[i]).Count
		}
		out = append(out, S(sample{Time: t, Count: c}))
	}
	return out
}

// FillRange zero-fills samples (sorted by time) over [from, to] as
// FillZero does, after closing an open end (0): from is then the oldest
// sample, to the current bucket (or a newer sample). A range of more than
// MaxSamples buckets is ErrRangeTooLarge.
func FillRange[S ~sample](samples []S, precision int, from, to, current int64) ([]S, error) {
	if to == 0 {
		to = current
		if n := len(samples); n > 0 && sample(samples[n-1]).Time > to {
			to = sample(samples[n-1]).Time
		}
	}
	if from == 0 {
		if len(samples) == 0 {
			return []S{}, nil
		}
		from = sample(samples[0]).Time
	}
	if _, _, n := BucketSpan(precision, from, to); n > MaxSamples {
		return nil, fmt.Errorf("%w: %d buckets, at most %d", ErrRangeTooLarge, n, MaxSamples)
	}
	return FillZero(samples, precision, from, to), nil
}
