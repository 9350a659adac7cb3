package doccheck

import (
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	jsonTagRE = regexp.MustCompile("json:\"([^\",]+)")
	mapKeyRE  = regexp.MustCompile(`"([A-Za-z0-9_]+)":\s`)
	// quantileRE names the quantiles of api/durations, made from the q asked for.
	quantileRE = regexp.MustCompile(`^p[0-9]+(\.[0-9]+)?$`)
)

// dataObjects hold data, not fields: an entity's counts are named by the
// app's own Kind.Fields.
var dataObjects = map[string]bool{"counts": true}

// TestJSONBlocksUseFieldsTheCodeWrites: every json block parses, and
// every field name in it is a json tag or a map key of the repository's
// Go code (outside tests), so a renamed or dropped field shows here.
func TestJSONBlocksUseFieldsTheCodeWrites(t *testing.T) {
	names := codeJSONNames(t)
	n := 0
	for _, p := range docPages(t) {
		for _, b := range p.blocks {
			if b.lang != "json" {
				continue
			}
			n++
			where := fmt.Sprintf("%s:%d", p.path, b.line)
			var v any
			if err := json.Unmarshal([]byte(b.text), &v); err != nil {
				t.Errorf("%s: json block does not parse: %v", where, err)
				continue
			}
			for _, k := range unknownKeys(v, names) {
				t.Errorf("%s: field %q is written by no Go code of the repository", where, k)
			}
		}
	}
	if n == 0 {
		t.Error("no json block found; the API reference should have examples")
	}
}

func unknownKeys(v any, names map[string]bool) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if !names[k] && !quantileRE.MatchString(k) {
				out = append(out, k)
			}
			if !dataObjects[k] {
				out = append(out, unknownKeys(e, names)...)
			}
		}
	case []any:
		for _, e := range v {
			out = append(out, unknownKeys(e, names)...)
		}
	}
	return out
}

// codeJSONNames collects json tags and string map keys from every
// non-test Go file of the repository.
func codeJSONNames(t *testing.T) map[string]bool {
	t.Helper()
	names := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "node_modules" || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, re := range []*regexp.Regexp{jsonTagRE, mapKeyRE} {
			for _, m := range re.FindAllSubmatch(src, -1) {
				names[string(m[1])] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func TestUnknownKeys(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"a":1,"b":[{"c":2,"p99.9":3}],"counts":{"views":1}}`), &v); err != nil {
		t.Fatal(err)
	}
	got := unknownKeys(v, map[string]bool{"a": true, "b": true, "counts": true})
	if len(got) != 1 || got[0] != "c" {
		t.Errorf("unknownKeys = %v, want [c]", got)
	}
}
