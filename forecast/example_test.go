package forecast_test

import (
	"fmt"
	"math"
	"time"

	"github.com/pulse-dev/pulse/forecast"
)

// Five days of hourly hits with a daily shape, whose last three hours
// went dark: the forecast follows the day, and the outage is one
// incident, still open, its three buckets flagged.
func Example() {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	hits := make([]float64, 120)
	for i := range hits {
		hour := float64(i % 24)
		wobble := float64((i*7919)%13) - 6 // stands in for noise
		hits[i] = math.Round(200 + 120*math.Sin(2*math.Pi*(hour-9)/24) + wobble)
	}
	hits[117], hits[118], hits[119] = 0, 0, 0

	fd, err := forecast.Fit(forecast.Series{Name: "GET /api/orders", Step: time.Hour, Start: start, Values: hits})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, s := range fd.Model.Seasons {
		if s.Refused != "" {
			fmt.Printf("%s season refused: %s\n", s.Name, s.Refused)
			continue
		}
		fmt.Printf("%s season: %s\n", s.Name, s.Source)
	}
	for _, in := range fd.Incidents {
		fmt.Printf("%s %s (%s) from %s, open %v: %d buckets, worst score %.1f\n", in.Series, in.Kind, in.Direction, in.Start.Format("15:04"), in.Open, in.Buckets, in.Score)
	}
	for _, f := range fd.Flags {
		fmt.Printf("%s %s at %s: %v hits, expected about %.0f\n", f.Series, f.Kind, f.Bucket.Format("15:04"), f.Observed, f.Expected)
	}
	for _, p := range fd.Forecast(3) {
		fmt.Printf("%s expect %.0f, 95 %% band %.0f to %.0f\n", p.Time.Format("Jan 2 15:04"), p.Expected, p.Band95.Lo, p.Band95.Hi)
	}
	// Output:
	// daily season: own
	// weekly season refused: 120 buckets of history, a weekly season of 168 buckets needs 2 seasons (336)
	// GET /api/orders drop (down) from 21:00, open true: 3 buckets, worst score -42.3
	// GET /api/orders drop at 21:00: 0 hits, expected about 199
	// GET /api/orders drop at 22:00: 0 hits, expected about 168
	// GET /api/orders drop at 23:00: 0 hits, expected about 141
	// Mar 7 00:00 expect 116, 95 % band 95 to 138
	// Mar 7 01:00 expect 97, 95 % band 78 to 117
	// Mar 7 02:00 expect 84, 95 % band 67 to 103
}

// A scan that fits a series every few seconds borrows the same 1 h and
// 1 d series for an hour: prepared once, their shapes are fitted once.
func ExampleContext_Prepare() {
	start := time.Date(2026, 3, 2, 0, 0, 0, 0, time.UTC)
	hourly := forecast.Series{Name: "hits", Step: time.Hour, Start: start, Values: make([]float64, 120)}
	for i := range hourly.Values {
		hourly.Values[i] = math.Round(6000 + 3000*math.Sin(2*math.Pi*float64(i%24-9)/24))
	}
	cx := forecast.Context{Hourly: &hourly}.Prepare(forecast.Counts)
	now := start.Add(120 * time.Hour)
	for scan := range 3 {
		minutes := forecast.Series{Name: "hits", Step: time.Minute, Start: now.Add(time.Duration(scan-120) * time.Minute), Values: make([]float64, 120)}
		for i := range minutes.Values {
			minutes.Values[i] = 100
		}
		fd, err := forecast.FitWithConfig(minutes, forecast.Config{Context: cx})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(fd.Model.Seasons[0].Name, "from", fd.Model.Seasons[0].Source)
	}
	// Output:
	// daily from 1h
	// daily from 1h
	// daily from 1h
}
