package forecast

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// This file is the real-traffic corpus the forecaster is judged on: the
// recordings in testdata/real (their sources in SOURCES.md there), and
// the series cut from them.

// recording is one recorded series at one bucket width.
type recording struct {
	name  string
	start int64 // unix seconds of the first bucket
	step  int64 // seconds
	v     []float64
}

var recordings sync.Map // file name → recording

// loadRecording reads testdata/real/name.csv.gz: a line "start,step",
// then one count per bucket.
func loadRecording(tb testing.TB, name string) recording {
	tb.Helper()
	if r, ok := recordings.Load(name); ok {
		return r.(recording)
	}
	f, err := os.Open(filepath.Join("testdata", "real", name+".csv.gz"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		tb.Fatal(err)
	}
	sc := bufio.NewScanner(zr)
	r := recording{name: name}
	for sc.Scan() {
		line := sc.Text()
		if r.step == 0 {
			head := strings.Split(line, ",")
			r.start, _ = strconv.ParseInt(head[0], 10, 64)
			r.step, _ = strconv.ParseInt(head[1], 10, 64)
			continue
		}
		n, err := strconv.ParseFloat(line, 64)
		if err != nil {
			tb.Fatalf("%s: %v", name, err)
		}
		r.v = append(r.v, n)
	}
	if err := sc.Err(); err != nil || r.step == 0 {
		tb.Fatalf("%s: %v, step %d", name, err, r.step)
	}
	recordings.Store(name, r)
	return r
}

// at sums r into complete buckets of step seconds aligned to the epoch,
// as Pulse's precisions are.
func (r recording) at(step int64) recording {
	if step == r.step {
		return r
	}
	k := step / r.step
	first := (r.start + step - 1) / step * step // the first bucket r holds whole
	skip := int((first - r.start) / r.step)
	out := recording{name: r.name, start: first, step: step}
	for i := skip; i+int(k) <= len(r.v); i += int(k) {
		s := 0.0
		for _, x := range r.v[i : i+int(k)] {
			s += x
		}
		out.v = append(out.v, s)
	}
	return out
}

func (r recording) time(i int) time.Time { return time.Unix(r.start+int64(i)*r.step, 0).UTC() }

// index is the bucket of r holding unix second u.
func (r recording) index(u int64) int { return int((u - r.start) / r.step) }

// outage is a stretch of a recording, [from, to) in unix seconds, in
// which the site answered nothing or the recording left its buckets out:
// a real incident the recording itself shows, not the detector's guess.
type outage struct{ from, to int64 }

// minOutage is the shortest silence of a web server's log that is an
// outage: its quietest hours see requests every few seconds.
const minOutage = 300

var outageSets sync.Map // file name → []outage

// outagesOf finds the outages of a recording: for the web logs, runs of
// at least minOutage seconds without one request; for the bike rentals,
// the hours the set leaves out (no rental at all, as the count of every
// rider shows; a casual rider's count alone is often zero at night).
func outagesOf(tb testing.TB, file string) []outage {
	if v, ok := outageSets.Load(file); ok {
		return v.([]outage)
	}
	least := int64(minOutage)
	if strings.HasPrefix(file, "bike-") {
		file, least = "bike-cnt", 3600
	}
	r := loadRecording(tb, file)
	var out []outage
	run := 0
	for i := 0; i <= len(r.v); i++ {
		if i < len(r.v) && r.v[i] == 0 {
			run++
			continue
		}
		if int64(run)*r.step >= least {
			out = append(out, outage{r.start + int64(i-run)*r.step, r.start + int64(i)*r.step})
		}
		run = 0
	}
	outageSets.Store(file, out)
	return out
}

// duringOutage reports whether the bucket [at, at+step) lies in one of
// the outages, or in the bucket before one begins.
func duringOutage(outs []outage, at, step int64) bool {
	for _, o := range outs {
		if at+step > o.from-step && at < o.to {
			return true
		}
	}
	return false
}

// realSeries is a span of a recording judged as one series.
type realSeries struct {
	name     string
	file     string
	from, to time.Time
	steps    []time.Duration
}

func (s realSeries) String() string { return s.name }

var (
	fine   = []time.Duration{5 * time.Second, time.Minute, 5 * time.Minute, time.Hour}
	minute = []time.Duration{time.Minute, 5 * time.Minute, time.Hour, 5 * time.Hour}
	hourly = []time.Duration{time.Hour, 5 * time.Hour, day}
	daily  = []time.Duration{day}
)

func date(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }

// realCorpus is every series of the corpus: the NASA server's weeks, the
// WorldCup98 site's stretches of about nine days, the bike rentals' half
// years, each kind of rider apart, and two Wikipedia articles' views in
// stretches of two years.
var realCorpus = func() []realSeries {
	var cs []realSeries
	for i, from := range []time.Time{date(1995, 7, 1), date(1995, 7, 8), date(1995, 7, 15), date(1995, 7, 22)} {
		cs = append(cs, realSeries{fmt.Sprintf("nasa jul95 week %d", i+1), "nasa-jul95", from, from.Add(week), fine})
	}
	for i, from := range []time.Time{date(1995, 8, 4), date(1995, 8, 11), date(1995, 8, 18), date(1995, 8, 25)} {
		cs = append(cs, realSeries{fmt.Sprintf("nasa aug95 week %d", i+1), "nasa-aug95", from, from.Add(week), fine})
	}
	for i := range 10 {
		from := date(1998, 5, 1).Add(time.Duration(i) * 8 * day)
		to := from.Add(8 * day)
		if i == 9 {
			to = date(1998, 7, 27)
		}
		cs = append(cs, realSeries{fmt.Sprintf("worldcup98 part %d", i+1), "worldcup98", from, to, minute})
	}
	for _, who := range []string{"cnt", "casual", "registered"} {
		for i, from := range []time.Time{date(2011, 1, 1), date(2011, 7, 1), date(2012, 1, 1), date(2012, 7, 1)} {
			cs = append(cs, realSeries{fmt.Sprintf("bike %s half %d", who, i+1), "bike-" + who, from, from.AddDate(0, 6, 0), hourly})
		}
	}
	for _, article := range []string{"peyton-manning", "r"} {
		for i := range 4 {
			from := date(2008, 1, 1).AddDate(2*i, 0, 0)
			cs = append(cs, realSeries{fmt.Sprintf("wikipedia %s %d–%d", article, from.Year(), from.Year()+1), "wikipedia-" + article, from, from.AddDate(2, 0, 0), daily})
		}
	}
	return cs
}()
