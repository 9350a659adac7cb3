package timeseries

import (
	"testing"
	"time"
)

// clockStart is where the manual clocks of these tests start.
var clockStart = time.Unix(1700000000, 0)

// fired reports whether c has a value now.
func fired(c <-chan time.Time) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

func TestManualClockTimer(t *testing.T) {
	clock := NewManualClock(clockStart)
	tm := clock.newTimer(time.Second)
	clock.Advance(999 * time.Millisecond)
	if fired(tm.C()) {
		t.Fatal("timer fired before its time")
	}
	clock.Advance(time.Millisecond)
	if !fired(tm.C()) {
		t.Fatal("timer did not fire at its time")
	}
	clock.Advance(time.Hour)
	if fired(tm.C()) {
		t.Fatal("timer fired twice")
	}
	if tm.Reset(time.Second) {
		t.Error("Reset of a fired timer says it was active")
	}
	if !tm.Stop() {
		t.Error("Stop of an armed timer says it was not active")
	}
	clock.Advance(time.Hour)
	if fired(tm.C()) {
		t.Error("stopped timer fired")
	}
	clock.Advance(clockStart.Sub(clock.Now())) // back in time: nothing fires
	tm.Reset(0)
	if !fired(tm.C()) {
		t.Error("timer reset to 0 did not fire at once")
	}
}

func TestManualClockTicker(t *testing.T) {
	clock := NewManualClock(clockStart)
	tk := clock.newTicker(time.Second)
	defer tk.Stop()
	var ticks []time.Time
	for range 3 {
		clock.Advance(time.Second)
		select {
		case at := <-tk.C():
			ticks = append(ticks, at)
		default:
			t.Fatal("ticker did not tick after its interval")
		}
	}
	if !ticks[2].Equal(clockStart.Add(3 * time.Second)) {
		t.Errorf("third tick at %v, want %v", ticks[2], clockStart.Add(3*time.Second))
	}
	clock.Advance(10 * time.Second) // a slow reader gets one tick, not ten
	if !fired(tk.C()) || fired(tk.C()) {
		t.Error("want exactly one tick after a long advance")
	}
	clock.Advance(999 * time.Millisecond)
	if fired(tk.C()) {
		t.Error("ticker ticked before its next interval")
	}
	tk.Stop()
	clock.Advance(time.Hour)
	if fired(tk.C()) {
		t.Error("stopped ticker ticked")
	}
}
