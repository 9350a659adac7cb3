package dashboard_test

import (
	"fmt"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/pulse-dev/pulse/forecast/fromstore"
	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
	"github.com/pulse-dev/pulse/timeseries"
)

// api/incidents answering 1,000 incidents kept at 1 min in one page: the
// CPU of the process per answer (the server's, and the client's reading
// the body in the same process: an upper bound) and of Redis.
func BenchmarkIncidentsAPI1000(b *testing.B) {
	f := dashtest.New(b, dashtest.Options{NoTraffic: true, Start: time.Now()})
	records, ends := fromstore.IncidentKeys(timeseries.Schema{}, 60)
	now := f.Clock.Now().Unix()
	for i := range 1000 {
		start := now - int64(i)*600
		id := fmt.Sprintf("%d:GET /r/%d", start, i)
		f.Srv.Do("HSET", records, id, fmt.Sprintf(`{"app":"shop","series":"GET /r/%d","related":"hits\nstatus:2xx","precision":60,`+
			`"kind":"spike","direction":"up","start":%d,"end":%d,"open":false,"bucket":%d,"observed":90,"expected":20.5,"lo95":10,"hi95":31,"score":7.25}`,
			i, start, start+120, start+60))
		f.Srv.Do("ZADD", ends, start+120, id)
	}
	u := f.Root + "api/incidents?precision=60&since=0&limit=1000"
	get := func() int {
		resp, err := http.Get(u)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("status %d", resp.StatusCode)
		}
		return int(n)
	}
	size := get()
	b.ReportAllocs()
	cpu, redisCPU := processCPU(), f.Srv.CPU()
	for b.Loop() {
		get()
	}
	b.ReportMetric(float64((processCPU()-cpu).Microseconds())/float64(b.N)/1000, "cpu-ms/answer")
	b.ReportMetric(float64((f.Srv.CPU()-redisCPU).Microseconds())/float64(b.N)/1000, "redis-cpu-ms/answer")
	b.ReportMetric(float64(size), "bytes/answer")
}

func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
