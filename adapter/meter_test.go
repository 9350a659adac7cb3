package adapter_test

import (
	"net/http"
	"testing"
	"unsafe"

	"github.com/pulse-dev/pulse/adapter"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/timeseries"
)

// TestMeterCopiesNames: a SeriesName hook that returns a view into a
// buffer its framework reuses (fasthttp's c.Params, c.Get) has each name
// counted as it was when the request came, not as the buffer reads when
// a later request overwrote it; and a name seen before costs no
// allocation.
func TestMeterCopiesNames(t *testing.T) {
	srv := redistest.Start(t)
	rec, err := timeseries.NewRecorder(timeseries.Config{Pool: srv.Pool(), MaxNames: 5})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rec.Close(t.Context()) })
	// Requests come in buffers of a pool, so the buffer a name was first
	// seen in holds another request when the name comes again.
	var bufs [3][16]byte
	i := 0
	view := func(s string) string {
		b := bufs[i%len(bufs)][:0]
		b = append(b, s...)
		return unsafe.String(unsafe.SliceData(b), len(b))
	}
	m, err := adapter.HitsConfig[string]{Recorder: rec, SeriesName: view}.Meter(adapter.Glue[string]{})
	if err != nil {
		t.Fatal(err)
	}
	// count serves one request, after which the framework writes the
	// next request's bytes over the buffer.
	count := func(tenant string) {
		m.Count(tenant, http.MethodGet, "", http.StatusOK, 0)
		copy(bufs[i%len(bufs)][:], "zzzzzzzzzzzzzzzz")
		i++
	}
	for range 10 {
		count("tenant-a")
		count("tenant-b")
	}
	if n := testing.AllocsPerRun(100, func() { count("tenant-a") }); n != 0 {
		t.Errorf("counting a known name allocates %v times", n)
	}
	if err := rec.Flush(t.Context()); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]int64{"tenant-a": 111, "tenant-b": 10} {
		if got := total(t, rec, name); got != want {
			t.Errorf("%s counted %d, want %d", name, got, want)
		}
	}
}

func total(t *testing.T, rec *timeseries.Recorder, name string) int64 {
	t.Helper()
	samples, err := rec.Store().Samples(t.Context(), name, 86400, timeseries.Range{})
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, s := range samples {
		n += s.Count
	}
	return n
}
