package fromstore_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/forecast"
	"github.com/pulse-dev/pulse/forecast/fromstore"
)

func incident(series string, dir forecast.Direction, from, to int, score float64) forecast.Incident {
	t0 := time.Date(2026, 3, 4, 10, 0, 0, 0, time.UTC)
	kind := forecast.Spike
	if dir == forecast.Down {
		kind = forecast.Drop
	}
	return forecast.Incident{Series: series, Precision: time.Minute, Kind: kind, Direction: dir,
		Start: t0.Add(time.Duration(from) * time.Minute), End: t0.Add(time.Duration(to) * time.Minute), Score: score}
}

// Related series that break together make one event under its root: a
// route over its class series and the app's totals, the worst route
// over another; series apart in time, in direction or unrelated do not.
func TestGroup(t *testing.T) {
	up, down := forecast.Up, forecast.Down
	for _, c := range []struct {
		name string
		in   []forecast.Incident
		want []string // each event: its root, then its related series
	}{
		{"a route's burst, seen four times", []forecast.Incident{
			incident("hits", up, 10, 12, 9), incident("status:2xx", up, 10, 12, 8),
			incident("GET /posts/:id status:2xx", up, 10, 12, 7), incident("GET /posts/:id", up, 11, 12, 6)},
			[]string{"GET /posts/:id [hits status:2xx GET /posts/:id status:2xx]"}},
		{"the other direction is another event", []forecast.Incident{
			incident("GET /a", up, 10, 12, 6), incident("GET /a status:5xx", down, 10, 12, -6)},
			[]string{"GET /a []", "GET /a status:5xx []"}},
		{"apart in time", []forecast.Incident{
			incident("GET /a", up, 10, 12, 6), incident("hits", up, 30, 31, 6)},
			[]string{"hits []", "GET /a []"}},
		{"two routes apart", []forecast.Incident{
			incident("GET /a", down, 10, 12, -4), incident("GET /b", down, 50, 52, -5)},
			[]string{"GET /b []", "GET /a []"}},
		{"the worst route is the root", []forecast.Incident{
			incident("GET /a", up, 10, 12, 4), incident("GET /b", up, 10, 12, 9), incident("hits", up, 10, 12, 12)},
			[]string{"GET /b [GET /a hits]"}},
		{"without a route, hits", []forecast.Incident{
			incident("status:5xx", up, 10, 12, 20), incident("hits", up, 11, 12, 3)},
			[]string{"hits [status:5xx]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			var got []string
			for _, ev := range fromstore.Group(c.in) {
				var rel []string
				for _, r := range ev.Related {
					rel = append(rel, r.Series)
				}
				got = append(got, fmt.Sprintf("%s %v", ev.Series, rel))
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("events %q, want %q", got, c.want)
			}
		})
	}
}
