package dashtest_test

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyTestsImport keeps the fixture out of every module's non-test
// code: it starts redis-server and fails tests, which no build of the
// library, its adapters or the example may link in.
func TestOnlyTestsImport(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
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
	const self = "github.com/pulse-dev/pulse/internal/dashtest"
	listed := 0
	for line := range strings.Lines(string(out)) {
		fields := strings.Fields(line)
		listed++
		for _, imp := range fields[1:] {
			if imp == self {
				t.Errorf("%s imports %s outside its tests", fields[0], self)
			}
		}
	}
	if listed < 10 {
		t.Fatalf("go list saw %d packages; the workspace is not what this test expects:\n%s", listed, out)
	}
}
