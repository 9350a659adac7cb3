//go:build ignore

// Aggregate turns the public recordings listed in SOURCES.md into the
// corpus files beside it: one gzip CSV per series, its first line
// "start,step" (unix seconds of the first bucket, bucket width in
// seconds), then one count per bucket, oldest first.
//
//	go run aggregate.go -nasa workload.txt -worldcup invocation_count.csv -bike hour.csv \
//		-wikipedia example_wp_peyton_manning.csv,example_wp_R.csv
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/csv"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	nasa := flag.String("nasa", "", "requests per second, space separated (NASA-HTTP July then August 1995)")
	wc := flag.String("worldcup", "", "requests per minute, CSV period,count (WorldCup98)")
	bike := flag.String("bike", "", "UCI bike sharing hour.csv")
	wiki := flag.String("wikipedia", "", "daily page views, CSV ds,y, comma separated files")
	flag.Parse()
	if *nasa != "" {
		must(nasaFiles(*nasa))
	}
	if *wc != "" {
		must(worldCup(*wc))
	}
	if *bike != "" {
		must(bikeFiles(*bike))
	}
	if *wiki != "" {
		for _, path := range strings.Split(*wiki, ",") {
			must(pageViews(path))
		}
	}
}

func must(err error) {
	if err != nil {
		log.Fatal(err)
	}
}

// write stores counts of step seconds from start as name.csv.gz; a
// negative count is a bucket the recording left out, written NaN.
func write(name string, start time.Time, step int, counts []int64) error {
	f, err := os.Create(name + ".csv.gz")
	if err != nil {
		return err
	}
	zw, _ := gzip.NewWriterLevel(f, gzip.BestCompression)
	w := bufio.NewWriter(zw)
	fmt.Fprintf(w, "%d,%d\n", start.Unix(), step)
	for _, c := range counts {
		if c < 0 {
			w.WriteString("NaN\n")
			continue
		}
		w.WriteString(strconv.FormatInt(c, 10))
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// sum adds the seconds' counts into buckets of step seconds, the first
// second being first (unix), buckets aligned to the epoch.
func sum(perSecond []int64, first int64, step int64) (time.Time, []int64) {
	start := first - ((first%step)+step)%step
	out := make([]int64, (first-start+int64(len(perSecond))+step-1)/step)
	for i, c := range perSecond {
		out[(first-start+int64(i))/step] += c
	}
	return time.Unix(start, 0).UTC(), out
}

// nasaFiles splits the NASA-HTTP trace, one count per second, into its
// July log (from 1 Jul 1995 00:00:01 EDT) and its August log (ending 31
// Aug 23:59:53 EDT), at 5 s.
func nasaFiles(path string) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var secs []int64
	for _, f := range strings.Fields(string(b)) {
		n, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return err
		}
		secs = append(secs, n)
	}
	edt := time.FixedZone("EDT", -4*3600)
	augFirst := time.Date(1995, 8, 1, 0, 0, 1, 0, edt)
	augLast := time.Date(1995, 8, 31, 23, 59, 53, 0, edt)
	augLen := int(augLast.Sub(augFirst)/time.Second) + 1
	jul, aug := secs[:len(secs)-augLen], secs[len(secs)-augLen:]
	start, c := sum(jul, time.Date(1995, 7, 1, 0, 0, 1, 0, edt).Unix(), 5)
	if err := write("nasa-jul95", start, 5, c); err != nil {
		return err
	}
	start, c = sum(aug, augFirst.Unix(), 5)
	return write("nasa-aug95", start, 5, c)
}

// worldCup reads the per-minute counts; minutes missing from the file
// had no request.
func worldCup(path string) error {
	rows, err := readCSV(path)
	if err != nil {
		return err
	}
	var first time.Time
	var counts []int64
	for _, r := range rows[1:] {
		t, err := time.Parse("2006-01-02 15:04:05", r[0])
		if err != nil {
			return err
		}
		n, err := strconv.ParseInt(r[1], 10, 64)
		if err != nil {
			return err
		}
		if first.IsZero() {
			first = t
		}
		i := int(t.Sub(first) / time.Minute)
		for len(counts) <= i {
			counts = append(counts, 0)
		}
		counts[i] += n
	}
	return write("worldcup98", first, 60, counts)
}

// bikeFiles writes the hourly casual, registered and total rentals of
// the UCI set (Washington DC's local clock, taken as UTC); hours the set
// leaves out had no rental.
func bikeFiles(path string) error {
	rows, err := readCSV(path)
	if err != nil {
		return err
	}
	first := time.Date(2011, 1, 1, 0, 0, 0, 0, time.UTC)
	n := int(time.Date(2013, 1, 1, 0, 0, 0, 0, time.UTC).Sub(first) / time.Hour)
	cols := map[string]int{"casual": 14, "registered": 15, "cnt": 16}
	out := map[string][]int64{"casual": make([]int64, n), "registered": make([]int64, n), "cnt": make([]int64, n)}
	for _, r := range rows[1:] {
		d, err := time.Parse("02/01/06", r[1])
		if err != nil {
			return err
		}
		hr, _ := strconv.Atoi(r[5])
		i := int(d.Add(time.Duration(hr)*time.Hour).Sub(first) / time.Hour)
		for name, c := range cols {
			v, _ := strconv.ParseInt(r[c], 10, 64)
			out[name][i] += v
		}
	}
	for name, c := range out {
		if err := write("bike-"+name, first, 3600, c); err != nil {
			return err
		}
	}
	return nil
}

// pageViews writes the daily views of a Wikipedia article, one row
// "date,views" per day (example_wp_<article>.csv); days the file leaves
// out are not known, not days without a view.
func pageViews(path string) error {
	rows, err := readCSV(path)
	if err != nil {
		return err
	}
	days := map[time.Time]int64{}
	var first, last time.Time
	for _, r := range rows[1:] {
		d, err := time.Parse("2006-01-02", r[0])
		if err != nil {
			return err
		}
		n, err := strconv.ParseInt(r[1], 10, 64)
		if err != nil {
			return err
		}
		days[d] = n
		if first.IsZero() || d.Before(first) {
			first = d
		}
		if d.After(last) {
			last = d
		}
	}
	counts := make([]int64, int(last.Sub(first)/(24*time.Hour))+1)
	for i := range counts {
		n, ok := days[first.AddDate(0, 0, i)]
		if !ok {
			n = -1
		}
		counts[i] = n
	}
	base := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(path), "example_wp_"), ".csv")
	name := "wikipedia-" + strings.ReplaceAll(strings.ToLower(base), "_", "-")
	return write(name, first, 86400, counts)
}

// readCSV reads every row of a CSV file.
func readCSV(path string) ([][]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return csv.NewReader(f).ReadAll()
}
