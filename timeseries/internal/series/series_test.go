package series

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/mna/redisc"
)

func TestBucketStart(t *testing.T) {
	tests := []struct {
		t         int64
		precision int
		want      int64
	}{
		{0, 5, 0},
		{4, 5, 0},
		{5, 5, 5},
		{1700000003, 5, 1700000000},
		{1700000059, 60, 1700000040},
		{1700000000, 86400, 1699920000},
		{86399, 86400, 0},
		{-1, 5, -5},
		{-5, 5, -5},
		{-6, 5, -10},
	}
	for _, tt := range tests {
		if got := BucketStart(tt.t, tt.precision); got != tt.want {
			t.Errorf("BucketStart(%d, %d) = %d, want %d", tt.t, tt.precision, got, tt.want)
		}
	}
}

func TestMemberRoundTrip(t *testing.T) {
	tests := []struct {
		precision int
		name      string
	}{
		{5, "hits"},
		{60, "status:2xx"},
		{300, "GET /posts/:id"},
		{86400, "a:b:c"},
	}
	for _, tt := range tests {
		m := Member(tt.precision, tt.name)
		p, n, ok := ParseMember(m)
		if !ok || p != tt.precision || n != tt.name {
			t.Errorf("ParseMember(%q) = %d, %q, %v", m, p, n, ok)
		}
	}
	for _, bad := range []string{"", "hits", ":hits", "x:hits", "0:hits", "-5:hits"} {
		if _, _, ok := ParseMember(bad); ok {
			t.Errorf("ParseMember(%q) accepted a malformed member", bad)
		}
	}
}

func TestKeysNames(t *testing.T) {
	s, err := Keys{}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if got := s.KnownKey(); got != "known:" {
		t.Errorf("KnownKey = %q, want known:", got)
	}
	if got := s.CountKey(5, "hits"); got != "count:5:hits" {
		t.Errorf("CountKey = %q, want count:5:hits", got)
	}
	s.Prefix = "app1:"
	if got := s.KnownKey(); got != "app1:known:" {
		t.Errorf("KnownKey with prefix = %q", got)
	}
	if got := s.CountKey(60, "hits"); got != "app1:count:60:hits" {
		t.Errorf("CountKey with prefix = %q", got)
	}
}

func TestKeysNormalize(t *testing.T) {
	tests := []struct {
		in      []int
		want    string
		wantErr string
	}{
		{nil, "[5 60 300 3600 18000 86400]", ""},
		{[]int{60, 5}, "[5 60]", ""},
		{[]int{}, "", "no precisions"},
		{[]int{5, 0}, "", "must be > 0"},
		{[]int{-5}, "", "must be > 0"},
		{[]int{5, 5}, "", "listed twice"},
	}
	for _, tt := range tests {
		s, err := Keys{Precisions: tt.in}.Normalize()
		if tt.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Normalize(%v) error = %v, want %q", tt.in, err, tt.wantErr)
			}
			continue
		}
		if err != nil || fmt.Sprint(s.Precisions) != tt.want {
			t.Errorf("Normalize(%v) = %v, %v; want %s", tt.in, s.Precisions, err, tt.want)
		}
	}
}

func TestValidateName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"hits", true},
		{"GET /posts/:id", true},
		{"status:2xx", true},
		{"<img src=x onerror=alert(1)>", true},
		{"", false},
		{"a\nb", false},
		{"a\x00b", false},
		{"\xff", false},
		{strings.Repeat("x", MaxNameLen), true},
		{strings.Repeat("x", MaxNameLen+1), false},
	}
	for _, tt := range tests {
		if err := ValidateName(tt.name); (err == nil) != tt.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tt.name, err, tt.ok)
		}
	}
}

// sampleOf has the layout of timeseries.Sample, as FillZero and FillRange
// take it.
type sampleOf struct {
	Time  int64 `json:"time"`
	Count int64 `json:"count"`
}

