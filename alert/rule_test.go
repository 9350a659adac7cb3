package alert

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoadRulesFile(t *testing.T) {
	t.Parallel()
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
	t.Parallel()
	cases := []struct {
		name, body string
		want       []string // every one must be in the error
	}{
		{"not json", `{"rules": [`, []string{"ends before its rules object"}},
		{"syntax line", "{\"rules\": [\n{\"name\": \"a\",,}]}", []string{"line 2"}},
		{"not an object", `[]`, []string{"the file is not an object"}},
		{"rules not a list", `{"rules": {}}`, []string{`"rules" is not a list`}},
		{"no rules list", `{}`, []string{`rules: missing`}},
		{"unknown top-level field", `{"rules": [], "rule": []}`, []string{`rule: unknown field`}},
		{"trailing text", `{"rules": []} {}`, []string{"text after"}},
		{"unknown field", `{"rules": [{"name": "A", "kind": "availability", "series": "hits", "targt": 99}]}`, []string{`rule "A" (#1, line 1): targt: unknown field (did you mean "target"?)`}},
		{"unknown window field", `{"rules": [{"name": "W", "kind": "availability", "series": "hits", "windows": [{"long": "1h", "short": "5m", "burn": 14.4, "severity": "page", "rate": 2}]}]}`, []string{`rule "W" (#1, line 1): windows[1].rate: unknown field`}},
		{"given twice", `{"rules": [{"name": "A", "kind": "absence", "series": "hits", "series": "GET /x"}]}`, []string{`series: given twice`}},
		{"wrong type", `{"rules": [{"name": "T", "kind": "availability", "series": "hits", "target": "99.9"}]}`, []string{`rule "T" (#1, line 1): target: want a number, got a string`}},
		{"wrong type of name", `{"rules": [{"name": 7, "kind": "absence", "series": "hits"}]}`, []string{`rule #1, line 1: name: want a string, got a number`}},
		{"rule not an object", `{"rules": ["AppAvailability"]}`, []string{`rule #1, line 1: want an object, got a string`}},
		{"windows not a list", `{"rules": [{"name": "WL", "kind": "availability", "series": "hits", "windows": {"long": "1h"}}]}`, []string{`windows: want a list of window pairs, got an object`}},
		{"labels of numbers", `{"rules": [{"name": "L", "kind": "absence", "series": "hits", "labels": {"team": 3}}]}`, []string{`labels: want an object of strings`}},
		{"unknown kind", `{"rules": [{"name": "Weird", "kind": "latency-ish", "series": "hits"}]}`, []string{`"Weird"`, `kind: unknown kind "latency-ish"`}},
		{"no kind", `{"rules": [{"name": "NoKind", "series": "hits"}]}`, []string{`"NoKind"`, "kind: missing"}},
		{"no name", `{"rules": [{"kind": "absence", "series": "hits"}]}`, []string{"rule #1, line 1: name: missing"}},
		{"duplicate name", `{"rules": [{"name": "A", "kind": "absence", "series": "hits"}, {"name": "A", "kind": "absence", "series": "hits"}]}`, []string{`rule "A" (#2, line 1): name: "A" is the name of rule #1 too`}},
		{"target 100", `{"rules": [{"name": "Full", "kind": "availability", "series": "hits", "target": 100}]}`, []string{`"Full"`, "target: 100%"}},
		{"target above 100", `{"rules": [{"name": "Over", "kind": "availability", "series": "hits", "target": 120}]}`, []string{`"Over"`, "target: 120%"}},
		{"target negative", `{"rules": [{"name": "Neg", "kind": "availability", "series": "hits", "target": -1}]}`, []string{`"Neg"`, "target: -1%"}},
		{"negative window", `{"rules": [{"name": "Win", "kind": "availability", "series": "hits", "windows": [{"long": "-1h", "short": "5m", "burn": 14.4, "severity": "page"}]}]}`, []string{`"Win"`, "windows[1].long", "positive"}},
		{"zero window", `{"rules": [{"name": "Zero", "kind": "availability", "series": "hits", "windows": [{"long": "1h", "short": "0s", "burn": 14.4, "severity": "page"}]}]}`, []string{`"Zero"`, "windows[1].long"}},
		{"short over long", `{"rules": [{"name": "Inv", "kind": "availability", "series": "hits", "windows": [{"long": "5m", "short": "1h", "burn": 2, "severity": "page"}]}]}`, []string{`"Inv"`, "windows[1].short", "longer than long"}},
		{"no burn", `{"rules": [{"name": "NoBurn", "kind": "availability", "series": "hits", "windows": [{"long": "1h", "short": "5m", "severity": "page"}]}]}`, []string{`"NoBurn"`, "windows[1].burn: the burn rate"}},
		{"empty window list", `{"rules": [{"name": "Empty", "kind": "availability", "series": "hits", "windows": []}]}`, []string{`"Empty"`, "windows: no burn-rate windows"}},
		{"negative for", `{"rules": [{"name": "For", "kind": "absence", "series": "hits", "for": "-5m"}]}`, []string{`"For"`, "for: -5m is negative"}},
		{"negative period", `{"rules": [{"name": "Per", "kind": "availability", "series": "hits", "period": "-30d"}]}`, []string{`"Per"`, "period: ", "negative"}},
		{"number duration", `{"rules": [{"name": "Num", "kind": "absence", "series": "hits", "quiet": 900}]}`, []string{`"Num"`, "quiet: a duration is a string"}},
		{"bad duration", `{"rules": [{"name": "Bad", "kind": "absence", "series": "hits", "quiet": "15 minutes"}]}`, []string{`"Bad"`, `quiet: bad duration "15 minutes"`}},
		{"empty route", `{"rules": [{"name": "NoRoute", "kind": "availability", "series": ""}]}`, []string{`"NoRoute"`, "series: missing"}},
		{"absence empty route", `{"rules": [{"name": "NoRoute2", "kind": "absence"}]}`, []string{`"NoRoute2"`, "series: missing"}},
		{"absence not a route", `{"rules": [{"name": "AbsClass", "kind": "absence", "series": "GET /x status:5xx"}]}`, []string{`"AbsClass"`, "series: ", "not the app"}},
		{"absence of a status class", `{"rules": [{"name": "AbsApp5xx", "kind": "absence", "series": "status:5xx"}]}`, []string{`"AbsApp5xx"`, "not the app"}},
		{"anomaly bad name", `{"rules": [{"name": "AnBad", "kind": "anomaly", "series": "a\u0001b"}]}`, []string{`"AnBad"`, "series: "}},
		{"not a route", `{"rules": [{"name": "Class", "kind": "availability", "series": "GET /x status:5xx"}]}`, []string{`"Class"`, "not the app"}},
		{"lower-case method", `{"rules": [{"name": "Lower", "kind": "availability", "series": "get /x"}]}`, []string{`"Lower"`, "not the app"}},
		{"unknown check", `{"rules": [{"name": "Chk", "kind": "health", "check": "disk"}]}`, []string{`"Chk"`, `check: unknown health check "disk"`}},
		{"health with series", `{"rules": [{"name": "HS", "kind": "health", "check": "dropped", "series": "hits"}]}`, []string{`"HS"`, "series: not read by a health rule"}},
		{"severity on an SLO", `{"rules": [{"name": "SevSLO", "kind": "availability", "series": "hits", "severity": "page"}]}`, []string{`"SevSLO"`, "severity: not read by an availability rule: each of its windows has its own"}},
		{"target on absence", `{"rules": [{"name": "AbsTgt", "kind": "absence", "series": "hits", "target": 99}]}`, []string{`"AbsTgt"`, "target: not read by an absence rule"}},
		{"latency no threshold", `{"rules": [{"name": "Slow0", "kind": "latency", "series": "hits"}]}`, []string{`"Slow0"`, "threshold: a latency rule needs a threshold above 0"}},
		{"latency negative threshold", `{"rules": [{"name": "SlowNeg", "kind": "latency", "series": "hits", "threshold": "-500ms"}]}`, []string{`"SlowNeg"`, "threshold above 0"}},
		{"latency target 100", `{"rules": [{"name": "SlowFull", "kind": "latency", "series": "hits", "threshold": "500ms", "target": 100}]}`, []string{`"SlowFull"`, "target: 100%"}},
		{"latency target negative", `{"rules": [{"name": "SlowTgt", "kind": "latency", "series": "hits", "threshold": "500ms", "target": -99}]}`, []string{`"SlowTgt"`, "target: -99%"}},
		{"latency no series", `{"rules": [{"name": "SlowNone", "kind": "latency", "threshold": "500ms"}]}`, []string{`"SlowNone"`, "series: missing"}},
		{"latency not a route", `{"rules": [{"name": "SlowClass", "kind": "latency", "series": "GET /x status:5xx", "threshold": "500ms"}]}`, []string{`"SlowClass"`, "not the app"}},
		{"latency unknown route form", `{"rules": [{"name": "SlowPath", "kind": "latency", "series": "/posts/:id", "threshold": "500ms"}]}`, []string{`"SlowPath"`, "not the app"}},
		{"latency bad window", `{"rules": [{"name": "SlowWin", "kind": "latency", "series": "hits", "threshold": "1s", "windows": [{"long": "5m", "short": "1h", "burn": 2, "severity": "page"}]}]}`, []string{`"SlowWin"`, "longer than long"}},
		{"threshold on availability", `{"rules": [{"name": "AvThr", "kind": "availability", "series": "hits", "threshold": "1s"}]}`, []string{`"AvThr"`, "threshold: not read by an availability rule"}},
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
	t.Parallel()
	if _, err := LoadRules(filepath.Join(t.TempDir(), "none.json")); err == nil || !strings.Contains(err.Error(), "none.json") {
		t.Fatalf("err = %v, want one naming the file", err)
	}
}

func TestDefaultRulesValid(t *testing.T) {
	t.Parallel()
	rules, err := ValidateRules(DefaultRules())
	if err != nil {
		t.Fatal(err)
	}
	if rules[0].Kind != Availability || rules[0].Series != App || rules[1].Kind != Absence || rules[1].Series != App {
		t.Errorf("defaults should start with the app's availability SLO and absence: %+v", rules[:2])
	}
}

func TestDurationText(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want time.Duration
		out  string
	}{
		{"30d", 30 * 24 * time.Hour, "30d"},
		{"1d12h", 36 * time.Hour, "1d12h"},
		{"5m", 5 * time.Minute, "5m"},
		{"72h", 72 * time.Hour, "3d"},
		{"1h0m0s", time.Hour, "1h"},
		{"90m", 90 * time.Minute, "1h30m"},
		{"1500ms", 1500 * time.Millisecond, "1s500ms"},
		{"0s", 0, "0s"},
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

// TestRuleFileWithManyErrors: every problem of every rule is listed,
// one a line, each naming the file, the rule (by name, or by position
// when it has none), its line and the field, in the file's order; none
// twice, none left out.
func TestRuleFileWithManyErrors(t *testing.T) {
	t.Parallel()
	body := `{"rules": [
  {"name": "AppAvailability", "kind": "availability", "series": "hits", "tagret": 99.9, "period": 30},
  {"kind": "absence", "series": "GET /x status:5xx", "quiet": "15 minutes", "min_baseline": "ten"},
  {"name": "AppLatency", "kind": "latency", "series": "hits", "severity": "page",
   "windows": [{"long": "5m", "short": "1h", "burn": 14.4, "severity": "page", "sevrity": "x"}, 3]},
  {"name": "AppAvailability", "kind": "health", "check": "disk", "series": "hits"},
  {"name": "Fine", "kind": "absence", "series": "hits"}
]}`
	path := filepath.Join(t.TempDir(), "rules.json")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := LoadRules(path)
	if err == nil {
		t.Fatal("no error")
	}
	want := []string{
		`rule "AppAvailability" (#1, line 2): tagret: unknown field (did you mean "target"?)`,
		`rule "AppAvailability" (#1, line 2): period: a duration is a string such as "5m" or "30d", not 30`,
		`rule #2, line 3: quiet: bad duration "15 minutes"`,
		`rule #2, line 3: min_baseline: want a number, got a string`,
		`rule #2, line 3: name: missing`,
		`rule #2, line 3: series: "GET /x status:5xx" is not the app ("hits") nor a route's ("GET /path")`,
		`rule "AppLatency" (#3, line 4): windows[1].sevrity: unknown field (did you mean "severity"?)`,
		`rule "AppLatency" (#3, line 4): windows[2]: want an object, got a number`,
		`rule "AppLatency" (#3, line 4): severity: not read by a latency rule: each of its windows has its own`,
		`rule "AppLatency" (#3, line 4): threshold: a latency rule needs a threshold above 0, such as "500ms"`,
		`rule "AppLatency" (#3, line 4): windows[1].short: short 1h is longer than long 5m`,
		`rule "AppAvailability" (#4, line 6): series: not read by a health rule`,
		`rule "AppAvailability" (#4, line 6): check: unknown health check "disk" (want redis_down, dropped or flush_stalled)`,
		`rule "AppAvailability" (#4, line 6): name: "AppAvailability" is the name of rule #1 too`,
	}
	lines := strings.Split(err.Error(), "\n")
	for i, w := range want {
		if i >= len(lines) || lines[i] != "alert: "+path+": "+w {
			t.Errorf("line %d of the error:\n  %q\nwant\n  %q", i+1, lines[min(i, len(lines)-1)], "alert: "+path+": "+w)
		}
	}
	if len(lines) != len(want) {
		t.Errorf("%d lines, want %d:\n%s", len(lines), len(want), err)
	}
}

// TestValidateRulesListsEveryProblem: rules given as Go values are
// checked alike, by position.
func TestValidateRulesListsEveryProblem(t *testing.T) {
	t.Parallel()
	_, err := ValidateRules([]Rule{
		{Name: "A", Kind: Availability, Series: "hits", Target: 100, Threshold: Duration(time.Second)},
		{Kind: Absence, Series: "hits"},
	})
	if err == nil {
		t.Fatal("no error")
	}
	for _, w := range []string{
		`alert: rule "A" (#1): threshold: not read by an availability rule`,
		`alert: rule "A" (#1): target: 100% is not above 0 and below 100`,
		`alert: rule #2: name: missing`,
	} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %q lacks %q", err, w)
		}
	}
	if n := strings.Count(err.Error(), "\n") + 1; n != 3 {
		t.Errorf("%d problems listed, want 3:\n%s", n, err)
	}
}
