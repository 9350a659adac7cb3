package timeseries_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestSchemaKeysAreTheRecordersKeys: the keys Schema names are those a
// Recorder writes, so a cleaner or exporter built outside the module finds
// every series through KnownKey and reads it at CountKey or MemberKey.
func TestSchemaKeysAreTheRecordersKeys(t *testing.T) {
	srv := redistest.Start(t)
	clock := timeseries.NewManualClock(t0)
	schema, err := timeseries.Schema{Prefix: "app:", Precisions: []int{60, 5}}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(schema.Precisions, []int{5, 60}) {
		t.Fatalf("normalized precisions %v, want sorted [5 60]", schema.Precisions)
	}
	rec := newRecorder(t, srv, timeseries.Config{Schema: schema, Clock: clock})
	c := mustCounter(t, rec, "GET /a:b") // a colon in the name
	c.Inc()
	c.Inc()
	if err := rec.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
	members, err := redis.Strings(srv.Do("ZRANGE", schema.KnownKey(), 0, -1), nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(members)
	want := []string{timeseries.KnownMember(5, "GET /a:b"), timeseries.KnownMember(60, "GET /a:b")}
	if !slices.Equal(members, want) {
		t.Fatalf("known set %v, want %v", members, want)
	}
	for _, m := range members {
		p, name, ok := timeseries.ParseKnownMember(m)
		if !ok || name != "GET /a:b" || schema.MemberKey(m) != schema.CountKey(p, name) {
			t.Fatalf("member %q parsed as %d %q %v; MemberKey %q, CountKey %q", m, p, name, ok, schema.MemberKey(m), schema.CountKey(p, name))
		}
		got, err := redis.Int64(srv.Do("HGET", schema.CountKey(p, name), timeseries.BucketStart(t0.Unix(), p)), nil)
		if err != nil || got != 2 {
			t.Errorf("count at precision %d = %d, %v; want 2", p, got, err)
		}
	}
	for _, m := range []string{"", "x:hits", "0:hits", "-5:hits", "5"} {
		if _, _, ok := timeseries.ParseKnownMember(m); ok {
			t.Errorf("ParseKnownMember(%q) accepted", m)
		}
	}
}

func TestSchemaPrecisionErrors(t *testing.T) {
	schema, err := timeseries.Schema{}.Normalize()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (timeseries.Schema{Precisions: []int{5, 5}}).Normalize(); err == nil {
		t.Error("a precision listed twice was accepted")
	}
	var perr *timeseries.PrecisionError
	if err := schema.CheckPrecision(7); !errors.As(err, &perr) || !errors.Is(err, timeseries.ErrUnknownPrecision) || perr.Precision != 7 {
		t.Errorf("CheckPrecision(7) = %v, want a *PrecisionError", err)
	}
	if err := schema.CheckPrecision(60); err != nil {
		t.Errorf("CheckPrecision(60) = %v", err)
	}
	if got := schema.VisitorPrecisions(); !slices.Equal(got, []int{60, 300, 3600, 86400}) {
		t.Errorf("VisitorPrecisions = %v", got)
	}
	var verr *timeseries.VisitorPrecisionError
	if err := schema.CheckVisitorPrecision(5); !errors.As(err, &verr) || !errors.Is(err, timeseries.ErrNoVisitors) || verr.Precision != 5 {
		t.Errorf("CheckVisitorPrecision(5) = %v, want a *VisitorPrecisionError", err)
	}
	if err := schema.CheckVisitorPrecision(7); !errors.As(err, &perr) {
		t.Errorf("CheckVisitorPrecision(7) = %v, want a *PrecisionError", err)
	}
	if err := schema.CheckVisitorPrecision(60); err != nil {
		t.Errorf("CheckVisitorPrecision(60) = %v", err)
	}
}

func TestBucketStartAndFillZero(t *testing.T) {
	for _, tt := range []struct{ t, want int64 }{{0, 0}, {59, 0}, {60, 60}, {-1, -60}, {-60, -60}, {-61, -120}} {
		if got := timeseries.BucketStart(tt.t, 60); got != tt.want {
			t.Errorf("BucketStart(%d, 60) = %d, want %d", tt.t, got, tt.want)
		}
	}
	in := []timeseries.Sample{{Time: 7, Count: 9}, {Time: 10, Count: 1}, {Time: 20, Count: 2}}
	got := timeseries.FillZero(in, 5, 3, 22)
	if fmt.Sprint(got) != "[{5 0} {10 1} {15 0} {20 2}]" {
		t.Errorf("FillZero = %v", got)
	}
}

func TestValidateName(t *testing.T) {
	for _, name := range []string{"hits", "GET /posts/:id status:2xx", strings.Repeat("x", 200)} {
		if err := timeseries.ValidateName(name); err != nil {
			t.Errorf("ValidateName(%q) = %v", name, err)
		}
	}
	for _, name := range []string{"", strings.Repeat("x", 201), "a\nb", "\xff"} {
		if err := timeseries.ValidateName(name); err == nil || !strings.HasPrefix(err.Error(), "timeseries: ") {
			t.Errorf("ValidateName(%q) = %v, want a timeseries error", name, err)
		}
	}
}
