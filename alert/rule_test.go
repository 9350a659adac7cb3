package alert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadRulesFile(t *testing.T) {
	rules, err := LoadRules("testdata/rules.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(rules) != 5 {
		t.Fatalf("%d rules, want 5", len(rules))
	}
	app := rules[0]
	if app.Target != 99.9 || app.Period.Std() != 30*24*time.Hour || len(app.Windows) != 3 {
		t.Errorf("app rule %+v: want 99.9 %% over 30 d with the three default window pairs", app)
	}
	if w := app.Windows[0]; w.Long.Std() != time.Hour || w.Short.Std() != 5*time.Minute || w.Burn != 14.4 || w.Severity != "page" {
		t.Errorf("first default window %+v", w)
	}
	if w := app.Windows[2]; w.Long.Std() != 72*time.Hour || w.Short.Std() != 6*time.Hour || w.Burn != 1 || w.Severity != "ticket" {
		t.Errorf("ticket window %+v", w)
	}
	route := rules[1]
	if route.Series != EveryRoute || len(route.Windows) != 2 || route.For.Std() != 2*time.Minute {
		t.Errorf("route rule %+v: the file's two windows and for 2m", route)
	}
	lat := rules[4]
	if lat.Kind != Latency || lat.Series != App || lat.Threshold.Std() != 500*time.Millisecond || lat.Target != 99 ||
		lat.Period.Std() != 30*24*time.Hour || len(lat.Windows) != 3 || lat.Windows[0].Burn != 14.4 || lat.Severity != "" {
		t.Errorf("latency rule %+v: want 500 ms, 99 %% over 30 d with the three default window pairs", lat)
	}
	if abs := rules[2]; abs.Quiet.Std() != 15*time.Minute || abs.MinBaseline != 10 || abs.Severity != "page" {
		t.Errorf("absence rule %+v", abs)
	}
}

