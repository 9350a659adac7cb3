package doccheck

import (
	"fmt"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

// elision is the line that stands for lines an excerpt leaves out.
const elision = "// …"

// TestGoBlocksMatchTheirFiles: a marked block is its file, or a run of
// its lines; a whole program carries a mark; every other Go block parses.
func TestGoBlocksMatchTheirFiles(t *testing.T) {
	for _, p := range docPages(t) {
		for _, b := range p.blocks {
			where := fmt.Sprintf("%s:%d", p.path, b.line)
			switch b.mark {
			case "response": // TestAPIExamplesMatchLiveAnswers
			case "file":
				if b.text != readRepoFile(t, b.file) {
					t.Errorf("%s: the block differs from %s; copy the file into the page", where, b.file)
				}
			case "excerpt":
				if err := matchExcerpt(b.text, readRepoFile(t, b.file)); err != nil {
					t.Errorf("%s: not an excerpt of %s: %v", where, b.file, err)
				}
			default:
				if b.lang != "go" {
					continue
				}
				if wholeProgram(b.text) {
					t.Errorf("%s: a whole program with no <!-- doccheck: file PATH --> mark", where)
				} else if err := parseSnippet(b.text); err != nil {
					t.Errorf("%s: Go block does not parse: %v", where, err)
				}
			}
		}
	}
}

func wholeProgram(code string) bool {
	return strings.HasPrefix(code, "package ") || strings.HasPrefix(code, "// Command ")
}

// parseSnippet parses code as statements in a function body, or else as
// declarations of a file.
func parseSnippet(code string) error {
	fset := token.NewFileSet()
	_, err := parser.ParseFile(fset, "", "package p\nfunc _() {\n"+code+"\n}\n", 0)
	if err == nil {
		return nil
	}
	if _, err2 := parser.ParseFile(fset, "", "package p\n"+code, 0); err2 == nil {
		return nil
	}
	return err
}

// matchExcerpt reports whether excerpt's chunks (split at elision lines)
// are each a run of file's lines, in order. A chunk may leave out the
// tabs that indent its run in the file, the same number on every line.
func matchExcerpt(excerpt, file string) error {
	lines := strings.Split(strings.TrimSuffix(file, "\n"), "\n")
	from := 0
	for i, chunk := range chunks(excerpt) {
		at, ok := findRun(lines, chunk, from)
		if !ok {
			return fmt.Errorf("chunk %d (%q…) is not a run of the file's lines after line %d", i+1, chunk[0], from)
		}
		from = at + len(chunk)
	}
	return nil
}

func chunks(excerpt string) [][]string {
	var out [][]string
	var cur []string
	for _, l := range strings.Split(strings.TrimSuffix(excerpt, "\n"), "\n") {
		if strings.TrimSpace(l) == elision {
			if len(cur) > 0 {
				out = append(out, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, l)
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// findRun finds chunk in lines at or after from: the first line fixes
// how many tabs the file adds, and every other line must match with as
// many (blank lines match blank lines).
func findRun(lines, chunk []string, from int) (int, bool) {
	for at := from; at+len(chunk) <= len(lines); at++ {
		extra, ok := strings.CutSuffix(lines[at], chunk[0])
		if !ok || strings.Trim(extra, "\t") != "" {
			continue
		}
		match := true
		for j, l := range chunk[1:] {
			want := lines[at+1+j]
			if l == "" && strings.TrimSpace(want) == "" {
				continue
			}
			if want != extra+l {
				match = false
				break
			}
		}
		if match {
			return at, true
		}
	}
	return 0, false
}

func TestMatchExcerpt(t *testing.T) {
	file := "package main\n\nfunc run() error {\n\tx := 1\n\tif x > 0 {\n\t\treturn nil\n\t}\n\ty := 2\n\treturn nil\n}\n"
	for _, c := range []struct {
		name, excerpt string
		ok            bool
	}{
		{"dedented run", "x := 1\nif x > 0 {\n\treturn nil\n}\n", true},
		{"as indented in the file", "\tx := 1\n", true},
		{"two chunks in order", "x := 1\n// …\ny := 2\n", true},
		{"two chunks out of order", "y := 2\n// …\nx := 1\n", false},
		{"a changed line", "x := 1\nif x > 1 {\n", false},
		{"a line left out without elision", "x := 1\n\treturn nil\n", false},
		{"indentation that differs within a chunk", "x := 1\n\t\tif x > 0 {\n", false},
		{"a whole line that is only a suffix", "= 1\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := matchExcerpt(c.excerpt, file)
			if (err == nil) != c.ok {
				t.Errorf("matchExcerpt = %v, want ok %v", err, c.ok)
			}
		})
	}
}

func TestParseSnippet(t *testing.T) {
	for _, c := range []struct {
		code string
		ok   bool
	}{
		{"x, err := f()\nif err != nil {\n\treturn err\n}\n", true},
		{"func f() {}\n", true},
		{"x := f(\n", false},
	} {
		if err := parseSnippet(c.code); (err == nil) != c.ok {
			t.Errorf("parseSnippet(%q) = %v, want ok %v", c.code, err, c.ok)
		}
	}
}
