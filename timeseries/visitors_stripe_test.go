package timeseries

import "testing"

// The stripe's set keeps one slot per (series, step, id), the newest
// second of each, survives growth, and counts what it cannot hold.
func TestVisitorStripe(t *testing.T) {
	const a, b int32 = 1, 2 // Counter ids
	tests := []struct {
		name      string
		adds      func(s *visitorStripe)
		want      int
		wantFull  int64
		wantNewer bool // the first slot holds second 99
	}{
		{"repeats are one", func(s *visitorStripe) {
			for sec := range int64(100) {
				s.add(a, 0, sec, 7)
			}
		}, 1, 0, true},
		{"series and steps apart", func(s *visitorStripe) {
			s.add(a, 0, 1, 7)
			s.add(b, 0, 1, 7)
			s.add(a, 60, 61, 7)
		}, 3, 0, false},
		{"grows past its first size", func(s *visitorStripe) {
			for i := range uint64(5000) {
				s.add(a, 0, 1, i*0x9e3779b97f4a7c15)
			}
		}, 5000, 0, false},
		{"full: the rest is counted, repeats still fit", func(s *visitorStripe) {
			for i := range uint64(visitorStripeMax) {
				s.add(a, 0, 1, i)
			}
			s.add(a, 0, 99, 0)
		}, visitorStripeMax / 2, visitorStripeMax / 2, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s visitorStripe
			for round := range 2 { // the second after an emptying
				tt.adds(&s)
				got := s.take(nil)
				if len(got) != tt.want || s.full != tt.wantFull {
					t.Fatalf("round %d: %d slots, %d dropped; want %d, %d", round, len(got), s.full, tt.want, tt.wantFull)
				}
				if tt.wantNewer && got[0].sec != 99 {
					t.Errorf("round %d: first slot at second %d, want the newest, 99", round, got[0].sec)
				}
				s.full = 0
			}
		})
	}
}
