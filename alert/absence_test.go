package alert

import (
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

// quietTraffic is 10 requests a minute to name for days days before
// burnNow, except the last quiet minutes.
func quietTraffic(tr traffic, name string, days, quiet int) {
	for k := int64(quiet + 1); k <= int64(days*24*60); k++ {
		tr.add(name, burnNow-60*k, 10)
	}
}

func TestAbsence(t *testing.T) {
	t.Parallel()
	srv := redistest.Start(t)
	pool := srv.Pool()
	tr := traffic{}
	quietTraffic(tr, App, 8, 20)              // silent 20 minutes after 8 busy days
	quietTraffic(tr, "GET /new", 2, 20)       // silent too, but no week of history
	quietTraffic(tr, "GET /busy", 8, 0)       // never silent
	quietTraffic(tr, "GET /short-gap", 8, 10) // silent 10 minutes only
	tr.write(t, pool)
	rules, err := ValidateRules([]Rule{
		{Name: "Absent", Kind: Absence, Series: App},
		{Name: "RouteAbsent", Kind: Absence, Series: EveryRoute},
	})
	if err != nil {
		t.Fatal(err)
	}
	obs := observeOnce(t, pool, rules, time.Unix(burnNow, 0), nil)
	checkObs(t, obs, "Absent\x00page\x00hits", true, 0, 10)
	checkObs(t, obs, "RouteAbsent\x00page\x00GET /new", false, 0, 10)
	checkObs(t, obs, "RouteAbsent\x00page\x00GET /busy", false, 150, 10)
	checkObs(t, obs, "RouteAbsent\x00page\x00GET /short-gap", false, 50, 10)
	// A day before: 15 minutes at 10 a minute, a quarter of an hour
	// bucket; a week before: 900 s of a full 5 h bucket of 3000.
	if got := obs["Absent\x00page\x00hits"].Annotations["baseline"]; got != "150 a day before, 150 a week before" {
		t.Errorf("baseline annotation %q", got)
	}
}
