package adapter_test

import (
	"fmt"

	"github.com/pulse-dev/pulse/adapter"
)

// A router that keeps the status itself (Gin's writer reports the code a
// handler set, 200 by default) counts by Status.
func ExampleStatus() {
	for _, c := range []struct {
		name           string
		status         int
		sent, hijacked bool
	}{
		{"written 201", 201, true, false},
		{"nothing written, handler done", 200, true, false},
		{"panic before writing", 200, false, false},
		{"hijacked", 200, true, true},
	} {
		fmt.Println(c.name, adapter.Status(c.status, c.sent, c.hijacked))
	}
	// Output:
	// written 201 201
	// nothing written, handler done 200
	// panic before writing 500
	// hijacked 101
}
