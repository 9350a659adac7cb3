package echov5

import (
	"github.com/labstack/echo/v5"

	"github.com/pulse-dev/pulse/internal/track"
)

// Skip marks the request so the Hits middleware does not count it. Mount
// calls it for every request under the dashboard's prefix, so watching
// the dashboard does not show up as traffic.
func Skip(c *echo.Context) {
	track.NoteSkip()
	c.Set(track.SkipKey, true)
}

// Skipped reports whether Skip was called for the request. Until some
// request has been skipped it answers without reading the context, whose
// Get takes a lock.
func Skipped(c *echo.Context) bool {
	if !track.MaySkip() {
		return false
	}
	v, _ := c.Get(track.SkipKey).(bool)
	return v
}
