package alert

import (
	"errors"
	"fmt"
	"strings"

	"github.com/pulse-dev/pulse/timeseries"
)

// problem is one thing wrong with a rule: the field it is in, as the
// rule file names it ("windows[2].burn"), and what is wrong.
type problem struct{ field, msg string }

func (p problem) String() string {
	if p.field == "" {
		return p.msg
	}
	return p.field + ": " + p.msg
}

// kindNames lists the kinds, for errors.
const kindNames = "availability, latency, absence, health or anomaly"

// kindFields are the fields each kind reads besides those every rule
// has (name, kind, for, keep_firing_for, labels, annotations).
var kindFields = map[Kind][]string{
	Availability: {"series", "target", "period", "windows"},
	Latency:      {"series", "target", "period", "windows", "threshold"},
	Absence:      {"series", "quiet", "min_baseline", "severity"},
	Health:       {"check", "quiet", "severity"},
	Anomaly:      {"series", "severity"},
}

// unused lists the fields r sets that its kind does not read: set by
// mistake, they would be ignored without a word. WithDefaults sets none
// of them.
func (r Rule) unused() []problem {
	fields, ok := kindFields[r.Kind]
	if !ok {
		return nil // the kind itself is the problem
	}
	set := map[string]bool{"series": r.Series != "", "target": r.Target != 0, "period": r.Period != 0,
		"windows": r.Windows != nil, "threshold": r.Threshold != 0, "quiet": r.Quiet != 0,
		"min_baseline": r.MinBaseline != 0, "check": r.Check != "", "severity": r.Severity != ""}
	var out []problem
	for _, f := range []string{"series", "target", "period", "windows", "threshold", "quiet", "min_baseline", "check", "severity"} {
		if set[f] && !has(fields, f) {
			msg := "not read by " + article(string(r.Kind)) + " rule"
			if f == "severity" {
				msg += ": each of its windows has its own"
			}
			out = append(out, problem{f, msg})
		}
	}
	return out
}

