package shape

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxMethods bounds the methods declared on one type: a type past it
// does more than one job and is split by role.
const maxMethods = 30

// over are the types still past maxMethods, with their count when the
// bound came: each may shrink, none may grow, and one split below the
// bound must leave the list.
var over = map[string]int{}

// TestMethodsPerType fails for each type of the shipped code, exported
// or not, declared with more than maxMethods methods, and logs the
// largest.
func TestMethodsPerType(t *testing.T) {
	counts := methodCounts(t, filepath.Join("..", "..", ".."))
	if len(counts) < 100 {
		t.Fatalf("found %d types with methods: not the module's tree", len(counts))
	}
	types := make([]string, 0, len(counts))
	for typ := range counts {
		types = append(types, typ)
	}
	sort.Slice(types, func(i, j int) bool {
		return counts[types[i]] > counts[types[j]] || counts[types[i]] == counts[types[j]] && types[i] < types[j]
	})
	t.Logf("most methods: %s %d, %s %d, %s %d", types[0], counts[types[0]], types[1], counts[types[1]], types[2], counts[types[2]])
	for _, typ := range types {
		n, listed := over[typ]
		switch {
		case listed && counts[typ] <= maxMethods:
			t.Errorf("%s has %d methods now: take it off the list of types past the bound", typ, counts[typ])
		case listed && counts[typ] > n:
			t.Errorf("%s has %d methods, %d when the bound came; at most %d", typ, counts[typ], n, maxMethods)
		case !listed && counts[typ] > maxMethods:
			t.Errorf("%s has %d methods; at most %d", typ, counts[typ], maxMethods)
		}
	}
	for typ := range over {
		if _, ok := counts[typ]; !ok {
			t.Errorf("%s, on the list of types past the bound, is gone: take it off", typ)
		}
	}
}

// methodCounts counts the methods of each type declared in the non-test
// Go files under root, by package folder and type name.
func methodCounts(t *testing.T, root string) map[string]int {
	counts := map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); p != root && (strings.HasPrefix(n, ".") || n == "testdata" || n == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		dir, _ := filepath.Rel(root, filepath.Dir(p))
		for _, decl := range f.Decls {
			if fn, ok := decl.(*ast.FuncDecl); ok && fn.Recv != nil && len(fn.Recv.List) == 1 {
				counts[filepath.ToSlash(dir)+"."+receiver(fn.Recv.List[0].Type)]++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return counts
}

// receiver is the type name of a method's receiver: T of *T, T[K] and
// *T[K, V].
func receiver(e ast.Expr) string {
	switch e := e.(type) {
	case *ast.StarExpr:
		return receiver(e.X)
	case *ast.IndexExpr:
		return receiver(e.X)
	case *ast.IndexListExpr:
		return receiver(e.X)
	case *ast.Ident:
		return e.Name
	}
	return "?"
}
