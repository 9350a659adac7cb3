package timeseries

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"slices"
	"strings"
	"testing"
)

// maxExported bounds the package's exported names. What an app needs is
// here; what the other Pulse packages share goes in internal/series.
const maxExported = 30

// TestExportedSurface counts the exported names of the package's non-test
// files: top-level types, functions, constants and variables, and the
// methods of exported types, as golens does.
func TestExportedSurface(t *testing.T) {
	names := exportedNames(t, ".")
	t.Logf("%d exported names: %s", len(names), strings.Join(names, " "))
	if len(names) > maxExported {
		t.Errorf("package timeseries exports %d names, at most %d: %s", len(names), maxExported, strings.Join(names, " "))
	}
}

func exportedNames(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	fset := token.NewFileSet()
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".go") || strings.HasSuffix(e.Name(), "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, e.Name(), nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, decl := range f.Decls {
			names = append(names, declNames(decl)...)
		}
	}
	slices.Sort(names)
	return names
}

func declNames(decl ast.Decl) []string {
	var names []string
	switch d := decl.(type) {
	case *ast.FuncDecl:
		if !d.Name.IsExported() {
			break
		}
		if d.Recv == nil {
			names = append(names, d.Name.Name)
		} else if recv := receiverName(d.Recv.List[0].Type); ast.IsExported(recv) {
			names = append(names, recv+"."+d.Name.Name)
		}
	case *ast.GenDecl:
		for _, spec := range d.Specs {
			switch s := spec.(type) {
			case *ast.TypeSpec:
				if s.Name.IsExported() {
					names = append(names, s.Name.Name)
				}
			case *ast.ValueSpec:
				for _, id := range s.Names {
					if id.IsExported() {
						names = append(names, id.Name)
					}
				}
			}
		}
	}
	return names
}

func receiverName(e ast.Expr) string {
	switch t := e.(type) {
	case *ast.StarExpr:
		return receiverName(t.X)
	case *ast.IndexExpr:
		return receiverName(t.X)
	case *ast.Ident:
		return t.Name
	}
	return ""
}
