// Package redisinfo reads the replies of Redis's INFO and CLUSTER INFO,
// for the example's start of a private redis-server and the test
// harness's checks of a server's state alike.
package redisinfo

import "strings"

// Field is the value of one "name:value" line of an INFO or CLUSTER INFO
// reply, "" when the reply has no such line.
func Field(info, name string) string {
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	return ""
}
