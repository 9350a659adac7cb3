// Package ports finds loopback ports for the servers that tests and the
// load benchmark start (internal/proc asks it for every launch):
//
//	port, err := ports.Free() // free now, and so is port+10000, a cluster node's bus
//	args := []string{"--port", strconv.Itoa(port)}
//
// A port is only free when asked: a server that then fails to bind it
// ("already in use") is started again on another (internal/proc does).
package ports

import (
	"errors"
	"fmt"
	"net"
	"strconv"
)

// Max keeps ports low enough that a Redis Cluster node's bus port
// (port+10000) is a valid port too.
const Max = 55535

// Free finds a loopback port below Max that is free and whose cluster bus
// port (port+10000) is free too.
func Free() (int, error) {
	var lastErr error
	for range 200 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return 0, fmt.Errorf("ports: find a free port: %w", err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		if port >= Max {
			l.Close()
			continue
		}
		bus, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port+10000)))
		l.Close()
		if err != nil {
			lastErr = err
			continue
		}
		bus.Close()
		return port, nil
	}
	return 0, errors.Join(fmt.Errorf("ports: no free port below %d with a free bus port", Max), lastErr)
}
