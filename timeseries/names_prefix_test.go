package timeseries_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestNamesAtByPrefix: NamesAt lists what Series says is kept at the
// precision, reading only that precision's members when every member has
// one score and none could name a series otherwise ("05:a"), and every
// member when not.
func TestNamesAtByPrefix(t *testing.T) {
	cases := []struct {
		name   string
		extra  []any // score, member pairs added to 2,500 names at 5 s and 1 min, scored 0
		prefix bool
	}{
		{"one score", nil, true},
		{"a name with a colon and a precision's prefix", []any{0, "5:5:x", 0, "55:y", 0, "5;z"}, true},
		{"scores differ", []any{1, "5:late"}, false},
		{"a padded precision", []any{0, "05:padded"}, false},
		{"a signed precision", []any{0, "+5:signed"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := redistest.Start(t)
			store, err := timeseries.NewStore(srv.Pool(), timeseries.Schema{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			known := store.Schema().KnownKey()
			if got, err := store.NamesAt(context.Background(), 5); err != nil || got != nil {
				t.Fatalf("no known set: %q %v", got, err)
			}
			args := []any{known}
			for i := range 2500 {
				for _, p := range []int{5, 60} {
					args = append(args, 0, timeseries.KnownMember(p, fmt.Sprintf("GET /r%d", i)))
				}
			}
			srv.Do("ZADD", append(args, c.extra...)...)
			infos, err := store.Series(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for _, in := range infos {
				if slices.Contains(in.Precisions, 5) {
					want = append(want, in.Name)
				}
			}
			before := srv.Calls("zrangebylex")
			got, err := store.NamesAt(context.Background(), 5)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, want) {
				t.Errorf("%d names, want %d; first %q, want %q", len(got), len(want), got[:3], want[:3])
			}
			if byPrefix := srv.Calls("zrangebylex") > before; byPrefix != c.prefix {
				t.Errorf("read by prefix %v, want %v", byPrefix, c.prefix)
			}
		})
	}
}
