package ports

import (
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

func TestFree(t *testing.T) {
	for range 20 {
		p, err := Free()
		if err != nil {
			t.Fatal(err)
		}
		if p <= 0 || p >= Max {
			t.Fatalf("port %d leaves no cluster bus port", p)
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d is not free: %v", p, err)
		}
		l.Close()
	}
}

// claimEnv makes the test binary, run again, try to reserve the ports it
// names and say which it got.
const claimEnv = "PULSE_PORTS_CLAIM"

// claim runs this test binary in another process, which tries to reserve
// each of ports and prints "<port>:true|false" per port.
func claim(t *testing.T, ports ...int) string {
	t.Helper()
	var list []string
	for _, p := range ports {
		list = append(list, strconv.Itoa(p))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestClaimHelper$", "-test.count=1")
	// The other process has a TMPDIR of its own, as a go test run beside
	// make test (which moves TMPDIR to a tmpfs) has: the reservations are
	// the machine's all the same.
	cmd.Env = append(os.Environ(), claimEnv+"="+strings.Join(list, ","), "TMPDIR="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("claiming process: %v\n%s", err, out)
	}
	return string(out)
}

// TestClaimHelper is the other process of claim; run alone it does nothing.
func TestClaimHelper(t *testing.T) {
	list := os.Getenv(claimEnv)
	if list == "" {
		t.Skip("run by claim in another process")
	}
	for _, s := range strings.Split(list, ",") {
		p, _ := strconv.Atoi(s)
		ok, err := reserve(p)
		if err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString(s + ":" + strconv.FormatBool(ok) + "\n")
	}
}

// A port Free returned, and its bus port, stay this process's while it
// lives, though nothing listens there (a server stopped, to be restarted
// on the same port): another process asking for them is refused. Without
// it a test binary running beside could start its server on the port of
// one stopped for a moment, and the restarted test would read and write
// that other server's keys.
func TestFreeReservesAcrossProcesses(t *testing.T) {
	p, err := Free()
	if err != nil {
		t.Fatal(err)
	}
	out := claim(t, p, p+10000)
	for _, q := range []int{p, p + 10000} {
		if !strings.Contains(out, strconv.Itoa(q)+":false") {
			t.Errorf("another process reserved port %d, which this one holds:\n%s", q, out)
		}
	}
	if ok, _ := reserve(p); ok {
		t.Errorf("port %d reserved twice in one process", p)
	}
}

// A reservation ends with its process: the port of a test binary that
// exited is free for the next.
func TestReservationEndsWithProcess(t *testing.T) {
	p, err := Free()
	if err != nil {
		t.Fatal(err)
	}
	release(p) // as if this process had never held it
	if out := claim(t, p); !strings.Contains(out, strconv.Itoa(p)+":true") {
		t.Fatalf("the other process could not reserve a free port %d:\n%s", p, out)
	}
	ok, err := reserve(p)
	if err != nil || !ok {
		t.Errorf("port %d still held after the process that held it exited (%v)", p, err)
	}
}
