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

// TestNoShippedPackageImportsHarness: no package outside the harness
// imports one inside it, outside its tests.
func TestNoShippedPackageImportsHarness(t *testing.T) {
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
	shipped := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		if strings.HasPrefix(fields[0], harness) {
			continue
		}
		shipped++
		for _, imp := range fields[1:] {
			if strings.HasPrefix(imp, harness) {
				t.Errorf("%s imports %s outside its tests", fields[0], imp)
			}
		}
	}
	if shipped < 10 {
		t.Fatalf("go list saw %d shipped packages; the workspace is not what this test expects:\n%s", shipped, out)
	}
}
