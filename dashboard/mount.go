package dashboard

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/pulse-dev/pulse/timeseries"
)

// Mounted is the dashboard as a framework's mount serves it under prefix:
// Prefix, the prefix checked and without its trailing slash, and Handler,
// the dashboard for requests whose path is Prefix or below it, given
// whole (the prefix is stripped from the escaped path too, so a series
// name holding %2F reaches it as one segment). The bare prefix
// redirects to the page; dot segments and empty segments below it are
// redirected by the dashboard itself, under the prefix; every method
// reaches it (it answers 405 to all but GET and HEAD). Each framework's
// mount package routes Prefix and everything below it to Handler,
// behind Guard and then the app's login.
type Mounted struct {
	Prefix  string
	Handler http.Handler
}

// Mount checks prefix and cfg and returns what a mount serves. prefix
// is a literal path below the root ("/dashboard", "/admin/pulse/"): an
// app that serves nothing but the dashboard serves Handler itself, and
// the characters routers read as patterns (":", "*", "{", "}") are
// refused.
func Mount(prefix string, cfg Config) (Mounted, error) {
	p := strings.TrimRight(prefix, "/")
	if p == "" || p[0] != '/' || strings.ContainsAny(p, ":*{}") || strings.Contains(p, "//") {
		return Mounted{}, fmt.Errorf("dashboard: prefix %q is not a literal path below the root, like /dashboard", prefix)
	}
	h, err := Handler(cfg)
	if err != nil {
		return Mounted{}, err
	}
	return Mounted{Prefix: p, Handler: http.StripPrefix(p, h)}, nil
}

// Under reports whether path is the prefix or below it.
func (m Mounted) Under(path string) bool {
	return strings.HasPrefix(path, m.Prefix) && (len(path) == len(m.Prefix) || path[len(m.Prefix)] == '/')
}

// Guard is what a mount does first with every request under its prefix,
// before the app's login or any other middleware of the mount runs: it
// marks the request with timeseries.Skip, so no Pulse middleware counts
// it, a refusal of the login included, and sets the security headers on
// whatever answers it. w is the writer the framework's handlers get
// (under Echo, c.Response()).
func Guard(w http.ResponseWriter) {
	timeseries.Skip(w)
	SecurityHeaders(w.Header())
}