func TestBadRuleFiles(t *testing.T) {
	cases := []struct {
		name, body string
		want       []string // every one must be in the error
	}{
		{"not json", `{"rules": [`, []string{"rule file"}},
		{"syntax line", "{\"rules\": [\n{\"name\": \"a\",,}]}", []string{"line 2"}},
		{"no rules list", `{}`, []string{`no "rules" list`}},
		{"trailing text", `{"rules": []} {}`, []string{"text after"}},
		{"unknown field", `{"rules": [{"name": "A", "kind": "availability", "series": "hits", "targt": 99}]}`, []string{`unknown field "targt"`}},
		{"unknown kind", `{"rules": [{"name": "Weird", "kind": "latency-ish", "series": "hits"}]}`, []string{`"Weird"`, `unknown kind "latency-ish"`}},
		{"no kind", `{"rules": [{"name": "NoKind", "series": "hits"}]}`, []string{`"NoKind"`, "no kind"}},
		{"no name", `{"rules": [{"kind": "absence", "series": "hits"}]}`, []string{"rule #1", "no name"}},
		{"duplicate name", `{"rules": [{"name": "A", "kind": "absence", "series": "hits"}, {"name": "A", "kind": "absence", "series": "hits"}]}`, []string{`"A"`, "rule #1"}},
		{"target 100", `{"rules": [{"name": "Full", "kind": "availability", "series": "hits", "target": 100}]}`, []string{`"Full"`, "target 100%"}},
		{"target above 100", `{"rules": [{"name": "Over", "kind": "availability", "series": "hits", "target": 120}]}`, []string{`"Over"`, "target"}},
		{"target negative", `{"rules": [{"name": "Neg", "kind": "availability", "series": "hits", "target": -1}]}`, []string{`"Neg"`, "target"}},
		{"negative window", `{"rules": [{"name": "Win", "kind": "availability", "series": "hits", "windows": [{"long": "-1h", "short": "5m", "burn": 14.4, "severity": "page"}]}]}`, []string{`"Win"`, "window 1", "positive"}},
		{"zero window", `{"rules": [{"name": "Zero", "kind": "availability", "series": "hits", "windows": [{"long": "1h", "short": "0s", "burn": 14.4, "severity": "page"}]}]}`, []string{`"Zero"`, "window 1"}},
		{"short over long", `{"rules": [{"name": "Inv", "kind": "availability", "series": "hits", "windows": [{"long": "5m", "short": "1h", "burn": 2, "severity": "page"}]}]}`, []string{`"Inv"`, "longer than long"}},
		{"no burn", `{"rules": [{"name": "NoBurn", "kind": "availability", "series": "hits", "windows": [{"long": "1h", "short": "5m", "severity": "page"}]}]}`, []string{`"NoBurn"`, "burn rate"}},
		{"empty window list", `{"rules": [{"name": "Empty", "kind": "availability", "series": "hits", "windows": []}]}`, []string{`"Empty"`, "no burn-rate windows"}},
		{"negative for", `{"rules": [{"name": "For", "kind": "absence", "series": "hits", "for": "-5m"}]}`, []string{`"For"`, "negative"}},
		{"negative period", `{"rules": [{"name": "Per", "kind": "availability", "series": "hits", "period": "-30d"}]}`, []string{`"Per"`, "negative"}},
		{"number duration", `{"rules": [{"name": "Num", "kind": "absence", "series": "hits", "quiet": 900}]}`, []string{"duration is a string"}},
		{"bad duration", `{"rules": [{"name": "Bad", "kind": "absence", "series": "hits", "quiet": "15 minutes"}]}`, []string{`bad duration "15 minutes"`}},
		{"empty route", `{"rules": [{"name": "NoRoute", "kind": "availability", "series": ""}]}`, []string{`"NoRoute"`, "no series"}},
		{"absence empty route", `{"rules": [{"name": "NoRoute2", "kind": "absence"}]}`, []string{`"NoRoute2"`, "no series"}},
		{"not a route", `{"rules": [{"name": "Class", "kind": "availability", "series": "GET /x status:5xx"}]}`, []string{`"Class"`, "not the app"}},
		{"lower-case method", `{"rules": [{"name": "Lower", "kind": "availability", "series": "get /x"}]}`, []string{`"Lower"`, "not the app"}},
		{"unknown check", `{"rules": [{"name": "Chk", "kind": "health", "check": "disk"}]}`, []string{`"Chk"`, `unknown health check "disk"`}},
		{"health with series", `{"rules": [{"name": "HS", "kind": "health", "check": "dropped", "series": "hits"}]}`, []string{`"HS"`, "names no series"}},
		{"latency no threshold", `{"rules": [{"name": "Slow0", "kind": "latency", "series": "hits"}]}`, []string{`"Slow0"`, "threshold above 0"}},
		{"latency negative threshold", `{"rules": [{"name": "SlowNeg", "kind": "latency", "series": "hits", "threshold": "-500ms"}]}`, []string{`"SlowNeg"`, "threshold above 0"}},
		{"latency target 100", `{"rules": [{"name": "SlowFull", "kind": "latency", "series": "hits", "threshold": "500ms", "target": 100}]}`, []string{`"SlowFull"`, "target 100%"}},
		{"latency target negative", `{"rules": [{"name": "SlowTgt", "kind": "latency", "series": "hits", "threshold": "500ms", "target": -99}]}`, []string{`"SlowTgt"`, "target -99%"}},
		{"latency no series", `{"rules": [{"name": "SlowNone", "kind": "latency", "threshold": "500ms"}]}`, []string{`"SlowNone"`, "no series"}},
		{"latency not a route", `{"rules": [{"name": "SlowClass", "kind": "latency", "series": "GET /x status:5xx", "threshold": "500ms"}]}`, []string{`"SlowClass"`, "not the app"}},
		{"latency unknown route form", `{"rules": [{"name": "SlowPath", "kind": "latency", "series": "/posts/:id", "threshold": "500ms"}]}`, []string{`"SlowPath"`, "not the app"}},
		{"latency bad window", `{"rules": [{"name": "SlowWin", "kind": "latency", "series": "hits", "threshold": "1s", "windows": [{"long": "5m", "short": "1h", "burn": 2, "severity": "page"}]}]}`, []string{`"SlowWin"`, "longer than long"}},
		{"threshold on availability", `{"rules": [{"name": "AvThr", "kind": "availability", "series": "hits", "threshold": "1s"}]}`, []string{`"AvThr"`, "threshold is for latency rules only"}},
		{"two bad rules", `{"rules": [{"name": "One", "kind": "x"}, {"name": "Two", "kind": "availability", "series": "hits", "target": 0.0001, "windows": [{"long": "1h", "short": "5m", "burn": -1, "severity": "page"}]}]}`, []string{`"One"`, `"Two"`}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "rules.json")
			if err := os.WriteFile(path, []byte(c.body), 0o644); err != nil {
				t.Fatal(err)
			}
			rules, err := LoadRules(path)
			if err == nil {
				t.Fatalf("no error; rules %+v", rules)
			}
			if rules != nil {
				t.Errorf("rules returned with the error: %+v", rules)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if !strings.Contains(err.Error(), path) {
				t.Errorf("error %q does not name the file", err)
			}
		})
	}
}

func TestLoadRulesMissingFile(t *testing.T) {
	if _, err := LoadRules(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Fatalf("err = %v, want one naming the file", err)
	}
}

func TestDefaultRulesValid(t *testing.T) {
	rules, err := ValidateRules(DefaultRules())
	if err != nil {
		t.Fatal(err)
	}
	if rules[0].Kind != Availability || rules[0].Series != App || rules[1].Kind != Absence || rules[1].Series != App {
		t.Errorf("defaults should start with the app's availability SLO and absence: %+v", rules[:2])
	}
}

func TestDurationText(t *testing.T) {
	for _, c := range []struct {
		in   string
		want time.Duration
		out  string
	}{
		{"30d", 30 * 24 * time.Hour, "30d"},
		{"1d12h", 36 * time.Hour, "36h0m0s"},
		{"5m", 5 * time.Minute, "5m0s"},
		{"72h", 72 * time.Hour, "3d"},
	} {
		d, err := ParseDuration(c.in)
		if err != nil || d.Std() != c.want || d.String() != c.out {
			t.Errorf("%q: %v %v %q, want %v %q", c.in, d.Std(), err, d, c.want, c.out)
		}
	}
	for _, bad := range []string{"", "d", "xd", "1d1", "5 m", "99999999d"} {
		if _, err := ParseDuration(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}
