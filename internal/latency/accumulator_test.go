package latency

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"
)

func TestAccumulatorTake(t *testing.T) {
	m := mustMapping(t, Config{Min: time.Millisecond, Max: time.Second})
	a := NewAccumulator(m)
	if h := a.Take(); h.Count() != 0 {
		t.Fatalf("fresh accumulator: %d durations", h.Count())
	}
	ds := []time.Duration{-1, 0, 500 * time.Microsecond, 3 * time.Millisecond, 3 * time.Millisecond, 40 * time.Millisecond, time.Minute}
	for _, d := range ds {
		a.Record(d)
	}
	if got, want := a.Take(), histogramOf(m, ds); !got.Equal(want) {
		t.Errorf("take: count %d sum %v min %v max %v; want %d %v %v %v",
			got.Count(), got.Sum(), got.Min(), got.Max(), want.Count(), want.Sum(), want.Min(), want.Max())
	}
	if h := a.Take(); !h.Equal(NewHistogram(m)) {
		t.Errorf("second take: %d durations, min %v, max %v; want none", h.Count(), h.Min(), h.Max())
	}
	a.Record(7 * time.Millisecond)
	h := histogramOf(m, []time.Duration{time.Second})
	a.TakeInto(h)
	if want := histogramOf(m, []time.Duration{time.Second, 7 * time.Millisecond}); !h.Equal(want) {
		t.Errorf("TakeInto did not merge: count %d, min %v", h.Count(), h.Min())
	}
}

// TestAccumulatorConcurrent: goroutines record while another takes over
// and over; the takes add up to exactly what was recorded, bin for bin,
// with count, sum, min and max. Run it under -race.
func TestAccumulatorConcurrent(t *testing.T) {
	m := mustMapping(t, Config{Min: 100 * time.Microsecond, Max: 5 * time.Second})
	a := NewAccumulator(m)
	const writers, each = 8, 20_000
	recorded := make([]*Histogram, writers)
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 9))
			h := NewHistogram(m)
			// Mostly log-normal, a few below Min and above Max.
			for _, d := range logNormal(rng, each, 20*time.Millisecond, 2) {
				a.Record(d)
				h.Add(d)
			}
			recorded[w] = h
		})
	}
	taken := NewHistogram(m)
	takes, nonEmpty := 0, 0
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for running := true; running; {
		select {
		case <-done:
			running = false
		default:
		}
		h := a.Take()
		takes++
		if h.Count() > 0 {
			nonEmpty++
		}
		if err := taken.Merge(h); err != nil {
			t.Fatal(err)
		}
	}
	a.TakeInto(taken) // after the writers: nothing may be left behind
	want := NewHistogram(m)
	for _, h := range recorded {
		if err := want.Merge(h); err != nil {
			t.Fatal(err)
		}
	}
	if !taken.Equal(want) {
		t.Errorf("takes add to count %d sum %v min %v max %v; recorded %d %v %v %v",
			taken.Count(), taken.Sum(), taken.Min(), taken.Max(), want.Count(), want.Sum(), want.Min(), want.Max())
	}
	if want.Bin(Underflow) == 0 || want.Bin(Overflow) == 0 {
		t.Errorf("test meant to record outside the range too")
	}
	t.Logf("%d takes, %d non-empty, %d durations", takes, nonEmpty, taken.Count())
	if nonEmpty < 2 {
		t.Errorf("only %d takes saw durations: the test did not race", nonEmpty)
	}
}

func TestTakeIntoOtherMapping(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Errorf("TakeInto a histogram of another mapping did not panic")
		}
	}()
	a := NewAccumulator(mustMapping(t, Config{}))
	a.TakeInto(NewHistogram(mustMapping(t, Config{Accuracy: 0.01})))
}
