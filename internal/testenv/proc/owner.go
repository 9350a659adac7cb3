package proc

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// listenedByOther reports whether what listens on the loopback port
// belongs to a process outside the process group pgid (the one Start
// made for the server): a server whose port was taken between its launch
// and its bind exits moments later, but the taker answers the Ready
// probe meanwhile. Where /proc cannot tell, it reports false.
func listenedByOther(pgid, port int) bool {
	inodes := listenInodes(port)
	if len(inodes) == 0 {
		return false
	}
	procs, err := filepath.Glob("/proc/[0-9]*")
	if err != nil {
		return false
	}
	for _, dir := range procs {
		if groupOf(dir) == pgid && holdsSocket(dir, inodes) {
			return false
		}
	}
	return true
}

// listenInodes are the socket inodes listening on port, from
// /proc/net/tcp and tcp6: "sl local rem st ... uid timeout inode".
func listenInodes(port int) map[string]bool {
	suffix := fmt.Sprintf(":%04X", port)
	inodes := map[string]bool{}
	for _, name := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(name)
		if err != nil {
			continue
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			const listen = "0A"
			if len(fields) > 9 && strings.HasSuffix(fields[1], suffix) && fields[3] == listen {
				inodes[fields[9]] = true
			}
		}
		f.Close()
	}
	return inodes
}

// groupOf is the process group of the process /proc/<pid>, -1 if gone:
// stat's fifth field, counted after the parenthesised command name.
func groupOf(dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return -1
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return -1
	}
	fields := strings.Fields(string(b[i+1:])) // state ppid pgrp ...
	if len(fields) < 3 {
		return -1
	}
	g, err := strconv.Atoi(fields[2])
	if err != nil {
		return -1
	}
	return g
}

// holdsSocket reports whether the process /proc/<pid> has one of inodes
// open.
func holdsSocket(dir string, inodes map[string]bool) bool {
	fds, err := os.ReadDir(filepath.Join(dir, "fd"))
	if err != nil {
		return false
	}
	for _, fd := range fds {
		link, err := os.Readlink(filepath.Join(dir, "fd", fd.Name()))
		if err == nil && strings.HasPrefix(link, "socket:[") && inodes[strings.TrimSuffix(link[len("socket:["):], "]")] {
			return true
		}
	}
	return false
}
