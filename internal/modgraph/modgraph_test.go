package modgraph

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// maxModules bounds `go list -m all` of a consumer that imports
// timeseries, cleaner, dashboard and one adapter, its own module included.
const maxModules = 20

// forbidden are modules only Pulse's tests, example and benchmarks need:
// a consumer that imports none of the packages needing them must not get
// them in its graph.
var forbidden = []string{
	"github.com/chromedp/", "modernc.org/", "github.com/jackc/pgx", "github.com/go-sql-driver/mysql",
	"github.com/alicebob/miniredis", "github.com/labstack/echo-contrib", "github.com/prometheus/",
}

// consumers are one program per adapter: the imports a user of that
// framework writes, and the framework module it must not get besides.
var consumers = []struct {
	name    string
	modules []string // Pulse's modules it requires, besides the root
	imports []string
	without []string
}{
	{"echov4", []string{"middleware"}, []string{"github.com/labstack/echo/v4", "github.com/pulse-dev/pulse/middleware"},
		[]string{"github.com/labstack/echo/v5"}},
	{"echov5", []string{"echov5"}, []string{"github.com/labstack/echo/v5", "github.com/pulse-dev/pulse/echov5"},
		[]string{"github.com/labstack/echo/v4"}},
	{"nethttp", nil, []string{"github.com/pulse-dev/pulse/pulsehttp"},
		[]string{"github.com/labstack/"}},
}

func TestConsumerModuleGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod tidy for each adapter")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range consumers {
		t.Run(c.name, func(t *testing.T) {
			dir := writeConsumer(t, root, c.modules, c.imports)
			goCmd(t, dir, "mod", "tidy")
			goCmd(t, dir, "build", "./...")
			mods := strings.Fields(goCmd(t, dir, "list", "-m", "-f", "{{.Path}}", "all"))
			t.Logf("%d modules: %s", len(mods), strings.Join(mods, " "))
			if len(mods) > maxModules {
				t.Errorf("go list -m all has %d modules, want at most %d", len(mods), maxModules)
			}
			for _, m := range mods {
				for _, bad := range append(forbidden, c.without...) {
					if strings.HasPrefix(m, bad) {
						t.Errorf("the graph has %s", m)
					}
				}
			}
		})
	}
}

// writeConsumer writes a module whose main package imports the library's
// packages and the adapter's, with replaces to this checkout.
func writeConsumer(t *testing.T, root string, modules, imports []string) string {
	t.Helper()
	dir := t.TempDir()
	const pseudo = " v0.0.0-00010101000000-000000000000\n"
	gomod := "module example.com/consumer\n\ngo 1.26.0\n\nrequire github.com/pulse-dev/pulse" + pseudo
	replace := "replace github.com/pulse-dev/pulse => " + root + "\n"
	for _, m := range modules {
		gomod += "require github.com/pulse-dev/pulse/" + m + pseudo
		replace += "replace github.com/pulse-dev/pulse/" + m + " => " + filepath.Join(root, m) + "\n"
	}
	main := "package main\n\nimport (\n"
	for _, p := range append([]string{"github.com/pulse-dev/pulse/timeseries", "github.com/pulse-dev/pulse/cleaner",
		"github.com/pulse-dev/pulse/dashboard"}, imports...) {
		main += "\t_ " + `"` + p + `"` + "\n"
	}
	main += ")\n\nfunc main() {}\n"
	for name, body := range map[string]string{"go.mod": gomod + "\n" + replace, "main.go": main} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// goCmd runs the go command in dir outside any workspace, as a user's
// module is, and returns its output.
func goCmd(t *testing.T, dir string, args ...string) string {
	t.Helper()
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}
