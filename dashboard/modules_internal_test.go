package dashboard

import (
	"strings"
	"testing"
)

// TestLinkModules: imports are served with the imported module's version,
// so a change to a module changes the version of every module importing
// it; a cycle or a missing module is refused.
func TestLinkModules(t *testing.T) {
	raw := map[string][]byte{
		"main.js": []byte("import { a } from './a.js';\nimport './b.js';\n"),
		"a.js":    []byte("import { b } from './b.js';\nexport const a = b;\n"),
		"b.js":    []byte("export const b = 1;\n"),
	}
	linked := linkModules(raw)
	a, b, main := linked["a.js"], linked["b.js"], linked["main.js"]
	if want := "import { b } from './b.js?v=" + b.version + "';"; !strings.HasPrefix(string(a.body), want) {
		t.Errorf("a.js served as %q, want it to start %q", a.body, want)
	}
	if want := "import './b.js?v=" + b.version + "';"; !strings.Contains(string(main.body), want) {
		t.Errorf("main.js served as %q, want %q", main.body, want)
	}

	raw["b.js"] = []byte("export const b = 2;\n")
	again := linkModules(raw)
	for _, name := range []string{"main.js", "a.js", "b.js"} {
		if again[name].version == linked[name].version {
			t.Errorf("%s kept its version after b.js changed", name)
		}
	}

	for name, bad := range map[string]map[string][]byte{
		"cycle":   {"a.js": []byte("import './b.js';"), "b.js": []byte("import './a.js';")},
		"missing": {"a.js": []byte("import { x } from './x.js';")},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: no panic", name)
				}
			}()
			linkModules(bad)
		}()
	}
}
