package doccheck

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeQuotesMinimalPrograms: each framework's subsection of "Mount
// it in your app" quotes its minimal program character for character.
func TestReadmeQuotesMinimalPrograms(t *testing.T) {
	root := filepath.Join("..", "..")
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Mount it in your app\n")
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
			program, err := os.ReadFile(filepath.Join(root, c.file))
			if err != nil {
				t.Fatal(err)
			}
			_, sub, ok := strings.Cut(section, "\n"+c.heading+"\n")
			if !ok {
				t.Fatalf("the section has no %q subsection", c.heading)
			}
			sub, _, _ = strings.Cut(sub, "\n### ")
			_, block, ok := strings.Cut(sub, "```go\n")
			if ok {
				block, _, ok = strings.Cut(block, "```\n")
			}
			if !ok {
				t.Fatalf("%s has no go code block", c.heading)
			}
			if block != string(program) {
				t.Errorf("README.md's %s block differs from %s; copy the file into the README", c.heading, c.file)
			}
		})
	}
}
