package forecast

import (
	"encoding/json"
	"math"
	"strconv"
	"time"
)

// Model says what was fitted, so a reader can judge the bands.
type Model struct {
	Kind    string        `json:"kind"`
	Step    time.Duration `json:"step"`
	Samples int           `json:"samples"` // buckets with a value
	// Seasons lists the seasons considered: fitted ("own"), borrowed from
	// a coarser precision ("1h", "1d"), or refused with the reason.
	Seasons []Season `json:"seasons"`
	// Level and trend smoothing, and the damping of the trend.
	Alpha   float64 `json:"alpha"`
	Beta    float64 `json:"beta"`
	Damping float64 `json:"damping"`
	// Dispersion is the noise beyond Poisson (counts: the share of the
	// mean added to its standard deviation; error ratios: the
	// intra-bucket correlation) or the log-scale deviation (latency).
	Dispersion float64 `json:"dispersion"`
	// Scale multiplies the noise model's standard deviation to match the
	// robust size of the one-step errors in the history; ScaleAhead does
	// the same for the errors of forecasts made Lead buckets ahead. The
	// bands of a forecast widen from one to the other.
	Scale      float64 `json:"scale"`
	ScaleAhead float64 `json:"scale_ahead"`
	Lead       int     `json:"lead"`
	// Cleaned counts history buckets left out of the fit as outliers.
	Cleaned int      `json:"cleaned"`
	Notes   []string `json:"notes,omitempty"`
}

// Point is one bucket: observed (history) or to come (forecast).
type Point struct {
	Time     time.Time `json:"time"`
	Value    float64   `json:"value"`    // observed; NaN when missing or future
	Hits     float64   `json:"hits"`     // ErrorRatio: hits of the bucket
	Expected float64   `json:"expected"` // mean count, ratio, or median latency
	Band80   Band      `json:"band80"`
	Band95   Band      `json:"band95"`
	// Score is the bucket's place in its one-step predictive distribution
	// as a normal quantile: 0 is as expected, -3 is as low as one bucket
	// in 740. NaN for warm-up, missing and future buckets.
	Score   float64 `json:"score"`
	Cleaned bool    `json:"cleaned"` // left out of the fit
	Anomaly *Flag   `json:"anomaly,omitempty"`
}

func (p predictive) point(t time.Time) Point {
	b80, b95 := p.bands()
	return Point{Time: t, Hits: p.hits, Expected: p.expected(), Band80: b80, Band95: b95}
}

// num is a float that encodes NaN (missing, future, not computed) as
// JSON null, which has no NaN.
type num float64

func (n num) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return []byte("null"), nil
	}
	return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
}

// MarshalJSON writes the band's NaN ends as null.
func (b Band) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Lo num `json:"lo"`
		Hi num `json:"hi"`
	}{num(b.Lo), num(b.Hi)})
}

// MarshalJSON writes the point's NaN fields (a future bucket's value and
// score, a missing bucket's) as null.
func (p Point) MarshalJSON() ([]byte, error) {
	type plain Point
	return json.Marshal(struct {
		plain
		Value num `json:"value"`
		Score num `json:"score"`
	}{plain(p), num(p.Value), num(p.Score)})
}
