package forecast

import (
	"math"
	"math/rand/v2"
	"testing"
	"time"
)

// nightOwl is a rate whose Saturday night has its own shape: weekdays
// peak in the afternoon, Saturday late in the evening, Sunday is quiet.
func nightOwl(t time.Time) float64 {
	h := float64(t.Unix()%86400) / 3600
	switch t.Weekday() {
	case time.Saturday:
		return 30 * math.Exp(1.2*math.Cos(2*math.Pi*(h-23)/24))
	case time.Sunday:
		return 20 * math.Exp(0.5*math.Cos(2*math.Pi*(h-15)/24))
	}
	return 40 * math.Exp(0.9*math.Cos(2*math.Pi*(h-14)/24))
}

// owlSeries draws n buckets of step of nightOwl ending at end.
func owlSeries(rng *rand.Rand, end time.Time, step time.Duration, n int) *Series {
	s := &Series{Name: "owl", Step: step, Start: end.Add(-time.Duration(n) * step)}
	for i := range n {
		t := s.Time(i)
		s.Values = append(s.Values, float64(poissonDraw(rng, nightOwl(t.Add(step/2))*step.Hours())))
	}
	return s
}

func poissonDraw(rng *rand.Rand, mu float64) int {
	if mu > 50 {
		return max(0, int(math.Round(mu+math.Sqrt(mu)*rng.NormFloat64())))
	}
	n, l, p := 0, math.Exp(-mu), rng.Float64()
	for p > l {
		p *= rng.Float64()
		n++
	}
	return n
}

func TestWeekEncoding(t *testing.T) {
	var w Week
	rng := rand.New(rand.NewPCG(7, 7))
	if _, err := w.Fold(*owlSeries(rng, genEnd, time.Hour, 3*WeekHours)); err != nil {
		t.Fatal(err)
	}
	b, err := w.MarshalBinary()
	t.Logf("a week encodes in %d bytes", len(b))
	if err != nil || len(b) > 2048 {
		t.Fatalf("%d bytes, %v; want at most 2 KB", len(b), err)
	}
	var back Week
	if err := back.UnmarshalBinary(b); err != nil || back != w {
		t.Fatalf("round trip: %v, equal %v", err, back == w)
	}
	for _, bad := range [][]byte{nil, b[:len(b)-1], append([]byte{9}, b[1:]...)} {
		if err := back.UnmarshalBinary(bad); err == nil {
			t.Errorf("%d bytes (version %v) decoded", len(bad), bad)
		}
	}
	nan := append([]byte(nil), b...)
	copy(nan[9:17], []byte{1, 0, 0, 0, 0, 0, 0xf8, 0x7f})
	if err := back.UnmarshalBinary(nan); err == nil {
		t.Error("a NaN level decoded")
	}
}

// A Week is ready once it has seen every hour of the week twice, folds
// each hour once, and leaves out what is not a closed hour's count.
func TestWeekObserve(t *testing.T) {
	var w Week
	rng := rand.New(rand.NewPCG(8, 8))
	s := owlSeries(rng, genEnd, time.Hour, 2*WeekHours)
	first := Series{Name: s.Name, Step: s.Step, Start: s.Start, Values: s.Values[:2*WeekHours-1]}
	if n, _ := w.Fold(first); n != 2*WeekHours-1 || w.Ready() {
		t.Fatalf("folded %d, ready %v after all but one hour of two weeks", n, w.Ready())
	}
	if n, _ := w.Fold(*s); n != 1 || !w.Ready() {
		t.Fatalf("folded %d, ready %v after two weeks", n, w.Ready())
	}
	before := w
	w.Observe(s.Time(3), 1e6)                            // folded already
	w.Observe(s.Time(2*WeekHours).Add(time.Minute), 1e6) // not on the hour
	w.Observe(s.Time(2*WeekHours), math.NaN())           // unknown
	if _, err := w.Fold(Series{Step: time.Minute}); err == nil {
		t.Error("a 1 min series folded")
	}
	if w != before {
		t.Error("an hour folded twice, off the hour, or unknown changed the week")
	}
	// A burst of 100 times the hour moves its phase at most weekClip times.
	w.Observe(s.Time(2*WeekHours), 100*nightOwl(s.Time(2*WeekHours)))
	h := phase(s.Time(2*WeekHours), time.Hour, WeekHours)
	if r := w.Shape[h] / before.Shape[h]; r > weekClip {
		t.Errorf("one burst moved its hour's share %.1f times", r)
	}
}

