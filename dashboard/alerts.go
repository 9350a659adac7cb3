package dashboard

import "net/http"

// handleAlerts serves GET api/alerts from Config.Alerts. The dashboard
// only mounts it: the alert package depends on the series, not on the
// page, so the handler comes in as a plain http.Handler.
func (s *server) handleAlerts(w http.ResponseWriter, r *http.Request) {
	if s.cfg.Alerts == nil {
		jsonError(w, http.StatusNotFound, "no alerts are configured for this dashboard")
		return
	}
	ctx, cancel := s.requestContext(r)
	defer cancel()
	s.cfg.Alerts.ServeHTTP(w, r.WithContext(ctx))
}
