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

// String writes d as Prometheus does, largest unit first and zero units
// left out: "3d", "1h30m", "15m", "1m30s", "500ms", "0s". Every duration
// Pulse shows (JSON, notifications, the dashboard) is written this way,
// and ParseDuration reads it back.
func (d Duration) String() string { return formatDuration(time.Duration(d)) }

// formatDuration writes d in days, hours, minutes, seconds and
// milliseconds; below a millisecond it is rounded to one.
func formatDuration(d time.Duration) string {
	if d < 0 {
		return "-" + formatDuration(-d)
	}
	d = d.Round(time.Millisecond)
	if d == 0 {
		return "0s"
	}
	var b strings.Builder
	for _, u := range []struct {
		d    time.Duration
		name string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}, {time.Millisecond, "ms"}} {
		if n := d / u.d; n > 0 {
			b.WriteString(strconv.FormatInt(int64(n), 10))
			b.WriteString(u.name)
			d -= n * u.d
		}
	}
	return b.String()
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
