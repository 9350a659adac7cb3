package middleware

import (
	"github.com/labstack/echo/v4"

	"github.com/pulse-dev/pulse/pulseecho"
	"github.com/pulse-dev/pulse/timeseries"
)

// HitsConfig is pulseecho.HitsConfig under its old name. An alias, not a
// type of its own, so that a config goes to either package's functions
// and keeps its ToMiddleware.
//
// Deprecated: use pulseecho.HitsConfig.
type HitsConfig = pulseecho.HitsConfig

// DefaultHitsConfig is pulseecho.DefaultHitsConfig.
//
// Deprecated: use pulseecho.DefaultHitsConfig.
var DefaultHitsConfig = pulseecho.DefaultHitsConfig

// Hits returns pulseecho.Hits(rec).
//
// Deprecated: use pulseecho.Hits.
func Hits(rec *timeseries.Recorder) echo.MiddlewareFunc { return pulseecho.Hits(rec) }

// HitsWithConfig returns pulseecho.HitsWithConfig(config).
//
// Deprecated: use pulseecho.HitsWithConfig.
func HitsWithConfig(config HitsConfig) echo.MiddlewareFunc { return pulseecho.HitsWithConfig(config) }
