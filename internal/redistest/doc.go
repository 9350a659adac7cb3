// Package redistest starts private redis-server processes for tests: a free
// port on loopback, a temporary directory, and nothing shared with any
// other server on the machine. Tests may FLUSHALL them freely; they are
// stopped at cleanup.
package redistest
