// Package anomaly answers the anomaly rules of package alert from the
// forecasts of package forecast/fromstore. It lives beside alert, not in
// forecast, so that the forecasts, and a dashboard drawing them, link no
// alert engine.
package anomaly

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"time"

	"github.com/pulse-dev/pulse/alert"
	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
)

// DefaultDetectPrecision is Detector.Precision when left zero: a
// minute, whose flags need two buckets of three out of band.
const DefaultDetectPrecision = 60

// Detector answers the anomaly rules of package alert from the
// forecasts: a series breaks from its expectation when its last settled
// bucket at Precision is flagged. Series that break together (a route,
// its status classes, the app's hits and status totals) are one event
// (Group): only its root is breached, its finding naming the others, so
// one incident makes one alert. The first question in a bucket scans
// every series the store knows at Precision through the Scanner; the
// others in that bucket are answered from that scan.
//
// The last settled bucket is the newest closed one once the Scanner's
// Settle has passed since it closed, the one before it until then: a
// bucket just closed may still miss the counts of the last flush.
//
// The evaluator and the Scanner's store must tell the same time (one
// Clock). A Detector is safe for concurrent use; Scanner must be set.
type Detector struct {
	// Scanner reads and fits the series. With its Keep set, the events
	// are the incidents it keeps in Redis, the ones the dashboard lists.
	Scanner *fromstore.Scanner
	// Precision is the precision, in seconds, whose buckets are judged.
	// Zero means DefaultDetectPrecision.
	Precision int
	// Config tunes the fits; its Kind must be Counts (the zero value).
	// FlagsOnly is set whatever it says.
	Config forecast.Config

	mu     sync.Mutex
	bucket int64 // the bucket judged by fits
	fits   map[string]fromstore.Result
	events map[string]fromstore.Event // each series' newest event, under its root or among its related
}

// Detect judges the series' last settled bucket at the Precision. A
// series the store does not keep there, or with too little history to
// judge, is not breached; an error is a failed read.
func (d *Detector) Detect(ctx context.Context, series string, now time.Time) (alert.Finding, error) {
	if d.Scanner == nil || d.Scanner.Store == nil {
		return alert.Finding{}, fmt.Errorf("anomaly: a Detector without a Scanner and its Store")
	}
	p := int64(cmp.Or(d.Precision, DefaultDetectPrecision))
	bucket := d.Scanner.SettledBy(int(p), now).Unix()
	fits, events, err := d.scan(ctx, int(p), bucket)
	if err != nil {
		return alert.Finding{}, err
	}
	fd := fits[series].Fitted
	if fd == nil {
		return alert.Finding{}, nil
	}
	at, found := slices.BinarySearchFunc(fd.History, bucket, func(pt forecast.Point, b int64) int { return cmp.Compare(pt.Time.Unix(), b) })
	if !found {
		return alert.Finding{}, nil
	}
	f := finding(fd.History[at])
	if ev, ok := events[series]; ok && f.Breached {
		f = inEvent(f, series, ev)
	}
	return f, nil
}

// inEvent is the finding of a flagged series as part of its event: the
// root's says which related series broke with it; a related series' is
// not breached, its root's alert speaks for the event.
func inEvent(f alert.Finding, series string, ev fromstore.Event) alert.Finding {
	if ev.Series != series {
		f.Breached = false
		f.What = string(ev.Kind) + " " + string(ev.Direction) + " under " + ev.Series
		return f
	}
	f.What = string(ev.Kind) + " " + string(ev.Direction)
	for i, r := range ev.Related {
		sep := ", "
		if i == 0 {
			sep = ", with "
		}
		f.What += sep + r.Series
	}
	return f
}

// finding is what a bucket says to an alert: its count and expectation,
// or, flagged, its count and the edge of the band it broke.
func finding(pt forecast.Point) alert.Finding {
	a := pt.Anomaly
	if a == nil {
		return alert.Finding{Value: pt.Value, Threshold: orZero(pt.Expected)}
	}
	edge := a.Band.Hi
	if a.Observed < a.Expected {
		edge = a.Band.Lo
	}
	return alert.Finding{Breached: true, Value: a.Observed, Threshold: orZero(edge), What: string(a.Kind)}
}

// scan returns the fits made for bucket and the events of their open
// incidents by series, scanning every series known at precision p if
// there are none yet.
func (d *Detector) scan(ctx context.Context, p int, bucket int64) (map[string]fromstore.Result, map[string]fromstore.Event, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.fits != nil && d.bucket == bucket {
		return d.fits, d.events, nil
	}
	names, err := d.Scanner.Store.NamesAt(ctx, p)
	if err != nil {
		return nil, nil, fmt.Errorf("anomaly: detect: %w", err)
	}
	cfg := d.Config
	cfg.FlagsOnly = true
	fits, err := d.Scanner.FitAll(ctx, names, p, cfg)
	if err != nil {
		return nil, nil, err
	}
	events := eventsBySeries(fits, time.Unix(bucket, 0))
	if d.Scanner.Keep {
		recs, err := fromstore.Incidents(ctx, d.Scanner.Store, p, time.Unix(bucket, 0), time.Unix(math.MaxInt32, 0))
		if err != nil {
			return nil, nil, fmt.Errorf("anomaly: detect: %w", err)
		}
		events = recordsBySeries(recs)
	}
	d.bucket, d.fits, d.events = bucket, fits, events
	return fits, d.events, nil
}

// eventsBySeries groups the incidents of fits that reach bucket at into
// events, and maps each series in one to it.
func eventsBySeries(fits map[string]fromstore.Result, at time.Time) map[string]fromstore.Event {
	var incs []forecast.Incident
	for _, r := range fits {
		if r.Fitted == nil {
			continue
		}
		for _, in := range r.Fitted.Incidents {
			if !in.End.Before(at) {
				incs = append(incs, in)
			}
		}
	}
	out := map[string]fromstore.Event{}
	for _, ev := range fromstore.Group(incs) {
		out[ev.Series] = ev
		for _, r := range ev.Related {
			out[r.Series] = ev
		}
	}
	return out
}

// recordsBySeries maps each series of the incidents kept to its event:
// the record's root, and its related series.
func recordsBySeries(recs []fromstore.Record) map[string]fromstore.Event {
	out := map[string]fromstore.Event{}
	for _, r := range recs {
		in := forecast.Incident{Series: r.Series, Precision: time.Duration(r.Precision) * time.Second, Kind: r.Kind,
			Direction: r.Direction, Start: time.Unix(r.Start, 0), End: time.Unix(r.End, 0), Open: r.Open, Score: r.Peak.Score}
		ev := fromstore.Event{Incident: in}
		for _, s := range r.Related {
			rel := in
			rel.Series = s
			ev.Related = append(ev.Related, rel)
		}
		for _, s := range append([]string{r.Series}, r.Related...) {
			if _, ok := out[s]; !ok { // newest end first: the newest event wins
				out[s] = ev
			}
		}
	}
	return out
}

func orZero(v float64) float64 {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	return v
}
