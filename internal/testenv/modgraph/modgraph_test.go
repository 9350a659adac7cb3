package modgraph

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxModules bounds `go list -m all` of a consumer that imports
// timeseries, cleaner, dashboard and one adapter, its own module included.
// Echo v4 alone brings 20 modules (x/crypto, x/net, x/text and the
// x/tools and x/mod its go.mod names, testify, gommon…), so its consumer
// is held to maxAdded instead.
const maxModules = 20

// maxAdded bounds the modules Pulse adds to an Echo v4 program:
// the root and adapter modules (two on the old path, middleware, which
// forwards to pulseecho), redigo, redisc, go-echarts and x/sync, and
// the test modules their go.mod files name (redisc's go.mod predates
// graph pruning, so its requirements' requirements count too).
const maxAdded = 10

// forbidden are modules only Pulse's tests, example and benchmarks need:
// a consumer that imports none of the packages needing them must not get
// them in its graph.
var forbidden = []string{
	"github.com/chromedp/", "modernc.org/", "github.com/jackc/pgx", "github.com/go-sql-driver/mysql",
	"github.com/alicebob/miniredis", "github.com/labstack/echo-contrib", "github.com/prometheus/",
	"go.opentelemetry.io/",
}

// consumers are one program per adapter: the imports a user of that
// framework writes, and the framework module it must not get besides.
var consumers = []struct {
	name      string
	framework string   // the framework's own import; "" for net/http
	modules   []string // Pulse's modules it requires, besides the root
	adapter   string
	mount     string // its package mounting the dashboard
	without   []string
	max       int // 0: the same program without Pulse, plus maxAdded
}{
	{"echov4", "github.com/labstack/echo/v4", []string{"pulseecho"}, "github.com/pulse-dev/pulse/pulseecho",
		"github.com/pulse-dev/pulse/pulseecho/mount", []string{"github.com/labstack/echo/v5"}, 0},
	// Echo v4's old path, which forwards to pulseecho: a program written
	// before the rename builds outside the workspace, with one module more.
	{"echov4-middleware", "github.com/labstack/echo/v4", []string{"middleware", "pulseecho"}, "github.com/pulse-dev/pulse/middleware",
		"github.com/pulse-dev/pulse/middleware/mount", []string{"github.com/labstack/echo/v5"}, 0},
	{"echov5", "github.com/labstack/echo/v5", []string{"echov5"}, "github.com/pulse-dev/pulse/echov5",
		"github.com/pulse-dev/pulse/echov5/mount", []string{"github.com/labstack/echo/v4"}, maxModules},
	{"nethttp", "", nil, "github.com/pulse-dev/pulse/pulsehttp",
		"github.com/pulse-dev/pulse/pulsehttp/mount", []string{"github.com/labstack/"}, maxModules},
	{"gin", "github.com/gin-gonic/gin", []string{"pulsegin"}, "github.com/pulse-dev/pulse/pulsegin",
		"github.com/pulse-dev/pulse/pulsegin/mount", []string{"github.com/labstack/", "github.com/go-chi/"}, 0},
	{"chi", "github.com/go-chi/chi/v5", []string{"pulsechi"}, "github.com/pulse-dev/pulse/pulsechi",
		"github.com/pulse-dev/pulse/pulsehttp/mount", []string{"github.com/labstack/", "github.com/gin-gonic/"}, maxModules},
	// Fiber's own graph lacks testify and its requirements, which
	// redisc's unpruned go.mod brings (Echo and Gin require them already);
	// and pulsefiber requires fasthttp 1.76 or later, whose RequestCtx.Done
	// does not race a shutdown, with its brotli module.
	{"fiber", "github.com/gofiber/fiber/v2", []string{"pulsefiber"}, "github.com/pulse-dev/pulse/pulsefiber",
		"github.com/pulse-dev/pulse/pulsefiber/mount", []string{"github.com/labstack/", "github.com/gin-gonic/"}, 34},
}

func TestConsumerModuleGraph(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go mod tidy for each adapter")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range consumers {
		t.Run(c.name, func(t *testing.T) {
			var imports []string
			if c.framework != "" {
				imports = append(imports, c.framework)
			}
			bare := graph(t, root, nil, imports)
			mods := graph(t, root, c.modules, append(append(imports, c.adapter, c.mount), library...))
			var added []string
			for _, m := range mods {
				if !slices.Contains(bare, m) {
					added = append(added, m)
				}
			}
			t.Logf("%d modules, %d without Pulse; Pulse adds %s", len(mods), len(bare), strings.Join(added, " "))
			limit := c.max
			if limit == 0 {
				limit = len(bare) + maxAdded
			}
			if len(mods) > limit {
				t.Errorf("go list -m all has %d modules, want at most %d", len(mods), limit)
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

// library are the packages every consumer imports besides its adapter.
var library = []string{"github.com/pulse-dev/pulse/timeseries", "github.com/pulse-dev/pulse/cleaner",
	"github.com/pulse-dev/pulse/dashboard"}

// graph builds a consumer importing imports, tidies it and returns the
// module paths of its `go list -m all`.
func graph(t *testing.T, root string, modules, imports []string) []string {
	t.Helper()
	mods, _ := graphs(t, root, modules, imports)
	return mods
}

// graphs builds a consumer importing imports, tidies it and returns the
// module paths of its `go list -m all` and the packages it links, `go
// list -deps` of its main package.
func graphs(t *testing.T, root string, modules, imports []string) (mods, pkgs []string) {
	t.Helper()
	dir := writeConsumer(t, root, modules, imports)
	goCmd(t, dir, "mod", "tidy")
	goCmd(t, dir, "build", "./...")
	mods = strings.Fields(goCmd(t, dir, "list", "-m", "-f", "{{.Path}}", "all"))
	pkgs = strings.Fields(goCmd(t, dir, "list", "-deps", "-f", "{{.ImportPath}}", "."))
	return mods, pkgs
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
	for _, p := range imports {
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
