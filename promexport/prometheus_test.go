package promexport_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/proc"
	"github.com/pulse-dev/pulse/internal/series"
	"github.com/pulse-dev/pulse/promexport"
	"github.com/pulse-dev/pulse/timeseries"
)

// A real Prometheus server scrapes the collector every second. From the
// classic buckets (a server without native histograms) its median falls
// in the bucket that holds the median of the durations recorded; from
// the native histogram (a server with them) it is within one bucket,
// 2^(1/8), of the recorder's own median.
func TestPrometheusServerQuantile(t *testing.T) {
	bin, err := exec.LookPath("prometheus")
	if err != nil {
		t.Fatal("prometheus not found: install Debian's prometheus package (apt-get install prometheus), as scripts/setup.sh does")
	}
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
		prom := startPrometheus(t, bin, target)
		query := `histogram_quantile(0.5, pulse_request_duration_seconds_bucket{series="api"})`
		got := waitQuery(t, prom, query, 30*time.Second)
		t.Logf("%s = %g; the known durations' median bucket is (%g, %g]", query, got, lo, hi)
		if !(got > lo && got <= hi) {
			t.Errorf("%s = %g, not in (%g, %g]", query, got, lo, hi)
		}
	})
	t.Run("native", func(t *testing.T) {
		own := ownMedian(t, rec, "api")
		prom := startPrometheus(t, bin, target, "--enable-feature=native-histograms")
		query := `histogram_quantile(0.5, pulse_request_duration_seconds{series="api"})`
		got := waitQuery(t, prom, query, 30*time.Second)
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
	tots, _ := series.DurationTotals(rec)
	for _, tot := range tots {
		if tot.Name == name {
			return tot.Hist.Quantile(0.5).Seconds()
		}
	}
	t.Fatalf("no durations of %q", name)
	return 0
}

// startPrometheus runs bin on a free loopback port with a temporary
// config scraping target every second and a temporary TSDB, stopped when
// t ends.
func startPrometheus(t *testing.T, bin, target string, flags ...string) *proc.Process {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: pulse\n    static_configs:\n      - targets: [%q]\n", target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	p, err := proc.Start(ctx, proc.Config{
		Binary: bin,
		Dir:    dir,
		Args: func(port int) []string {
			return append([]string{
				"--config.file=" + filepath.Join(dir, "prometheus.yml"),
				"--storage.tsdb.path=" + filepath.Join(dir, "data"),
				"--web.listen-address=127.0.0.1:" + strconv.Itoa(port),
				"--log.level=warn",
			}, flags...)
		},
		Ready: func(ctx context.Context, port int) error {
			_, err := get(ctx, fmt.Sprintf("http://127.0.0.1:%d/-/ready", port))
			return err
		},
		StartTimeout: 45 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

// waitQuery asks prom for query as an instant vector until it answers one
// sample, and returns its value; it fails t after limit.
func waitQuery(t *testing.T, prom *proc.Process, query string, limit time.Duration) float64 {
	t.Helper()
	u := "http://" + prom.Addr() + "/api/v1/query?query=" + url.QueryEscape(query)
	deadline := time.Now().Add(limit)
	var last string
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		body, err := get(ctx, u)
		cancel()
		if err != nil {
			last = err.Error()
		} else if v, ok, err := instantValue(body); err != nil {
			t.Fatalf("%s: %v: %s", query, err, body)
		} else if ok {
			return v
		} else {
			last = string(body)
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s: no sample within %v; last answer %s\nprometheus log:\n%s", query, limit, last, prom.LogTail())
	return 0
}

// instantValue is the value of the one sample of an instant query's
// answer; ok is false while the answer has none.
func instantValue(body []byte) (v float64, ok bool, err error) {
	var ans struct {
		Status string
		Data   struct {
			ResultType string
			Result     []struct{ Value [2]any }
		}
	}
	if err := json.Unmarshal(body, &ans); err != nil {
		return 0, false, err
	}
	if ans.Status != "success" || ans.Data.ResultType != "vector" || len(ans.Data.Result) > 1 {
		return 0, false, fmt.Errorf("unexpected answer")
	}
	if len(ans.Data.Result) == 0 {
		return 0, false, nil
	}
	s, _ := ans.Data.Result[0].Value[1].(string)
	v, err = strconv.ParseFloat(s, 64)
	return v, err == nil, err
}

// get fetches u, expecting 200.
func get(ctx context.Context, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var b strings.Builder
	if _, err := io.Copy(&b, resp.Body); err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%s: %d %s", u, resp.StatusCode, b.String())
	}
	return []byte(b.String()), nil
}
