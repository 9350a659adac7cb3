package doccheck

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"

	"github.com/pulse-dev/pulse/internal/testenv/dashtest"
	"github.com/pulse-dev/pulse/internal/testenv/redistest"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestAPIExamplesMatchLiveAnswers asks a real dashboard, reading a real
// redis-server written by a real Recorder, each request the API
// reference shows an answer of (the mark <!-- doccheck: response GET
// api/… --> above the block), and checks that every field of the
// example is in the answer at the same place. Examples may leave fields
// out; they may not name one the answer lacks.
func TestAPIExamplesMatchLiveAnswers(t *testing.T) {
	p := readPage(t, "docs/api.md")
	f := dashtest.New(t, dashtest.Options{Labels: labels})
	n := 0
	for _, b := range p.blocks {
		if b.mark != "response" {
			continue
		}
		n++
		where := fmt.Sprintf("%s:%d", p.path, b.line)
		method, target, _ := strings.Cut(b.file, " ")
		if method != http.MethodGet || !strings.HasPrefix(target, "api/") {
			t.Errorf("%s: %q: a response mark names GET api/…", where, b.file)
			continue
		}
		res := dashtest.Get(t, f.Root+target)
		if res.Status != http.StatusOK {
			t.Errorf("%s: %s answered %d: %s", where, b.file, res.Status, res.Body)
			continue
		}
		var doc, live any
		if err := json.Unmarshal([]byte(b.text), &doc); err != nil {
			t.Errorf("%s: the example does not parse: %v", where, err)
			continue
		}
		if err := json.Unmarshal([]byte(res.Body), &live); err != nil {
			t.Errorf("%s: %s's answer does not parse: %v", where, b.file, err)
			continue
		}
		have := keyPaths(live, "", map[string]bool{})
		for _, k := range sortedKeys(keyPaths(doc, "", map[string]bool{})) {
			if !have[k] {
				t.Errorf("%s: the example has %s, which the answer to %s lacks (it has %v)", where, k, b.file, sortedKeys(have))
			}
		}
	}
	if n < 8 {
		t.Errorf("only %d examples carry a response mark; every dashboard example should", n)
	}
}

// labels names every entity, as an app's Config.Labels would.
func labels(_ context.Context, kind string, ids []int64) (map[int64]string, error) {
	out := make(map[int64]string, len(ids))
	for _, id := range ids {
		out[id] = fmt.Sprintf("%s %d", kind, id)
	}
	return out, nil
}

// keyPaths adds to out the path of every object field in v: "a.b" for
// {"a":{"b":…}}, "a[].b" for {"a":[{"b":…}]}. The fields of an entity's
// counts are the app's own, so counts is one path.
func keyPaths(v any, prefix string, out map[string]bool) map[string]bool {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			p := prefix + "." + k
			out[p] = true
			if !dataObjects[k] {
				keyPaths(e, p, out)
			}
		}
	case []any:
		for _, e := range v {
			keyPaths(e, prefix+"[]", out)
		}
	}
	return out
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func TestKeyPaths(t *testing.T) {
	var v any
	if err := json.Unmarshal([]byte(`{"a":{"b":1},"c":[{"d":2},{"e":3}],"counts":{"views":1}}`), &v); err != nil {
		t.Fatal(err)
	}
	got := strings.Join(sortedKeys(keyPaths(v, "", map[string]bool{})), " ")
	if want := ".a .a.b .c .c[].d .c[].e .counts"; got != want {
		t.Errorf("keyPaths = %s, want %s", got, want)
	}
}
