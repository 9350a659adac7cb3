package dashboard_test

import (
	"net/http"
	"net/url"
	"os"
	"path"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
)

var (
	entryRE   = regexp.MustCompile(`<script type="module" src="([^"]+)"></script>`)
	preloadRE = regexp.MustCompile(`<link rel="modulepreload" href="([^"]+)">`)
	// specifierRE finds the module of each import statement and re-export:
	// import './x.js', import … from './x.js', export … from './x.js'.
	specifierRE  = regexp.MustCompile(`(?m)^(?:import\s*|(?:import|export)\b[^;'"]*\bfrom\s*)['"]([^'"]+)['"]`)
	moduleURLRE  = regexp.MustCompile(`^static/[a-z0-9_-]+\.js\?v=[0-9a-f]{12}$`)
	versionedRE  = regexp.MustCompile(`^\./[a-z0-9_-]+\.js\?v=[0-9a-f]{12}$`)
	dynamicImpRE = regexp.MustCompile(`\bimport\s*\(`)
)

// scriptSources is the CSP's script-src, split into its sources.
func scriptSources(t *testing.T, csp string) []string {
	t.Helper()
	for _, d := range strings.Split(csp, ";") {
		if f := strings.Fields(d); len(f) > 0 && f[0] == "script-src" {
			return f[1:]
		}
	}
	t.Fatalf("CSP %q has no script-src", csp)
	return nil
}

// TestModules follows the page's script from the module it loads through
// every import: each module is reachable, served as JavaScript from the
// page's own origin (which the CSP's script-src 'self' allows), versioned
// and cached for good, and every module in static/ is reached and
// preloaded.
func TestModules(t *testing.T) {
	f := dashtest.New(t, dashtest.Options{NoTraffic: true})
	page := dashtest.Get(t, f.Root)
	src := scriptSources(t, page.Header.Get("Content-Security-Policy"))
	if !slices.Contains(src, "'self'") {
		t.Fatalf("script-src %v does not allow the page's own origin", src)
	}
	for _, s := range src {
		if s != "'self'" && s != "https://cdn.jsdelivr.net" {
			t.Errorf("script-src allows %s", s)
		}
	}
	entry := entryRE.FindAllStringSubmatch(page.Body, -1)
	if len(entry) != 1 || !strings.HasPrefix(entry[0][1], "static/main.js?v=") {
		t.Fatalf("the page loads %v, want one module: static/main.js", entry)
	}
	base, err := url.Parse(f.Root)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	queue := []string{entry[0][1]}
	for len(queue) > 0 {
		u := queue[0]
		queue = queue[1:]
		if seen[u] {
			continue
		}
		seen[u] = true
		queue = append(queue, checkModule(t, f.Root, base, u)...)
	}

	var reached, preloaded, files []string
	for u := range seen {
		reached = append(reached, u)
	}
	for _, m := range preloadRE.FindAllStringSubmatch(page.Body, -1) {
		preloaded = append(preloaded, m[1])
	}
	entries, err := os.ReadDir("static")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if path.Ext(e.Name()) == ".js" && e.Name() != "echarts.min.js" {
			files = append(files, e.Name())
		}
	}
	slices.Sort(reached)
	slices.Sort(preloaded)
	if !slices.Equal(reached, preloaded) {
		t.Errorf("modules reached by imports %v, preloaded %v", reached, preloaded)
	}
	if len(reached) != len(files) {
		t.Errorf("%d modules reached, static/ has %d: %v", len(reached), len(files), files)
	}
	if len(files) < 8 {
		t.Errorf("static/ has %d modules: %v", len(files), files)
	}
}

// checkModule fetches one module, checks how it is served and returns the
// URLs, relative to the root, of the modules it imports.
func checkModule(t *testing.T, root string, base *url.URL, u string) []string {
	t.Helper()
	if !moduleURLRE.MatchString(u) {
		t.Errorf("module URL %q is not a versioned file in static/", u)
		return nil
	}
	if ref, err := url.Parse(u); err != nil || base.ResolveReference(ref).Host != base.Host {
		t.Errorf("module %q is not on the page's origin", u)
	}
	r := dashtest.Get(t, root+u)
	if r.Status != http.StatusOK || r.Header.Get("Content-Type") != "text/javascript; charset=utf-8" ||
		r.Header.Get("X-Content-Type-Options") != "nosniff" || r.Header.Get("Cache-Control") != "public, max-age=31536000, immutable" {
		t.Errorf("%s: %d %v", u, r.Status, r.Header)
		return nil
	}
	if dynamicImpRE.MatchString(r.Body) {
		t.Errorf("%s imports dynamically", u)
	}
	var deps []string
	for _, m := range specifierRE.FindAllStringSubmatch(r.Body, -1) {
		if !versionedRE.MatchString(m[1]) {
			t.Errorf("%s imports %q, not a versioned sibling", u, m[1])
			continue
		}
		deps = append(deps, "static/"+strings.TrimPrefix(m[1], "./"))
	}
	return deps
}
