// Package dashguard holds what the dashboard and the adapters that mount
// it both set on every dashboard answer, so a login middleware in front
// of the dashboard answers with the same headers as the dashboard itself.
package dashguard

import "net/http"

// SetHeaders sets what every dashboard answer carries: no content
// sniffing, no framing, no referrer sent off the origin.
func SetHeaders(h http.Header) {
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin")
}
