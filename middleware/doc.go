// Package middleware forwards to package
// github.com/pulse-dev/pulse/pulseecho, the Echo v4 adapter, which had
// this path before it was renamed: its name was that of Echo's own
// middleware package, which apps import in the same files. Its names are
// pulseecho's, so a program that imports this path keeps building
// unchanged; package middleware/mount forwards to pulseecho/mount alike.
//
// Deprecated: import github.com/pulse-dev/pulse/pulseecho and
// github.com/pulse-dev/pulse/pulseecho/mount instead.
package middleware
