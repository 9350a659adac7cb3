package series

import "time"

// Defaults for the zero fields of a timeseries.Config.
const (
	DefaultFlushInterval = time.Second
	DefaultFlushTimeout  = 2 * time.Second
	DefaultMaxNames      = 1000
	DefaultOverflowName  = "overflow"
	DefaultMaxPendingAge = 15 * time.Minute
)