func has(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

func article(word string) string {
	if strings.ContainsRune("aeiou", rune(word[0])) {
		return "an " + word
	}
	return "a " + word
}

// check lists what is wrong with r as filled by WithDefaults.
func (r Rule) check() []problem {
	out := r.unused()
	if r.Name == "" {
		out = append(out, problem{"name", "missing"})
	}
	for _, d := range []struct {
		field string
		v     Duration
	}{{"for", r.For}, {"keep_firing_for", r.KeepFiringFor}, {"quiet", r.Quiet}, {"period", r.Period}} {
		if d.v < 0 {
			out = append(out, problem{d.field, d.v.String() + " is negative"})
		}
	}
	switch r.Kind {
	case Availability, Latency:
		return append(out, r.checkSLO()...)
	case Absence:
		out = append(out, checkSeries(r.Series, true)...)
		if r.MinBaseline <= 0 {
			out = append(out, problem{"min_baseline", fmt.Sprintf("%v is not above 0", r.MinBaseline)})
		}
		return out
	case Anomaly:
		return append(out, checkSeries(r.Series, false)...)
	case Health:
		return append(out, r.checkHealth()...)
	case "":
		return append(out, problem{"kind", "missing (want " + kindNames + ")"})
	}
	return append(out, problem{"kind", fmt.Sprintf("unknown kind %q (want %s)", r.Kind, kindNames)})
}

func (r Rule) checkHealth() []problem {
	switch r.Check {
	case RedisDown, Dropped:
	case FlushStalled:
		if r.Quiet == 0 {
			return []problem{{"quiet", "flush_stalled needs quiet above 0"}}
		}
	case "":
		return []problem{{"check", "missing (want redis_down, dropped or flush_stalled)"}}
	default:
		return []problem{{"check", fmt.Sprintf("unknown health check %q (want redis_down, dropped or flush_stalled)", r.Check)}}
	}
	return nil
}

// checkSLO checks what availability and latency rules share: the
// series, the objective and the burn-rate windows.
func (r Rule) checkSLO() []problem {
	out := checkSeries(r.Series, true)
	if r.Kind == Latency && r.Threshold <= 0 {
		out = append(out, problem{"threshold", "a latency rule needs a threshold above 0, such as \"500ms\""})
	}
	if !(r.Target > 0 && r.Target < 100) {
		out = append(out, problem{"target", fmt.Sprintf("%v%% is not above 0 and below 100", r.Target)})
	}
	if r.Period == 0 {
		out = append(out, problem{"period", "must be positive"})
	}
	if len(r.Windows) == 0 {
		out = append(out, problem{"windows", "no burn-rate windows"})
	}
	for i, w := range r.Windows {
		at := fmt.Sprintf("windows[%d].", i+1)
		if w.Long <= 0 || w.Short <= 0 {
			out = append(out, problem{at + "long", "long and short must be positive"})
		} else if w.Short > w.Long {
			out = append(out, problem{at + "short", fmt.Sprintf("short %v is longer than long %v", w.Short, w.Long)})
		}
		if !(w.Burn > 0) {
			out = append(out, problem{at + "burn", "the burn rate must be positive"})
		}
		if w.Severity == "" {
			out = append(out, problem{at + "severity", "missing"})
		}
	}
	return out
}

// checkSeries accepts the series a rule may apply to: the app's, a
// route's or every route; with appOrRoute false (an anomaly rule, whose
// forecasts any series has) any valid series name too.
func checkSeries(s string, appOrRoute bool) []problem {
	switch s {
	case "":
		return []problem{{"series", "missing: name \"hits\", a route such as \"GET /posts/:id\", or \"*\" for every route"}}
	case App, EveryRoute:
		return nil
	}
	if !appOrRoute {
		if err := timeseries.ValidateName(s); err != nil {
			return []problem{{"series", err.Error()}}
		}
		return nil
	}
	if rn, ok := timeseries.ParseRouteName(s); !ok || rn.Method == "" || rn.Class != "" {
		return []problem{{"series", fmt.Sprintf("%q is not the app (\"hits\") nor a route's (\"GET /path\")", s)}}
	}
	return nil
}

// Validate checks r as given (call WithDefaults first to fill zero
// fields); the error names the rule and lists every problem, each with
// its field.
func (r Rule) Validate() error {
	var errs []error
	for _, p := range r.check() {
		errs = append(errs, fmt.Errorf("alert: rule %q: %s", r.Name, p))
	}
	return errors.Join(errs...)
}

// ValidateRules fills defaults and checks every rule and that names are
// unique; the returned rules are the filled ones. The error lists every
// problem of every rule, each naming the rule (by name, or by its
// position when it has none) and the field.
func ValidateRules(rules []Rule) ([]Rule, error) {
	return checkRules(rules, nil, func(i int) string { return fmt.Sprintf("#%d", i+1) }, "alert")
}

// checkRules fills and checks rules; given[i] are problems already
// found in rule i (a rule file's wrong types, unknown fields), whose
// fields are not checked again. where places rule i ("#3", "#3, line
// 12"); prefix starts each error line.
func checkRules(rules []Rule, given [][]problem, where func(int) string, prefix string) ([]Rule, error) {
	out := make([]Rule, len(rules))
	seen := map[string]int{}
	var errs []error
	for i, r := range rules {
		var probs []problem
		if i < len(given) {
			probs = given[i]
		}
		out[i] = r.WithDefaults()
		for _, p := range out[i].check() {
			if !hasField(probs, p.field) {
				probs = append(probs, p)
			}
		}
		if j, dup := seen[r.Name]; dup && r.Name != "" {
			probs = append(probs, problem{"name", fmt.Sprintf("%q is the name of rule #%d too", r.Name, j+1)})
		} else if r.Name != "" {
			seen[r.Name] = i
		}
		for _, p := range probs {
			errs = append(errs, fmt.Errorf("%s: %s: %s", prefix, ruleLabel(r.Name, where(i)), p))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// hasField reports whether probs has a problem in field, in a field
// of it ("windows[2].burn" is in "windows[2]" and "windows") or in one
// holding it.
func hasField(probs []problem, field string) bool {
	within := func(inner, outer string) bool {
		return inner == outer || strings.HasPrefix(inner, outer+".") || strings.HasPrefix(inner, outer+"[")
	}
	for _, p := range probs {
		if within(field, p.field) || within(p.field, field) {
			return true
		}
	}
	return false
}

// ruleLabel names a rule in errors: `rule "AppLatency" (#3)`, or
// `rule #3` when it has no name.
func ruleLabel(name, where string) string {
	if name == "" {
		return "rule " + where
	}
	return fmt.Sprintf("rule %q (%s)", name, where)
}
