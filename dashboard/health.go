package dashboard

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/pulse-dev/pulse/timeseries"
)

// healthResponse is the recorder's health and the verdict drawn from it.
type healthResponse struct {
	timeseries.Health
	// OK is false when Redis is not answering, or no flush succeeded for
	// DefaultStaleFlushes flush intervals while hits are pending; the
	// answer is then 503.
	OK bool `json:"ok"`
	// Problem says what is wrong when OK is false.
	Problem string `json:"problem,omitempty"`
}

// handleHealth answers the recorder's health, 200 when recording works
// and 503 when it does not, so it serves as a probe: GET api/health.
func (s *server) handleHealth(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Health == nil {
		jsonError(w, http.StatusNotFound, "no health reporter is configured")
		return
	}
	h := s.cfg.Health.Health()
	resp := healthResponse{Health: h, OK: true}
	// Since the last flush that ended well, empty or not: hits that
	// arrived after an idle spell are not late.
	since := h.LastFlush
	if h.LastFlushOK.After(since) {
		since = h.LastFlushOK
	}
	if since.IsZero() || since.Before(s.started) {
		since = s.started
	}
	interval := cmp.Or(s.cfg.FlushInterval, h.FlushInterval, timeseries.DefaultFlushInterval)
	stale := time.Duration(DefaultStaleFlushes) * interval
	switch {
	case !h.RedisUp:
		// Known already: a probe of a stopped Redis must not wait out
		// another round trip.
		resp.OK, resp.Problem = false, "redis is down: the last flush failed"
	case s.ping(r) != nil:
		resp.OK, resp.Problem = false, "redis does not answer"
	case h.PendingHits > 0 && s.store.Now().Sub(since) > stale:
		resp.OK, resp.Problem = false, fmt.Sprintf("no flush for more than %v while hits are pending", stale)
	}
	// The last error's text stays in the log: it may name hosts.
	resp.LastError = ""
	status := http.StatusOK
	if !resp.OK {
		status = http.StatusServiceUnavailable
	}
	writeJSONStatus(w, status, resp)
}

// ping asks Redis whether it answers, as the recorder learns of an outage
// only when it flushes and an idle one does not. The ping gets
// probeTimeout, not the whole request timeout: a load balancer's probe
// gives up within a second or two, and a Redis that takes longer to
// answer PING is not serving the recorder either.
func (s *server) ping(r *http.Request) error {
	ctx, cancel := s.requestContext(r)
	defer cancel()
	ctx, cancelProbe := context.WithTimeout(ctx, probeTimeout)
	defer cancelProbe()
	err := s.store.Ping(ctx)
	if err != nil {
		s.cfg.Logger.Warn("pulse dashboard: health: redis does not answer", "err", err)
	}
	return err
}

// probeTimeout bounds the health probe's ping of Redis.
const probeTimeout = 800 * time.Millisecond
