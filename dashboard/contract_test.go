package dashboard_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
)

// endpoint is one row of docs/api.md's dashboard table: its path, with
// :name, :kind and :id to fill, and the query parameters it documents.
type endpoint struct {
	path   string
	params []string
}

// documentedEndpoints reads the dashboard table of docs/api.md.
func documentedEndpoints(t *testing.T) []endpoint {
	t.Helper()
	doc, err := os.ReadFile("../docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	section, _, _ := strings.Cut(string(doc), "## Forum API")
	row := regexp.MustCompile("(?m)^\\| `GET (api/[^`]*)`")
	param := regexp.MustCompile(`[?&\[]([a-z_]+)=`)
	var eps []endpoint
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		path, query, _ := strings.Cut(m[1], "?")
		e := endpoint{path: strings.TrimSuffix(path, "[")} // "api/incidents[?precision=P]"
		for _, p := range param.FindAllStringSubmatch("?"+query, -1) {
			if !slices.Contains(e.params, p[1]) {
				e.params = append(e.params, p[1])
			}
		}
		if path == "api/durations/:name" && slices.Contains(e.params, "heatmap") {
			continue // the same endpoint again, with heatmap=1
		}
		eps = append(eps, e)
	}
	if len(eps) < 12 {
		t.Fatalf("read %d endpoints from docs/api.md, want its whole dashboard table", len(eps))
	}
	return eps
}

// validValue is a value each documented parameter accepts.
func validValue(path, param string) string {
	switch {
	case param == "kind" && (path == "api/anomalies" || path == "api/incidents"):
		return "spike"
	case param == "kind":
		return "hits"
	case param == "precision" && path == "api/visitors/:name":
		return "60" // visitors are kept from a minute up
	}
	return map[string]string{
		"precision": "5", "last": "12", "n": "6", "series": "hits", "from": "1700000000", "to": "1700000600",
		"fill": "zero", "q": "0.5", "heatmap": "1", "sort": "hits", "horizon": "12", "state": "firing",
		"transitions": "20", "ids": "7", "field": "views", "since": "1700000000", "until": "1700000600",
		"limit": "10", "offset": "0", "within": "86400",
	}[param]
}

// hostile is one bad request to an endpoint and the answer docs/api.md
// gives it: the status, and words its error must contain.
type hostile struct {
	what   string
	method string
	path   string
	query  url.Values
	status int
	words  string
}

// hostileRequests are the bad requests for e.
func hostileRequests(e endpoint) []hostile {
	fill := func(name, kind, id string) string {
		r := strings.NewReplacer(":name", url.PathEscape(name), ":kind", kind, ":id", id)
		return r.Replace(e.path)
	}
	path := fill(dashtest.RouteName, "post", "7")
	base := url.Values{}
	for _, p := range e.params {
		if p == "precision" || p == "field" {
			base.Set(p, validValue(e.path, p))
		}
	}
	with := func(k, v string) url.Values {
		q := url.Values{}
		for key, vs := range base {
			q[key] = slices.Clone(vs)
		}
		q.Set(k, v)
		return q
	}
	hs := []hostile{{what: "POST", method: http.MethodPost, path: path, query: base, status: http.StatusMethodNotAllowed}}
	for _, p := range e.params {
		if p == "series" && e.path == "api/overview" {
			continue // documented as repeatable
		}
		q := with(p, validValue(e.path, p))
		q.Add(p, validValue(e.path, p))
		hs = append(hs, hostile{what: p + " twice", path: path, query: q, status: http.StatusBadRequest, words: "given 2 times"})
	}
	if e.path == "api/alerts" {
		return hs // its parameters are the evaluator's; without one it is 404
	}
	if slices.Contains(e.params, "precision") {
		for _, v := range []string{"abc", "7", "-5", "99999999999999999999", ""} {
			hs = append(hs, hostile{what: "precision=" + v, path: path, query: with("precision", v), status: http.StatusBadRequest})
		}
	}
	for _, p := range []string{"last", "n", "horizon", "limit", "offset", "within"} {
		if slices.Contains(e.params, p) {
			hs = append(hs,
				hostile{what: p + "=-1", path: path, query: with(p, "-1"), status: http.StatusBadRequest},
				hostile{what: p + " out of range", path: path, query: with(p, "99999999999999999999"), status: http.StatusBadRequest, words: "out of range"},
				hostile{what: p + "=x", path: path, query: with(p, "x"), status: http.StatusBadRequest, words: "not an integer"})
		}
	}
	if slices.Contains(e.params, "from") {
		q := with("from", "1700000600")
		q.Set("to", "1700000000")
		hs = append(hs, hostile{what: "from after to", path: path, query: q, status: http.StatusBadRequest})
	}
	if slices.Contains(e.params, "since") {
		q := with("since", "1700000600")
		q.Set("until", "1700000000")
		hs = append(hs, hostile{what: "since after until", path: path, query: q, status: http.StatusBadRequest})
	}
	if slices.Contains(e.params, "within") {
		q := with("since", "1700000000")
		q.Set("within", "86400")
		hs = append(hs, hostile{what: "since and within", path: path, query: q, status: http.StatusBadRequest, words: "not both"})
	}
	if strings.Contains(e.path, ":name") {
		hs = append(hs, hostile{what: "unknown series", path: fill("GET /nowhere", "post", "7"), query: base, status: http.StatusNotFound})
	}
	if strings.Contains(e.path, ":kind") {
		hs = append(hs, hostile{what: "unknown kind", path: fill("", "planet", "7"), query: base, status: http.StatusNotFound})
	}
	badIDs := []struct{ id, words string }{
		{"-1", "negative"}, {"18446744073709551616", "out of range"}, {"-18446744073709551616", "negative"}, {"x1", "not an integer"},
	}
	for _, b := range badIDs {
		if strings.Contains(e.path, ":id") {
			hs = append(hs, hostile{what: "id " + b.id, path: fill("", "post", b.id), query: base, status: http.StatusBadRequest, words: b.words})
		}
		if slices.Contains(e.params, "ids") {
			hs = append(hs, hostile{what: "ids 7," + b.id, path: path, query: with("ids", "7,"+b.id), status: http.StatusBadRequest, words: b.words})
		}
	}
	return hs
}

// Every endpoint of docs/api.md's dashboard table, sent the hostile
// inputs the docs answer: each gets its documented status and a
// {"error": "…"} body that says what was wrong, never a 500.
func TestEndpointsKeepTheirContract(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{})
	for _, e := range documentedEndpoints(t) {
		for _, h := range hostileRequests(e) {
			t.Run(e.path+"/"+h.what, func(t *testing.T) {
				u := f.Root + h.path
				if len(h.query) > 0 {
					u += "?" + h.query.Encode()
				}
				method := h.method
				if method == "" {
					method = http.MethodGet
				}
				r := dashtest.Do(t, method, u, nil)
				checkError(t, r, h.status)
				var body struct{ Error string }
				_ = json.Unmarshal([]byte(r.Body), &body)
				if !strings.Contains(body.Error, h.words) {
					t.Errorf("%s %s: error %q, want it to say %q", method, u, body.Error, h.words)
				}
			})
		}
	}
}
