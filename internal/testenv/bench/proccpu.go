package bench

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// processCPU is the CPU time the process pid has used so far, to the
// nanosecond: the sum over its threads of the first field of
// /proc/<pid>/task/<tid>/schedstat (time spent on a CPU). rusage is only
// read once a process has exited, and /proc/<pid>/stat counts in ticks
// of 10 ms, a hundredth of a one-second run; a window of a run needs
// better. A thread that exits inside the window takes its time with it;
// the Go runtime keeps its threads, so that loses nothing here.
func processCPU(pid int) (time.Duration, error) {
	tasks, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	if err != nil || len(tasks) == 0 {
		return 0, fmt.Errorf("bench: CPU time of process %d: no /proc/%d/task/*/schedstat", pid, pid)
	}
	var total time.Duration
	for _, path := range tasks {
		b, err := os.ReadFile(path)
		if err != nil {
			if os.IsNotExist(err) {
				continue // the thread exited since the Glob
			}
			return 0, fmt.Errorf("bench: CPU time of process %d: %w", pid, err)
		}
		field, _, _ := bytes.Cut(bytes.TrimSpace(b), []byte(" "))
		ns, err := strconv.ParseInt(string(field), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("bench: CPU time of process %d: %s: %w", pid, path, err)
		}
		total += time.Duration(ns)
	}
	return total, nil
}
