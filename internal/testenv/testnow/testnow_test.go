package testnow_test

import (
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/testenv/testnow"
)

func TestOffsetTo(t *testing.T) {
	real := time.Date(2026, 11, 25, 17, 30, 0, 250e6, time.UTC)
	tests := []struct {
		hms  string
		want time.Time // real + offset
		err  bool
	}{
		{"", real, false},
		{"17:30:00", real.Add(-250 * time.Millisecond).Add(24 * time.Hour), false},
		{"18:00:00", time.Date(2026, 11, 25, 18, 0, 0, 0, time.UTC), false},
		{"23:59:40", time.Date(2026, 11, 25, 23, 59, 40, 0, time.UTC), false},
		{"00:00:05", time.Date(2026, 11, 26, 0, 0, 5, 0, time.UTC), false},
		{"06:00:00", time.Date(2026, 11, 26, 6, 0, 0, 0, time.UTC), false},
		{"6pm", time.Time{}, true},
		{"24:00:00", time.Time{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.hms, func(t *testing.T) {
			d, err := testnow.OffsetTo(tt.hms, real)
			if (err != nil) != tt.err {
				t.Fatalf("err %v, want error %v", err, tt.err)
			}
			if err != nil {
				return
			}
			if d < 0 || d >= 24*time.Hour || !real.Add(d).Equal(tt.want) {
				t.Errorf("offset %v puts real at %v, want %v", d, real.Add(d), tt.want)
			}
		})
	}
}
