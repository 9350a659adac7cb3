package dashboard

import (
	"net/http"
	"net/url"
	"path"
	"strings"
)

// redirectUnclean answers a path with dot segments or doubled slashes,
// reporting whether it did. ServeMux would redirect it to the cleaned
// path from the root, and under a prefix that http.StripPrefix removed
// (an Echo mount's) that leaves the dashboard, escaping the path a second
// time. The redirect here keeps the prefix the client asked under and
// the path's escaping as it came: %2F in a series name stays one
// segment, %5C stays escaped. Segments of escaped dots (%2e) are names,
// not dot segments, and get the dashboard's 404.
func redirectUnclean(w http.ResponseWriter, r *http.Request) bool {
	esc := r.URL.EscapedPath()
	clean := path.Clean(esc)
	if strings.HasSuffix(esc, "/") && clean != "/" {
		clean += "/"
	}
	if clean == esc {
		return false
	}
	// The prefix is what the client asked for (RequestURI) less what the
	// dashboard was handed.
	prefix, ok := "", false
	if u, err := url.ParseRequestURI(r.RequestURI); err == nil {
		prefix, ok = strings.CutSuffix(u.EscapedPath(), esc)
	}
	target := prefix + clean
	// A Location beginning "//" or "/\" names another host to a browser.
	if !ok || !strings.HasPrefix(target, "/") || strings.HasPrefix(target, "//") || strings.HasPrefix(target, "/\\") {
		jsonError(w, http.StatusBadRequest, "the path has dot segments or empty segments")
		return true
	}
	if q := r.URL.RawQuery; q != "" {
		target += "?" + q
	}
	w.Header().Set("Location", target)
	w.WriteHeader(http.StatusTemporaryRedirect)
	return true
}
