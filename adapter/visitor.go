package adapter

import (
	"net"
	"net/http"
)

// RemoteAddr is the IP address of the connection r came on, without its
// port: the client, unless the app sits behind a proxy. Headers such as
// X-Forwarded-For are never read here, since any client can write them:
// trusting them is the app's choice, made in its adapter's config (Echo's
// IPExtractor, a ClientIP hook).
func RemoteAddr(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// UserAgent is r's User-Agent header, read from the header map by its
// canonical key: Header.Get canonicalises the key on every call, which
// showed in the middleware's profile as a fifth of a visitor's cost.
func UserAgent(r *http.Request) string {
	if v := r.Header["User-Agent"]; len(v) > 0 {
		return v[0]
	}
	return ""
}
