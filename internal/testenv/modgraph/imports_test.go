package modgraph

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// harness is where the test and benchmark environments live: packages
// that start servers and fail tests, which no build of the library, its
// adapters, its exporters or the example may link in.
const harness = "github.com/pulse-dev/pulse/internal/testenv/"

// workspaceImports maps every package of the workspace to what it
// imports outside its tests.
func workspaceImports(t *testing.T) map[string][]string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join("..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	// In the workspace, the pattern spans every module go.work joins.
	cmd := exec.Command("go", "list", "-f", `{{.ImportPath}} {{join .Imports " "}}`, "github.com/pulse-dev/pulse/...")
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	imports := map[string][]string{}
	for line := range strings.Lines(string(out)) {
		if fields := strings.Fields(line); len(fields) > 0 {
			imports[fields[0]] = fields[1:]
		}
	}
	return imports
}

// TestNoShippedPackageImportsHarness: no package outside the harness
// imports one inside it, outside its tests.
func TestNoShippedPackageImportsHarness(t *testing.T) {
	shipped := 0
	for pkg, imps := range workspaceImports(t) {
		if strings.HasPrefix(pkg, harness) {
			continue
		}
		shipped++
		for _, imp := range imps {
			if strings.HasPrefix(imp, harness) {
				t.Errorf("%s imports %s outside its tests", pkg, imp)
			}
		}
	}
	if shipped < 10 {
		t.Fatalf("go list saw %d shipped packages; the workspace is not what this test expects", shipped)
	}
}
