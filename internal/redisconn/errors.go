package redisconn

import (
	"errors"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// Class says what to do about an error from Redis.
type Class int

const (
	// OK is no error.
	OK Class = iota
	// Transient errors pass: the write was not applied (or its fate is
	// unknown, for a connection error) and the same write may succeed
	// later. Keep it, back off, retry.
	Transient
	// KeyPermanent errors are about one key's value (WRONGTYPE, a field
	// that is not an integer): the same write to that key fails forever.
	KeyPermanent
	// NoScript means EVALSHA named a script the server does not have.
	NoScript
)

// transientPrefixes are the error replies a server gives while it cannot
// take writes for a while: full, a replica, loading, running a long
// script, its master or replicas away, or a cluster slot moving or down.
var transientPrefixes = []string{
	"OOM", "READONLY", "LOADING", "BUSY", "MASTERDOWN", "NOREPLICAS",
	"TRYAGAIN", "CLUSTERDOWN", "MOVED", "ASK", "NOTBUSY", "UNBLOCKED",
}

// Classify sorts err. Server replies it does not know are Transient, so
// an unexpected reply keeps the data and shows in health instead of
// losing it; connection errors are Transient too.
func Classify(err error) Class {
	if err == nil {
		return OK
	}
	var re redis.Error
	if !errors.As(err, &re) {
		return Transient
	}
	return ClassifyReply(string(re))
}

// ClassifyReply sorts the text of an error reply.
func ClassifyReply(msg string) Class {
	code, _, _ := strings.Cut(msg, " ")
	switch {
	case code == "NOSCRIPT":
		return NoScript
	case code == "WRONGTYPE", IsValueError(msg):
		return KeyPermanent
	}
	for _, p := range transientPrefixes {
		if code == p {
			return Transient
		}
	}
	return Transient
}

// IsValueError reports whether msg is Redis's complaint about a value that
// cannot be incremented: not an integer, or an increment that overflows.
func IsValueError(msg string) bool {
	return strings.Contains(msg, "not an integer") || strings.Contains(msg, "overflow")
}

// IsRouting reports whether err suggests the cluster's layout changed or a
// node is unreachable, so the slot map should be read again.
func IsRouting(err error) bool {
	if err == nil {
		return false
	}
	var re redis.Error
	if !errors.As(err, &re) {
		return true // connection error: the node may be gone
	}
	code, _, _ := strings.Cut(string(re), " ")
	switch code {
	case "MOVED", "ASK", "TRYAGAIN", "CLUSTERDOWN", "READONLY", "MASTERDOWN":
		return true
	}
	return false
}

// IsUnsupportedScript reports whether err is a server's refusal to run a
// script with a "#!lua flags=…" first line at all: Redis before 7 and
// embedded servers such as miniredis read that line as Lua and fail to
// compile it. A caller then runs a script without flags instead.
func IsUnsupportedScript(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	msg := string(re)
	return strings.Contains(msg, "compiling script") || strings.Contains(msg, "shebang")
}
