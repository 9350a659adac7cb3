package fleet

import (
	"math"
	"math/rand/v2"
	"net/http"
	"strconv"
	"time"

	"github.com/pulse-dev/pulse/adapter"
)

// traffic makes one instance's requests: routes by a Zipf law (a few
// routes take most requests, as on a real site), status classes 93 % 2xx,
// 3 % 3xx, 3.5 % 4xx and 0.5 % 5xx, durations log-normal around 20 ms,
// and visitors drawn, by a Zipf law too, from a pool of cfg.Visitors.
type traffic struct {
	rng      *rand.Rand
	routes   *rand.Zipf
	visitors *rand.Zipf
	names    []string
}

func newTraffic(seed uint64, cfg Config) *traffic {
	rng := rand.New(rand.NewPCG(seed, 7))
	t := &traffic{rng: rng,
		routes:   rand.NewZipf(rng, 1.1, 1, uint64(cfg.Routes-1)),
		visitors: rand.NewZipf(rng, 1.05, 1, uint64(max(cfg.Visitors, 2)-1)),
	}
	for i := range cfg.Routes {
		t.names = append(t.names, "/api/v1/r"+strconv.Itoa(i)+"/:id")
	}
	return t
}

// request is one finished request of the simulation, the context its
// Meter reads.
type request struct {
	route  string
	status int
	d      time.Duration
	addr   string
}

// meter is the Meter an adapter with routes and status classes builds.
func meter(cfg adapter.HitsConfig[*request]) (*adapter.Meter[*request], error) {
	return cfg.Meter(adapter.Glue[*request]{
		ClientIP:  func(r *request) string { return r.addr },
		UserAgent: func(*request) string { return "sim" },
	})
}

// count records r through m, as an adapter does once the handler is done.
func count(m *adapter.Meter[*request], r *request) {
	m.Count(r, http.MethodGet, r.route, r.status, r.d)
}

// next is one finished request.
func (t *traffic) next() *request {
	status := http.StatusOK
	switch p := t.rng.Float64(); {
	case p < 0.005:
		status = http.StatusInternalServerError
	case p < 0.04:
		status = http.StatusNotFound
	case p < 0.07:
		status = http.StatusFound
	}
	d := time.Duration(20e6 * math.Exp(t.rng.NormFloat64()))
	v := t.visitors.Uint64()
	return &request{route: t.names[t.routes.Uint64()], status: status, d: d,
		addr: "10." + strconv.Itoa(int(v>>16&255)) + "." + strconv.Itoa(int(v>>8&255)) + "." + strconv.Itoa(int(v&255))}
}

// every is one request for each route, so that a run's first second
// creates every series, and a short run writes them all.
func (t *traffic) every(rec func(*request)) {
	for _, name := range t.names {
		r := t.next()
		r.route = name
		rec(r)
	}
}
