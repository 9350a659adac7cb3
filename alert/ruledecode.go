package alert

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
)

// ruleText is one rule of a rule file, as written, and the line it
// starts on.
type ruleText struct {
	raw  json.RawMessage
	line int
}

// splitRuleFile reads the file's object and the rules in its "rules"
// list, each as written, without decoding them, so that a problem in one
// rule does not hide the others. A syntax error ends the reading; other
// problems of the file itself are listed.
func splitRuleFile(b []byte) (rules []ruleText, probs []problem, err error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if err := expectDelim(dec, '{', "the file"); err != nil {
		return nil, nil, err
	}
	found := false
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		key, _ := tok.(string)
		if key != "rules" {
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, nil, err
			}
			probs = append(probs, problem{key, "unknown field (the file holds {\"rules\": [...]})"})
			continue
		}
		found = true
		if rules, err = splitRules(b, dec); err != nil {
			return nil, nil, err
		}
	}
	if _, err := dec.Token(); err != nil {
		return nil, nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, nil, errors.New("text after the rules object")
	}
	if !found {
		probs = append(probs, problem{"rules", "missing: the file holds {\"rules\": [...]}"})
	}
	return rules, probs, nil
}

// splitRules reads the "rules" list whose value dec is at.
func splitRules(b []byte, dec *json.Decoder) ([]ruleText, error) {
	if err := expectDelim(dec, '[', `"rules"`); err != nil {
		return nil, err
	}
	var out []ruleText
	for dec.More() {
		start := int(dec.InputOffset())
		for start < len(b) && strings.IndexByte(" \t\r\n,", b[start]) >= 0 {
			start++
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		out = append(out, ruleText{raw: raw, line: lineAt(b, int64(start))})
	}
	_, err := dec.Token() // ']'
	return out, err
}

// expectDelim reads the next token, which must open what is named.
func expectDelim(dec *json.Decoder, d json.Delim, what string) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		want := map[json.Delim]string{'{': "an object", '[': "a list"}[d]
		return fmt.Errorf("%s is not %s", what, want)
	}
	return nil
}

func lineAt(b []byte, off int64) int {
	return bytes.Count(b[:min(off, int64(len(b)))], []byte("\n")) + 1
}

// decodeRule decodes one rule field by field, listing every unknown
// field and every value of the wrong type instead of stopping at the
// first.
func decodeRule(raw json.RawMessage) (Rule, []problem) {
	var r Rule
	probs := decodeObject(raw, reflect.ValueOf(&r).Elem(), "", func(key string, v json.RawMessage) []problem {
		if key != "windows" {
			return nil
		}
		var ws []json.RawMessage
		if err := json.Unmarshal(v, &ws); err != nil || ws == nil {
			if string(v) == "null" {
				return nil
			}
			return []problem{{"windows", "want a list of window pairs, got " + jsonKind(v)}}
		}
		r.Windows = make([]Window, len(ws))
		var out []problem
		for i, w := range ws {
			out = append(out, decodeObject(w, reflect.ValueOf(&r.Windows[i]).Elem(), fmt.Sprintf("windows[%d].", i+1), nil)...)
		}
		return out
	})
	return r, probs
}

// decodeObject decodes raw, an object, into the struct dst by its json
// tags, naming each field prefix+key. special, when it answers a key
// (non-nil), decodes that key itself.
func decodeObject(raw json.RawMessage, dst reflect.Value, prefix string, special func(string, json.RawMessage) []problem) []problem {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return []problem{{strings.TrimSuffix(prefix, "."), "want an object, got " + jsonKind(raw)}}
	}
	byTag := map[string]reflect.Value{}
	for i := range dst.NumField() {
		if tag, _, _ := strings.Cut(dst.Type().Field(i).Tag.Get("json"), ","); tag != "" && tag != "-" {
			byTag[tag] = dst.Field(i)
		}
	}
	keys, twice := keysInOrder(raw)
	var out []problem
	for _, key := range twice {
		out = append(out, problem{prefix + key, "given twice"})
	}
	for _, key := range keys {
		v := fields[key]
		f, known := byTag[key]
		switch {
		case !known:
			out = append(out, problem{prefix + key, "unknown field" + suggest(key, byTag)})
		case special != nil && key == "windows":
			out = append(out, special(key, v)...)
		default:
			if err := json.Unmarshal(v, f.Addr().Interface()); err != nil {
				out = append(out, problem{prefix + key, typeProblem(err, f.Type(), v)})
			}
		}
	}
	return out
}

// keysInOrder are the keys of the object raw in the order written, each
// once, so that the errors follow the file, and those written twice.
func keysInOrder(raw json.RawMessage) (keys, twice []string) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.Token() // '{'
	seen := map[string]bool{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			break
		}
		k, _ := tok.(string)
		if seen[k] {
			twice = append(twice, k)
			continue
		}
		seen[k] = true
		keys = append(keys, k)
	}
	return keys, twice
}

var durationType = reflect.TypeFor[Duration]()

// typeProblem says what a field wanted and what it got.
func typeProblem(err error, t reflect.Type, v json.RawMessage) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) {
		return strings.TrimPrefix(err.Error(), "alert: ") // a Duration's own words
	}
	want := map[reflect.Kind]string{reflect.String: "a string", reflect.Float64: "a number",
		reflect.Map: "an object of strings", reflect.Slice: "a list"}[t.Kind()]
	if t == durationType {
		want = "a duration such as \"5m\""
	}
	return "want " + want + ", got " + jsonKind(v)
}

// jsonKind names what kind of JSON value v is.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '"':
		return "a string"
	case '{':
		return "an object"
	case '[':
		return "a list"
	case 't', 'f':
		return "a boolean"
	case 'n':
		return "null"
	}
	return "a number"
}

// suggest names the known field a misspelt one was likely meant as.
func suggest(key string, known map[string]reflect.Value) string {
	best, bestD := "", 3
	for k := range known {
		if d := editDistance(key, k); d < bestD || d == bestD && k < best {
			best, bestD = k, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance of a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
