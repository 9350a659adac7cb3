// Package ports finds loopback ports for the servers that tests and the
// load benchmark start (internal/proc asks it for every launch):
//
//	port, err := ports.Free() // free now, and so is port+10000, a cluster node's bus
//	args := []string{"--port", strconv.Itoa(port)}
//
// A port Free returns is reserved for the calling process until it exits:
// no other process that asks Free gets it, nor its bus port, even while
// nothing listens on it. A test that stops a server and starts it again on
// the same port relies on that: without it, a test binary running beside
// (another package, or the same one at another PULSE_TEST_TIME) could start
// its own server on the freed port, and the restarted test would talk to
// that one. The reservation is an exclusive flock on a file per port in
// Dir, which the kernel drops when the process ends, however it ends.
//
// A port is only known free of other programs when asked: a server that
// then fails to bind it ("already in use") is started again on another
// (internal/proc does).
package ports

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// Max keeps ports low enough that a Redis Cluster node's bus port
// (port+10000) is a valid port too.
const Max = 55535

// Dir holds one lock file per reserved port, shared by every process on
// the machine that uses this package: under /tmp whatever TMPDIR says
// (make test moves TMPDIR to a tmpfs, and a go test beside it must see
// its reservations), under TMPDIR where there is no /tmp.
var Dir = filepath.Join(machineTemp(), "pulse-ports")

func machineTemp() string {
	if fi, err := os.Stat("/tmp"); err == nil && fi.IsDir() {
		return "/tmp"
	}
	return os.TempDir()
}

// held keeps the locked files open (and so locked) for the process's life.
var held struct {
	mu    sync.Mutex
	files map[int]*os.File
}

// Free finds a loopback port below Max that is free and whose cluster bus
// port (port+10000) is free too, and reserves both for this process.
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
		ok, err := reservePair(port)
		if err != nil {
			return 0, err
		}
		if ok {
			return port, nil
		}
	}
	return 0, errors.Join(fmt.Errorf("ports: no free port below %d with a free bus port", Max), lastErr)
}

// reservePair reserves port and its bus port, or neither.
func reservePair(port int) (bool, error) {
	ok, err := reserve(port)
	if !ok || err != nil {
		return false, err
	}
	if ok, err = reserve(port + 10000); !ok || err != nil {
		release(port)
		return false, err
	}
	return true, nil
}

// reserve reserves port for this process unless a process (this one
// included) holds it already, and reports whether it did.
func reserve(port int) (bool, error) {
	if err := os.MkdirAll(Dir, 0o777); err != nil {
		return false, fmt.Errorf("ports: %w", err)
	}
	// Open to every user: a test run as another user shares the dir.
	_ = os.Chmod(Dir, 0o1777)
	f, err := os.OpenFile(filepath.Join(Dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return false, fmt.Errorf("ports: %w", err)
	}
	// An open file description of its own: a second Reserve of the same
	// port in this process fails as one from another process does.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return false, nil
		}
		return false, fmt.Errorf("ports: lock port %d: %w", port, err)
	}
	held.mu.Lock()
	defer held.mu.Unlock()
	if held.files == nil {
		held.files = map[int]*os.File{}
	}
	held.files[port] = f
	return true, nil
}

func release(port int) {
	held.mu.Lock()
	defer held.mu.Unlock()
	if f := held.files[port]; f != nil {
		f.Close()
		delete(held.files, port)
	}
}
