package harness

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// Setup prepares a harness before the tests run and returns what undoes
// it after they ran, e.g. stopping the server the tests shared.
type Setup func() (teardown func(), err error)

// Run runs every setup in order, the tests, then the teardowns in reverse
// order, and exits with the tests' status. When a setup fails it prints
// the error, undoes the setups already done and exits with status 1.
func Run(m *testing.M, setups ...Setup) {
	os.Exit(run(m, setups))
}

func run(m *testing.M, setups []Setup) int {
	var teardowns []func()
	defer func() {
		for i := len(teardowns) - 1; i >= 0; i-- {
			teardowns[i]()
		}
	}()
	for _, setup := range setups {
		teardown, err := setup()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if teardown != nil {
			teardowns = append(teardowns, teardown)
		}
	}
	return m.Run()
}

// Hang bounds a call in a test that must succeed: it guards against a
// hang, and a loaded machine never reaches it (see Deadlines above).
const Hang = time.Minute
