package alert

import (
	"bytes"
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
// Unknown fields are errors, so a misspelt one is not silently ignored.
type File struct {
	Rules []Rule `json:"rules"`
}

// LoadRules reads a rule file (see File), fills each rule's defaults and
// validates them all; an error names the file and the rule.
func LoadRules(path string) ([]Rule, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("alert: %w", err)
	}
	rules, err := ParseRules(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return rules, nil
}

// ParseRules is LoadRules on the file's bytes.
func ParseRules(b []byte) ([]Rule, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var f File
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("alert: rule file: %w", describeJSON(b, err))
	}
	if err := dec.Decode(&struct{}{}); !errors.Is(err, io.EOF) {
		return nil, errors.New("alert: rule file: text after the rules object")
	}
	if f.Rules == nil {
		return nil, errors.New("alert: rule file: no \"rules\" list")
	}
	return ValidateRules(f.Rules)
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
	return fmt.Errorf("line %d: %w", bytes.Count(b[:off], []byte("\n"))+1, err)
}
