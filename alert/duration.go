package alert

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Duration is a time.Duration that reads and writes as text in rule
// files: Go's units ("90s", "1h30m") plus "d" for days ("30d"), since
// SLO periods are counted in days.
type Duration time.Duration

// Std is d as a time.Duration.
func (d Duration) Std() time.Duration { return time.Duration(d) }

// String writes whole days as "Nd", anything else as Go does.
func (d Duration) String() string {
	td := time.Duration(d)
	if td > 0 && td%(24*time.Hour) == 0 {
		return strconv.FormatInt(int64(td/(24*time.Hour)), 10) + "d"
	}
	return td.String()
}

// ParseDuration reads "30d", "6h", "5m", "1d12h".
func ParseDuration(s string) (Duration, error) {
	s = strings.TrimSpace(s)
	var days int64
	if i := strings.IndexByte(s, 'd'); i > 0 {
		n, err := strconv.ParseInt(s[:i], 10, 64)
		if err != nil || n > 100000 {
			return 0, fmt.Errorf("alert: bad duration %q", s)
		}
		days, s = n, s[i+1:]
		if s == "" {
			return Duration(time.Duration(days) * 24 * time.Hour), nil
		}
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("alert: bad duration %q", s)
	}
	return Duration(time.Duration(days)*24*time.Hour + d), nil
}

// MarshalJSON writes the text form.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(d.String()) }

// UnmarshalJSON reads the text form; a bare number is refused, since
// its unit would be a guess.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("alert: a duration is a string such as \"5m\" or \"30d\", not %s", b)
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}
