package race

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// root is the repository, three levels up from this package.
const root = "../../.."

// makeVar is the value of a variable set in the Makefile, with make's $$
// read as $.
func makeVar(t *testing.T, makefile, name string) string {
	t.Helper()
	m := regexp.MustCompile(`(?m)^(?:export )?` + name + ` = (.*)$`).FindStringSubmatch(makefile)
	if m == nil {
		t.Fatalf("the Makefile sets no %s", name)
	}
	return strings.ReplaceAll(m[1], "$$", "$")
}

// A test that skips the race pass must run in a pass without it: every
// caller of SkipMeasurement is named by MEASURE_RUN in a package of
// MEASURE_PKGS, or by TIMED_SLOW_RUN in SLOW_DIR.
func TestEveryMeasurementRunsWithoutRace(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	mk := string(b)
	measure := regexp.MustCompile(makeVar(t, mk, "MEASURE_RUN"))
	slow := regexp.MustCompile(makeVar(t, mk, "TIMED_SLOW_RUN"))
	measurePkgs := strings.Fields(makeVar(t, mk, "MEASURE_PKGS"))
	slowDir := makeVar(t, mk, "SLOW_DIR")
	found := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, "_test.go") {
			return nil
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		for _, name := range measurements(t, path) {
			found++
			inMeasure := measure.MatchString(name) && containsPkg(measurePkgs, dir)
			inSlow := slow.MatchString(name) && dir == slowDir
			if !inMeasure && !inSlow {
				t.Errorf("%s (%s) skips the race pass but no pass without -race runs it: add it to MEASURE_RUN", name, dir)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if found == 0 {
		t.Fatal("no caller of SkipMeasurement found: the walk looked in the wrong place")
	}
}

func containsPkg(pkgs []string, dir string) bool {
	for _, p := range pkgs {
		if p == "github.com/pulse-dev/pulse/"+filepath.ToSlash(dir) {
			return true
		}
	}
	return false
}

// measurements are the tests of file that call race.SkipMeasurement.
func measurements(t *testing.T, file string) []string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, decl := range f.Decls {
		fn, ok := decl.(*ast.FuncDecl)
		if !ok || fn.Body == nil || !strings.HasPrefix(fn.Name.Name, "Test") {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "SkipMeasurement" {
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "race" {
					names = append(names, fn.Name.Name)
					return false
				}
			}
			return true
		})
	}
	return names
}