// A Saturday night is forecast as a Saturday night: at 1 h, with the
// Week the one-step expectations of Saturday evening's buckets stray less
// from the true rate than with the window's own day times the 1 d
// series' weekday, and the fit says it lent the week. At 5 min the 1 d
// series lends the weekday still.
func TestWeekForecastsSaturdayNight(t *testing.T) {
	// genEnd's week; Saturday 23:30 UTC of it, or the one before.
	end := genEnd.Truncate(24 * time.Hour)
	for end.Weekday() != time.Sunday {
		end = end.Add(-24 * time.Hour)
	}
	end = end.Add(-30 * time.Minute)
	rng := rand.New(rand.NewPCG(41, 0))
	var w Week
	if _, err := w.Fold(*owlSeries(rng, end.Truncate(time.Hour), time.Hour, 3*WeekHours)); err != nil {
		t.Fatal(err)
	}
	d := owlSeries(rng, end.Truncate(24*time.Hour), 24*time.Hour, 120)
	fine, err := FitWithConfig(*owlSeries(rng, end, 5*time.Minute, 120), Config{Context: Context{Daily: d, Week: &w}})
	if err != nil || fine.Model.Seasons[1].Source != "1d" {
		t.Errorf("5 min: %v, seasons %+v; want the weekday lent by the 1 d series", err, fine.Model.Seasons)
	}
	for _, step := range []time.Duration{time.Hour} {
		var withErr, withoutErr float64
		for seed := range uint64(10) {
			rng := rand.New(rand.NewPCG(40, seed))
			h := owlSeries(rng, end.Truncate(time.Hour), time.Hour, 6*WeekHours)
			d := owlSeries(rng, end.Truncate(24*time.Hour), 24*time.Hour, 120)
			var w Week
			if _, err := w.Fold(*h); err != nil {
				t.Fatal(err)
			}
			s := owlSeries(rng, end, step, 120)
			if step == time.Hour {
				s = &Series{Name: h.Name, Step: h.Step, Start: h.Time(len(h.Values) - 120), Values: h.Values[len(h.Values)-120:]}
			}
			lastH := &Series{Name: h.Name, Step: h.Step, Start: h.Time(len(h.Values) - 120), Values: h.Values[len(h.Values)-120:]}
			cx := Context{Hourly: lastH, Daily: d}
			if step == time.Hour {
				cx.Hourly = nil
			}
			without, err1 := FitWithConfig(*s, Config{Context: cx})
			cx.Week = &w
			with, err2 := FitWithConfig(*s, Config{Context: cx})
			if err1 != nil || err2 != nil {
				t.Fatal(err1, err2)
			}
			if seed == 0 {
				t.Logf("%v seasons with the week: %+v", step, with.Model.Seasons)
				for _, ss := range with.Model.Seasons {
					if ss.Name == "weekly" && ss.Source != "week" {
						t.Errorf("%v: season %+v, want lent by the week", step, ss)
					}
				}
			}
			// Saturday from 18:00: the last buckets of the window.
			k := 0
			for i := len(s.Values) - 1; i >= 0 && s.Time(i).Hour() >= 18; i-- {
				want := nightOwl(s.Time(i).Add(step/2)) * step.Hours()
				withErr += math.Abs(with.History[i].Expected-want) / want
				withoutErr += math.Abs(without.History[i].Expected-want) / want
				k++
			}
			if k == 0 {
				t.Fatal("no Saturday evening bucket in the window")
			}
		}
		t.Logf("%v: Saturday evening's expectations stray %.3f from the rate with the week, %.3f without (summed relative errors)", step, withErr, withoutErr)
		if withErr >= 0.7*withoutErr {
			t.Errorf("%v: with the week %.3f, without %.3f; want at least 30 %% less", step, withErr, withoutErr)
		}
	}
}

// The cost of a Week: an hour folded in, and its bytes.
func BenchmarkWeekObserve(b *testing.B) {
	rng := rand.New(rand.NewPCG(9, 9))
	s := owlSeries(rng, genEnd, time.Hour, 4*WeekHours)
	var w Week
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if i == len(s.Values) {
			w, i = Week{}, 0
		}
		w.Observe(s.Time(i), s.Values[i])
		i++
	}
	enc, _ := w.MarshalBinary()
	b.ReportMetric(float64(len(enc)), "bytes/series")
}
