package tcpproxy_test

import (
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tcpproxy"
)

func TestMain(m *testing.M) { redistest.Main(m) }

// TestCut: through the proxy a client reaches Redis; cut, its commands
// time out on the connection it had and on a new one, while a client
// beside it still reaches Redis; restored, a new connection reaches it.
func TestCut(t *testing.T) {
	srv := redistest.Start(t)
	p := tcpproxy.Start(t, srv.Addr)
	dial := func() (redis.Conn, error) {
		return redis.Dial("tcp", p.Addr(), redis.DialReadTimeout(300*time.Millisecond), redis.DialConnectTimeout(time.Second))
	}
	c, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do("SET", "k", "through"); err != nil {
		t.Fatal(err)
	}
	p.Cut()
	if _, err := c.Do("PING"); err == nil {
		t.Error("a command on an open connection got through the cut")
	}
	c2, err := dial()
	if err != nil {
		t.Fatalf("dial while cut: %v; want it accepted, then silent", err)
	}
	if _, err := c2.Do("PING"); err == nil {
		t.Error("a command on a new connection got through the cut")
	}
	if v, err := redis.String(srv.Do("GET", "k"), nil); err != nil || v != "through" {
		t.Errorf("a client beside the proxy: %q %v", v, err)
	}
	p.Restore()
	c3, err := dial()
	if err != nil {
		t.Fatal(err)
	}
	defer c3.Close()
	if v, err := redis.String(c3.Do("GET", "k")); err != nil || v != "through" {
		t.Errorf("after the cut: %q %v", v, err)
	}
}
