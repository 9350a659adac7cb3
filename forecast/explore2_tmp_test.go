package forecast

import (
	"os"
	"testing"
	"time"
)

func TestExplore2Tmp(t *testing.T) {
	if os.Getenv("EXPLORE2") == "" {
		t.Skip()
	}
	for _, st := range []time.Duration{time.Hour, 5 * time.Hour, day} {
		sum, sumA, n := 0.0, 0.0, 0
		al := map[float64]int{}
		for i := range 40 {
			rng := seeded(777, i)
			end := genEnd.Add(time.Duration(rng.IntN(168)) * time.Hour)
			gc := genConfig{Step: st, N: 120, End: end, Base: 3000, Daily: 0.8, Weekend: 0.3, Trend: 0.01, Disp: 0.05}
			g := generate(gc, rng)
			fd, err := FitWithConfig(g.series(Counts), Config{})
			if err != nil {
				t.Fatal(err)
			}
			sum += fd.Model.Scale
			sumA += fd.Model.ScaleAhead
			al[fd.Model.Alpha*100+fd.Model.Beta]++
			n++
		}
		t.Logf("%v: mean scale %.3f ahead %.3f params %v", st, sum/float64(n), sumA/float64(n), al)
	}
}
