// Package modgraph has no code, only a test: it builds a throwaway
// consumer module for each framework adapter, the way a library user
// would (go mod tidy against this checkout), and checks what the user's
// module graph gets from Pulse.
package modgraph