func TestFillZero(t *testing.T) {
	samples := []sampleOf{{100, 1}, {110, 3}}
	got, err := FillRange(samples, 5, 0, 0, 120)
	if err != nil {
		t.Fatal(err)
	}
	want := []sampleOf{{100, 1}, {105, 0}, {110, 3}, {115, 0}, {120, 0}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("fillZero = %v, want %v", got, want)
	}
	// An explicit range not on bucket edges starts at the first whole bucket.
	got, _ = FillRange(samples, 5, 102, 113, 120)
	want = []sampleOf{{105, 0}, {110, 3}}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("fillZero [102,113] = %v, want %v", got, want)
	}
	if _, err := FillRange([]sampleOf(nil), 5, 0+5, 5*(MaxSamples+1), 0); !errors.Is(err, ErrRangeTooLarge) {
		t.Errorf("huge range: err = %v, want ErrRangeTooLarge", err)
	}
	got, _ = FillRange([]sampleOf(nil), 5, 0, 0, 120)
	if len(got) != 0 {
		t.Errorf("no samples, open range: got %v, want none", got)
	}
}

// Lat keys hash to their count key's slot whatever braces the name or
// the prefix hold; when none can, there are none.
func TestLatKeySlots(t *testing.T) {
	names := []string{"hits", "GET /posts/:id", "GET /posts/{id}", "a{b", "{t}x", "x{y}z{w}", "{}", "a}b", "x{}y", "}{", "{{a}"}
	for _, prefix := range []string{"", "app1:", "{app}:", "a}:", "p{"} {
		s := Keys{Prefix: prefix}
		for _, name := range names {
			for _, p := range DefaultPrecisions {
				count := s.CountKey(p, name)
				key, ok := s.LatKey(p, name, 1700000000)
				if !ok {
					if !strings.Contains(count, "}") && !strings.Contains(prefix, "{") {
						t.Errorf("%q: no lat keys though its count key %q holds no }", name, count)
					}
					continue
				}
				if !strings.HasPrefix(key, prefix+"lat:") {
					t.Errorf("lat key %q outside the prefix %q", key, prefix)
				}
				if a, b := redisc.Slot(key), redisc.Slot(count); a != b {
					t.Errorf("%q: slot %d, count key %q's %d", key, a, count, b)
				}
			}
		}
	}
	if key, _ := (Keys{}).LatKey(5, "GET /x", 100); key != "lat:{count:5:GET /x}:100" {
		t.Errorf("lat key %q, want lat:{count:5:GET /x}:100", key)
	}
}

func TestVisitorKeySharesLatSlot(t *testing.T) {
	for _, tc := range []struct {
		prefix, name string
		ok           bool
	}{
		{"", "GET /posts/:id", true},
		{"app:", "hits", true},
		{"", "user {42}", true},
		{"", "a}b", false},
	} {
		s := Keys{Prefix: tc.prefix}
		u, ok := s.VisitorKey(60, tc.name, 120)
		l, lok := s.LatKey(60, tc.name, 120)
		if ok != tc.ok || lok != tc.ok {
			t.Fatalf("%q: ok %v, lat ok %v, want %v", tc.name, ok, lok, tc.ok)
		}
		if !ok {
			continue
		}
		if !strings.HasPrefix(u, tc.prefix+"uv:") {
			t.Errorf("%q: key %q lacks the uv: family", tc.name, u)
		}
		ut, _ := hashed(u)
		lt, _ := hashed(l)
		if ut != lt {
			t.Errorf("%q: uv tag %q, lat tag %q", tc.name, ut, lt)
		}
	}
}

func TestVisitorPrecisions(t *testing.T) {
	tests := []struct {
		precisions []int
		want       []int
	}{
		{nil, []int{60, 300, 3600, 86400}},
		{[]int{1, 5, 60}, []int{60}},
		{[]int{10, 30}, []int{}},
	}
	for _, tt := range tests {
		s, err := Keys{Precisions: tt.precisions}.Normalize()
		if err != nil {
			t.Fatal(err)
		}
		if got := s.VisitorPrecisions(); fmt.Sprint(got) != fmt.Sprint(tt.want) {
			t.Errorf("%v: %v, want %v", tt.precisions, got, tt.want)
		}
	}
}
