// Package mount forwards to package
// github.com/pulse-dev/pulse/pulseecho/mount, where the Echo v4
// dashboard mount moved with its adapter (see package middleware).
//
// Deprecated: import github.com/pulse-dev/pulse/pulseecho/mount instead.
package mount

import (
	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/dashboard"
	pulsemount "github.com/pulse-dev/pulse/pulseecho/mount"
)

// Dashboard returns pulseecho/mount's Dashboard(e, prefix, cfg, login...).
//
// Deprecated: use Dashboard of github.com/pulse-dev/pulse/pulseecho/mount.
func Dashboard(e *echo.Echo, prefix string, cfg dashboard.Config, login ...echo.MiddlewareFunc) error {
	return pulsemount.Dashboard(e, prefix, cfg, login...)
}
