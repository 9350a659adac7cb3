package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeMountsEachFramework: "Mount it in your app" has a subsection
// per framework that links its whole program and quotes a short excerpt
// of it (the excerpt itself is checked by TestGoBlocksMatchTheirFiles).
func TestReadmeMountsEachFramework(t *testing.T) {
	readme := readRepoFile(t, "README.md")
	_, section, ok := strings.Cut(readme, "\n## Mount it in your app\n")
	if !ok {
		t.Fatal(`README.md has no "## Mount it in your app" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	for _, c := range []struct{ heading, file string }{
		{"### Echo v4", "example/minimal/main.go"},
		{"### Echo v5", "example/minimalv5/main.go"},
		{"### net/http", "example/minimalhttp/main.go"},
	} {
		t.Run(c.file, func(t *testing.T) {
			_, sub, ok := strings.Cut(section, "\n"+c.heading+"\n")
			if !ok {
				t.Fatalf("the section has no %q subsection", c.heading)
			}
			sub, _, _ = strings.Cut(sub, "\n### ")
			if !strings.Contains(sub, "]("+c.file+")") {
				t.Errorf("%s does not link %s", c.heading, c.file)
			}
			p := parsePage("README.md", sub)
			if len(p.blocks) != 1 || p.blocks[0].mark != "excerpt" || p.blocks[0].file != c.file {
				t.Fatalf("%s should hold one Go block marked <!-- doccheck: excerpt %s -->", c.heading, c.file)
			}
			if n := strings.Count(p.blocks[0].text, "\n"); n > 16 {
				t.Errorf("%s quotes %d lines; keep it to about 15 and link the rest", c.heading, n)
			}
		})
	}
}

// TestPagesStayShort: the two pages a newcomer opens first stay short
// enough to read in minutes.
func TestPagesStayShort(t *testing.T) {
	for _, c := range []struct {
		name string
		max  int
	}{
		{"README.md", 300},
		{"BENCHMARKS.md", 250},
	} {
		text, err := os.ReadFile(filepath.Join(root, c.name))
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(text), "\n"); n > c.max {
			t.Errorf("%s has %d lines, more than %d: move reference material to docs/", c.name, n, c.max)
		}
	}
}
