package seriesname

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// oracles are the folders whose code checks Pulse from outside: the
// adapter conformance kit and the test harness spell the names they
// expect themselves, so that a wrong grammar here fails them instead of
// agreeing with itself.
var oracles = []string{"adapter/adaptertest", "internal/testenv"}

// stray matches a string literal that spells a part of a series name.
var stray = []*regexp.Regexp{
	regexp.MustCompile(`^(hits|unmatched|OTHER)$`),
	regexp.MustCompile(`^ ?status:([1-5]xx|other)?$`),
	regexp.MustCompile(`^ ?status:([1-5]xx|other)? `),
	regexp.MustCompile(`^slow:`),
}

// word marks a line whose literals are words of another vocabulary that
// share a series' spelling, such as api/routes' sort=hits.
const word = "not series names"

// TestOneDefinition fails on a series-name part spelled in shipped code
// outside this package: a literal of the app's series, the unmatched
// series, the other method, a status class or the slow prefix, or a
// list of the route methods.
func TestOneDefinition(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	self, _ := filepath.Abs(".")
	fset := token.NewFileSet()
	var files int
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			if p == self || skipDir(rel, d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution|parser.ParseComments)
		if err != nil {
			return err
		}
		files++
		words := markedLines(fset, f)
		for _, s := range strays(f) {
			if words[fset.Position(s.Pos()).Line] {
				continue
			}
			t.Errorf("%s: %s spells a series-name part: use internal/seriesname", fset.Position(s.Pos()), s.what)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 100 {
		t.Fatalf("read %d files under %s: not the module's tree", files, root)
	}
}

// markedLines are the lines of f with a comment that says word.
func markedLines(fset *token.FileSet, f *ast.File) map[int]bool {
	lines := map[int]bool{}
	for _, g := range f.Comments {
		for _, c := range g.List {
			if strings.Contains(c.Text, word) || strings.Contains(c.Text, "not a series name") {
				lines[fset.Position(c.Pos()).Line] = true
			}
		}
	}
	return lines
}

func skipDir(rel, name string) bool {
	if strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules" {
		return true
	}
	for _, o := range oracles {
		if filepath.ToSlash(rel) == o {
			return true
		}
	}
	return false
}

type finding struct {
	ast.Node
	what string
}

func strays(f *ast.File) []finding {
	var out []finding
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.ImportSpec:
			return false
		case *ast.BasicLit:
			if s, err := strconv.Unquote(n.Value); err == nil && n.Kind == token.STRING && isStray(s) {
				out = append(out, finding{n, n.Value})
			}
		case *ast.CompositeLit:
			if methods(n) >= 3 {
				out = append(out, finding{n, "a list of methods"})
			}
		}
		return true
	})
	return out
}

func isStray(s string) bool {
	for _, re := range stray {
		if re.MatchString(s) {
			return true
		}
	}
	return false
}

// methods counts the route methods among a composite literal's
// elements, written as strings or as net/http's constants.
func methods(c *ast.CompositeLit) int {
	n := 0
	for _, e := range c.Elts {
		var name string
		switch e := e.(type) {
		case *ast.BasicLit:
			name, _ = strconv.Unquote(e.Value)
		case *ast.SelectorExpr:
			name = strings.ToUpper(strings.TrimPrefix(e.Sel.Name, "Method"))
		}
		if name != "" && name != OtherMethod && MethodIndex(name) != Other {
			n++
		}
	}
	return n
}
