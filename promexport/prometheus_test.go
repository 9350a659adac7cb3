package promexport_test

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/promtest"
	"github.com/pulse-dev/pulse/promexport"
	"github.com/pulse-dev/pulse/timeseries"
)

// A real Prometheus server scrapes the collector every second. From the
// classic buckets (a server without native histograms) its median falls
// in the bucket that holds the median of the durations recorded; from
// the native histogram (a server with them) it is within one bucket,
// 2^(1/8), of the recorder's own median.
func TestPrometheusServerQuantile(t *testing.T) {
	rec, _ := timedRecorder(t, 5)
	col := promexport.NewCollector(rec)
	target := strings.TrimPrefix(serve(t, col).URL, "http://")
	t.Run("classic", func(t *testing.T) {
		var lo, hi float64
		for _, m := range scrape(t, col)["pulse_request_duration_seconds"].Metric {
			if m.Label[0].GetValue() == "api" {
				lo, hi = medianBucket(m.Histogram)
			}
		}
		if median := (24 * time.Millisecond).Seconds(); !(median > lo && median <= hi) {
			t.Fatalf("the exposed buckets put the median in (%g, %g], not around %g", lo, hi, median)
		}
		prom := promtest.Start(t, target)
		query := `histogram_quantile(0.5, pulse_request_duration_seconds_bucket{series="api"})`
		got := prom.Wait(t, query, 30*time.Second)
		t.Logf("%s = %g; the known durations' median bucket is (%g, %g]", query, got, lo, hi)
		if !(got > lo && got <= hi) {
			t.Errorf("%s = %g, not in (%g, %g]", query, got, lo, hi)
		}
	})
	t.Run("native", func(t *testing.T) {
		own := ownMedian(t, rec, "api")
		prom := promtest.Start(t, target, "--enable-feature=native-histograms")
		query := `histogram_quantile(0.5, pulse_request_duration_seconds{series="api"})`
		got := prom.Wait(t, query, 30*time.Second)
		t.Logf("%s = %g; the recorder's own median %g", query, got, own)
		if math.Abs(math.Log2(got/own)) > 1.0/8 {
			t.Errorf("%s = %g, more than a bucket from the recorder's %g", query, got, own)
		}
	})
}

// ownMedian is the recorder's own median of the durations of a series,
// in seconds.
func ownMedian(t *testing.T, rec *timeseries.Recorder, name string) float64 {
	t.Helper()
	for _, tot := range rec.DurationTotals() {
		if tot.Name == name {
			return tot.Hist.Quantile(0.5).Seconds()
		}
	}
	t.Fatalf("no durations of %q", name)
	return 0
}
