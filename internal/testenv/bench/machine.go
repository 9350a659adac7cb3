package bench

import (
	"fmt"
	"os"
	"runtime"
	"strings"
)

// Machine describes where a report was made.
type Machine struct {
	Cores     int
	CPU       string
	Kernel    string
	Go        string
	LoadStart string // /proc/loadavg when the run started
	LoadAfter string // and when it ended
}

// ReadMachine describes this machine.
func ReadMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), Go: runtime.Version(), CPU: "unknown", Kernel: "unknown", LoadStart: loadAverage()}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for line := range strings.Lines(string(b)) {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	return m
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

func (m Machine) line() string {
	return fmt.Sprintf("%d cores, %s, %s, %s; load average %s at start, %s at end",
		m.Cores, m.CPU, m.Kernel, m.Go, m.LoadStart, m.LoadAfter)
}
