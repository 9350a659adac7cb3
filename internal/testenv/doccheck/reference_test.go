package doccheck

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goSources returns the non-test Go files of a directory, by name.
func goSources(t *testing.T, dir string) map[string]string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(root, filepath.FromSlash(dir), "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out[filepath.Base(f)] = string(src)
	}
	if len(out) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	return out
}

func matches(re *regexp.Regexp, srcs map[string]string) [][]string {
	var out [][]string
	for _, src := range srcs {
		out = append(out, re.FindAllStringSubmatch(src, -1)...)
	}
	return out
}

var (
	dashRouteRE  = regexp.MustCompile(`mux\.HandleFunc\("/(api/[^"]*)"`)
	groupRE      = regexp.MustCompile(`(\w+) := e\.Group\("([^"]*)"\)`)
	echoRouteRE  = regexp.MustCompile(`(\w+)\.(GET|POST|PUT|PATCH|DELETE)\("([^"]*)"`)
	paramRE      = regexp.MustCompile(`\{(\w+)\}`)
	docDashRE    = regexp.MustCompile("`GET (api/[^`?\\[ ]*)")
	docForumRE   = regexp.MustCompile("`(GET|POST|PUT|PATCH|DELETE) (/api/[^`? ]*)")
	metricDescRE = regexp.MustCompile(`NewDesc\("(pulse_\w+)"`)
	docMetricRE  = regexp.MustCompile("^\\| `(pulse_\\w+)")
	getenvRE     = regexp.MustCompile(`(?:Getenv|envDuration)\("([A-Z_]+)"`)
)

// TestAPIReferenceListsEveryEndpoint: docs/api.md names every JSON
// endpoint the dashboard and the example forum serve, and no other.
func TestAPIReferenceListsEveryEndpoint(t *testing.T) {
	doc := readRepoFile(t, "docs/api.md")
	served := map[string]bool{}
	for _, m := range matches(dashRouteRE, goSources(t, "dashboard")) {
		served["GET "+paramRE.ReplaceAllString(m[1], ":$1")] = true
	}
	forum := goSources(t, "example/forum")
	prefix := map[string]string{"e": ""}
	for _, m := range matches(groupRE, forum) {
		prefix[m[1]] = m[2]
	}
	for _, m := range matches(echoRouteRE, forum) {
		if p, ok := prefix[m[1]]; ok && strings.HasPrefix(p+m[3], "/api/") {
			served[m[2]+" "+p+m[3]] = true
		}
	}
	if len(served) < 10 {
		t.Fatalf("found only %d endpoints in the code; has the routing moved?", len(served))
	}
	// The tables define what is documented; every other mention (the
	// examples' requests) must be a request one of the endpoints serves.
	documented := map[string]bool{}
	for _, l := range strings.Split(doc, "\n") {
		for _, e := range docEndpoints(l) {
			if strings.HasPrefix(l, "| `") {
				documented[e] = true
			} else if !servedBy(served, e) {
				t.Errorf("docs/api.md mentions %s, which no endpoint serves", e)
			}
		}
	}
	compareSets(t, "docs/api.md's tables", served, documented)
}

// compareSets reports what the code has and the page lacks, and what the
// page lists that the code does not have.
func compareSets(t *testing.T, page string, code, doc map[string]bool) {
	t.Helper()
	for k := range code {
		if !doc[k] {
			t.Errorf("%s lack %s", page, k)
		}
	}
	for k := range doc {
		if !code[k] {
			t.Errorf("%s list %s, which the code does not have", page, k)
		}
	}
}

func docEndpoints(line string) []string {
	var out []string
	for _, m := range docDashRE.FindAllStringSubmatch(line, -1) {
		out = append(out, "GET "+m[1])
	}
	for _, m := range docForumRE.FindAllStringSubmatch(line, -1) {
		out = append(out, m[1]+" "+m[2])
	}
	return out
}

// servedBy reports whether a concrete request such as "GET api/counters/hits"
// is one an endpoint pattern ("GET api/counters/:name") serves.
func servedBy(served map[string]bool, req string) bool {
	got := strings.Split(req, "/")
outer:
	for e := range served {
		want := strings.Split(e, "/")
		if len(want) != len(got) {
			continue
		}
		for i := range want {
			if want[i] != got[i] && !strings.HasPrefix(want[i], ":") {
				continue outer
			}
		}
		return true
	}
	return false
}

// TestConfigurationListsEveryField: each Config's exported fields are
// named on the page that documents it.
func TestConfigurationListsEveryField(t *testing.T) {
	for _, c := range []struct{ dir, typ, page string }{
		{"timeseries", "Config", "docs/configuration.md"},
		{"cleaner", "Config", "docs/configuration.md"},
		{"dashboard", "Config", "docs/configuration.md"},
		{"pulsehttp", "HitsConfig", "docs/configuration.md"},
		{"adapter", "HitsConfig", "docs/configuration.md"},
		{"entity", "Config", "docs/entity.md"},
		{"entity", "Kind", "docs/entity.md"},
	} {
		t.Run(c.dir+"."+c.typ, func(t *testing.T) {
			doc := readRepoFile(t, c.page)
			fields := exportedFields(t, c.dir, c.typ)
			if len(fields) == 0 {
				t.Fatalf("%s.%s has no exported fields", c.dir, c.typ)
			}
			for _, f := range fields {
				if !strings.Contains(doc, "`"+f+"`") {
					t.Errorf("%s does not name %s.%s's field `%s`", c.page, c.dir, c.typ, f)
				}
			}
		})
	}
}

// exportedFields parses a package's sources for a struct type's fields.
func exportedFields(t *testing.T, dir, typ string) []string {
	t.Helper()
	var out []string
	fset := token.NewFileSet()
	for name, src := range goSources(t, dir) {
		f, err := parser.ParseFile(fset, name, src, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != typ {
				return true
			}
			if st, ok := ts.Type.(*ast.StructType); ok {
				for _, fl := range st.Fields.List {
					for _, id := range fl.Names {
						if id.IsExported() {
							out = append(out, id.Name)
						}
					}
				}
			}
			return false
		})
	}
	return out
}

// TestMetricsPageListsEveryMetric: docs/metrics.md's table has a row for
// each metric promexport describes, and none for others.
func TestMetricsPageListsEveryMetric(t *testing.T) {
	code := map[string]bool{}
	for _, m := range matches(metricDescRE, goSources(t, "promexport")) {
		code[m[1]] = true
	}
	if len(code) == 0 {
		t.Fatal("promexport describes no pulse_ metric; has the collector moved?")
	}
	doc := map[string]bool{}
	for _, l := range strings.Split(readRepoFile(t, "docs/metrics.md"), "\n") {
		if m := docMetricRE.FindStringSubmatch(l); m != nil {
			doc[m[1]] = true
		}
	}
	compareSets(t, "docs/metrics.md's rows", code, doc)
}

// TestExampleEnvironmentDocumented: every variable the example reads is
// named in the configuration or deployment page.
func TestExampleEnvironmentDocumented(t *testing.T) {
	doc := readRepoFile(t, "docs/configuration.md") + readRepoFile(t, "docs/deployment.md")
	vars := matches(getenvRE, goSources(t, "example"))
	if len(vars) == 0 {
		t.Fatal("the example reads no environment variable; has its configuration moved?")
	}
	for _, m := range vars {
		if !strings.Contains(doc, "`"+m[1]+"`") {
			t.Errorf("the example reads %s, which docs/configuration.md and docs/deployment.md do not name", m[1])
		}
	}
}
