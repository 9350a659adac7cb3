package alert

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
)

// File is the rule file's shape:
//
//	{"rules": [
//	  {"name": "AppAvailability", "kind": "availability", "series": "hits",
//	   "target": 99.9, "period": "30d"},
//	  {"name": "RouteAvailability", "kind": "availability", "series": "*",
//	   "target": 99.5, "for": "2m"},
//	  {"name": "AppLatency", "kind": "latency", "series": "hits",
//	   "threshold": "500ms", "target": 99},
//	  {"name": "AppAbsent", "kind": "absence", "series": "hits",
//	   "quiet": "15m", "min_baseline": 10}
//	]}
//
// Unknown fields are errors, so a misspelt one is not silently ignored;
// so are fields a rule's kind does not read.
type File struct {
	Rules []Rule `json:"rules"`
}

// LoadRules reads a rule file (see File), fills each rule's defaults and
// validates them all. The error lists every problem in the file, each
// naming the file, the rule (by name, or by position when it has none),
// its line and the field: unknown fields, values of the wrong type,
// values out of range.
func LoadRules(path string) ([]Rule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("alert: %w", err)
	}
	return parseRules(b, path)
}

// ParseRules is LoadRules on the file's bytes.
func ParseRules(b []byte) ([]Rule, error) { return parseRules(b, "rule file") }

// parseRules reads the rules of b, named name in errors.
func parseRules(b []byte, name string) ([]Rule, error) {
	texts, fileProbs, err := splitRuleFile(b)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		err = errors.New("the file ends before its rules object does")
	}
	if err != nil {
		return nil, fmt.Errorf("alert: %s: %w", name, describeJSON(b, err))
	}
	var errs []error
	for _, p := range fileProbs {
		errs = append(errs, fmt.Errorf("alert: %s: %s", name, p))
	}
	rules := make([]Rule, len(texts))
	given := make([][]problem, len(texts))
	for i, t := range texts {
		rules[i], given[i] = decodeRule(t.raw)
	}
	where := func(i int) string { return fmt.Sprintf("#%d, line %d", i+1, texts[i].line) }
	out, err := checkRules(rules, given, where, "alert: "+name)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return out, nil
}

// describeJSON adds the line of a syntax or type error.
func describeJSON(b []byte, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off < 0 || off > int64(len(b)) {
		return err
	}
	return fmt.Errorf("line %d: %w", lineAt(b, off), err)
}
