package alert

import (
	"testing"
	"time"
)

func TestStepForAndKeepFiring(t *testing.T) {
	t.Parallel()
	r := &Rule{For: Duration(2 * time.Minute), KeepFiringFor: Duration(3 * time.Minute)}
	t0 := time.Unix(1_000_000, 0)
	type tick struct {
		min      int
		breached bool
		unknown  bool
		want     State
	}
	cases := []struct {
		name  string
		ticks []tick
	}{
		{"a flap shorter than for never fires", []tick{
			{0, true, false, Pending}, {1, false, false, Inactive}, {2, true, false, Pending}, {3, false, false, Inactive},
		}},
		{"a breach as long as for fires", []tick{
			{0, true, false, Pending}, {1, true, false, Pending}, {2, true, false, Firing},
		}},
		{"keep_firing_for holds through a gap", []tick{
			{0, true, false, Pending}, {2, true, false, Firing}, {3, false, false, Firing}, {4, true, false, Firing},
			{5, false, false, Firing}, {6, false, false, Firing}, {7, false, false, Resolved},
		}},
		{"missing data neither fires nor resolves", []tick{
			{0, true, false, Pending}, {1, false, true, Pending}, {2, false, true, Pending}, {3, true, false, Firing},
			{4, false, true, Firing}, {10, false, true, Firing}, {11, true, false, Firing},
		}},
		{"a resolved alert fires anew as a new incident", []tick{
			{0, true, false, Pending}, {2, true, false, Firing}, {5, false, false, Resolved}, {6, true, false, Pending}, {8, true, false, Firing},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var s Status
			for _, tk := range c.ticks {
				now := t0.Add(time.Duration(tk.min) * time.Minute)
				s.step(observation{Breached: tk.breached, unknown: tk.unknown}, r, now, "", 0)
				if s.State != tk.want {
					t.Fatalf("minute %d: %s, want %s", tk.min, s.State, tk.want)
				}
				if s.Stale != tk.unknown {
					t.Fatalf("minute %d: stale %v", tk.min, s.Stale)
				}
			}
		})
	}
}

// A firing alert whose breach is over resolves only once it has been
// over for quiet as well as KeepFiringFor, whichever is longer.
func TestStepQuiet(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_000_000, 0)
	cases := []struct {
		name          string
		keep, quiet   time.Duration
		held, resolve time.Duration // since the last breach: still firing, then resolved
	}{
		{"no quiet, no keep", 0, 0, 0, time.Second},
		{"quiet holds", 0, 5 * time.Second, 4 * time.Second, 5 * time.Second},
		{"keep longer than quiet", time.Minute, 5 * time.Second, 59 * time.Second, time.Minute},
		{"quiet longer than keep", 2 * time.Second, 5 * time.Second, 4 * time.Second, 5 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := &Rule{KeepFiringFor: Duration(c.keep)}
			var s Status
			s.step(observation{Breached: true}, r, t0, "", c.quiet)
			if s.State != Firing {
				t.Fatalf("breached: %s", s.State)
			}
			if c.held > 0 {
				s.step(observation{}, r, t0.Add(c.held), "", c.quiet)
				if s.State != Firing {
					t.Fatalf("%v after the breach: %s, want still firing", c.held, s.State)
				}
			}
			s.step(observation{}, r, t0.Add(c.resolve), "", c.quiet)
			if s.State != Resolved {
				t.Fatalf("%v after the breach: %s, want resolved", c.resolve, s.State)
			}
		})
	}
}

func TestDue(t *testing.T) {
	t.Parallel()
	t0 := time.Unix(1_000_000, 0)
	t1 := t0.Add(time.Hour)
	cases := []struct {
		s    Status
		sent Sent
		want State
	}{
		{Status{State: Firing, ActiveAt: t0}, Sent{}, Firing},
		{Status{State: Firing, ActiveAt: t0}, Sent{State: Firing, ActiveAt: t0}, ""},
		{Status{State: Firing, ActiveAt: t1}, Sent{State: Resolved, ActiveAt: t0}, Firing},
		{Status{State: Resolved, ActiveAt: t0}, Sent{State: Firing, ActiveAt: t0}, Resolved},
		{Status{State: Resolved, ActiveAt: t0}, Sent{State: Resolved, ActiveAt: t0}, ""},
		{Status{State: Resolved, ActiveAt: t0}, Sent{}, ""}, // never told it fired
		{Status{State: Pending, ActiveAt: t0}, Sent{}, ""},
	}
	for i, c := range cases {
		if got := c.s.due(c.sent); got != c.want {
			t.Errorf("case %d: %q, want %q", i, got, c.want)
		}
	}
}
