package pulsehttp

import "net/http"

// Config is the former name of HitsConfig.
//
// Deprecated: use HitsConfig, the name every Pulse adapter gives its
// configuration.
type Config = HitsConfig

// DefaultConfig is the former name of DefaultHitsConfig.
//
// Deprecated: use DefaultHitsConfig.
var DefaultConfig = DefaultHitsConfig

// Middleware is the former name of HitsWithConfig.
//
// Deprecated: use HitsWithConfig, the name every Pulse adapter gives it.
func Middleware(cfg HitsConfig) func(http.Handler) http.Handler { return HitsWithConfig(cfg) }
