package race

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// makeList is a Makefile variable written as $(addprefix <prefix>,<words>):
// the words with the prefix.
func makeList(t *testing.T, makefile, name string) []string {
	t.Helper()
	m := regexp.MustCompile(`^\$\(addprefix ([^,]+),([^)]*)\)$`).FindStringSubmatch(makeVar(t, makefile, name))
	if m == nil {
		t.Fatalf("%s is not written as $(addprefix <prefix>,<packages>)", name)
	}
	var out []string
	for _, w := range strings.Fields(m[2]) {
		out = append(out, m[1]+w)
	}
	return out
}

// A package whose code or tests start goroutines or share memory runs in
// the race pass; the others run once without -race. A new package with
// concurrency must be added to RACE_PKGS, or the race detector would not
// see it.
func TestEveryConcurrentPackageRunsUnderRace(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	racePkgs := map[string]bool{}
	for _, p := range makeList(t, string(b), "RACE_PKGS") {
		racePkgs[p] = true
	}
	concurrent := map[string]string{} // package dir -> why
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") {
			return nil
		}
		dir, _ := filepath.Rel(root, filepath.Dir(path))
		if why := concurrency(t, path); why != "" && concurrent[dir] == "" {
			concurrent[dir] = filepath.Base(path) + ": " + why
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(concurrent) < 10 {
		t.Fatalf("only %d packages with concurrency found: the walk looked in the wrong place", len(concurrent))
	}
	for dir, why := range concurrent {
		if !hasTests(t, filepath.Join(root, dir)) {
			continue // nothing to run; its code runs in its importers' tests
		}
		if pkg := "github.com/pulse-dev/pulse/" + filepath.ToSlash(dir); !racePkgs[pkg] {
			t.Errorf("%s has concurrency (%s) but is not in RACE_PKGS, so no test of it runs under -race", pkg, why)
		}
	}
}

// concurrency says why the file's code runs on more than one goroutine
// (a go statement, t.Parallel, an import of sync or sync/atomic), or "".
func concurrency(t *testing.T, file string) string {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	for _, imp := range f.Imports {
		if p, _ := strconv.Unquote(imp.Path.Value); p == "sync" || p == "sync/atomic" {
			return "imports " + p
		}
	}
	why := ""
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.GoStmt:
			why = "a go statement"
		case *ast.SelectorExpr:
			if n.Sel.Name == "Parallel" {
				why = "calls Parallel"
			}
		}
		return why == ""
	})
	return why
}

func hasTests(t *testing.T, dir string) bool {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(dir, "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	return len(names) > 0
}
