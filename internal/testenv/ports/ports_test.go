package ports

import (
	"net"
	"strconv"
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
