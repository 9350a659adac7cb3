package series_test

import (
	"fmt"

	"github.com/pulse-dev/pulse/timeseries"
	"github.com/pulse-dev/pulse/timeseries/internal/series"
)

// FillZero turns the sparse samples Redis keeps into one point per
// bucket, as a chart draws them; a sample off a bucket start is skipped.
func ExampleFillZero() {
	samples := []timeseries.Sample{{Time: 60, Count: 3}, {Time: 77, Count: 9}, {Time: 180, Count: 1}}
	for _, s := range series.FillZero(samples, 60, 30, 200) {
		fmt.Println(s.Time, s.Count)
	}
	// Output:
	// 60 3
	// 120 0
	// 180 1
}
