//go:build !unix

package main

import (
	"os"
	"syscall"
)

// terminate asks redis-server to stop.
var terminate = os.Kill

func childAttr() *syscall.SysProcAttr { return nil }
