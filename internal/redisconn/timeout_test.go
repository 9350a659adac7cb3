package redisconn_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/internal/redisconn"
)

func TestTimeout(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name     string
		deadline time.Duration // from now; 0: none
		ctx      context.Context
		def      time.Duration
		// want is the timeout, within 50 ms below it for one taken from
		// the deadline.
		want    time.Duration
		wantErr error
	}{
		{name: "no deadline", def: 3 * time.Second, want: 3 * time.Second},
		{name: "no deadline, no default", def: 0, want: 0},
		{name: "no deadline, a negative default", def: -time.Second, want: 0},
		{name: "a later deadline", deadline: time.Hour, def: 3 * time.Second, want: 3 * time.Second},
		{name: "a sooner deadline", deadline: 300 * time.Millisecond, def: 3 * time.Second, want: 300 * time.Millisecond},
		{name: "a deadline, no default", deadline: time.Hour, def: 0, want: time.Hour},
		{name: "a passed deadline", deadline: -time.Millisecond, def: 3 * time.Second, wantErr: context.DeadlineExceeded},
		{name: "canceled, no deadline", ctx: canceled, def: 3 * time.Second, want: 3 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := tt.ctx
			if ctx == nil {
				ctx = context.Background()
			}
			if tt.deadline != 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			got, err := redisconn.Timeout(ctx, tt.def)
			if !errors.Is(err, tt.wantErr) || got > tt.want || got < tt.want-50*time.Millisecond {
				t.Errorf("Timeout = %v, %v; want %v, %v", got, err, tt.want, tt.wantErr)
			}
		})
	}
}
