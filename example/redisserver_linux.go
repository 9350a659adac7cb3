package main

import "syscall"

// terminate asks redis-server to stop.
var terminate = syscall.SIGTERM

// childAttr puts redis-server in a process group of its own, so a
// terminal's Ctrl-C reaches the example alone, which stops the server
// after its last flush; and has the kernel stop it if the example dies
// without closing it (kill -9).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
