// Package tcpproxy is a TCP proxy a test puts between one client and
// its server, to cut that client off as a network partition would while
// the others keep reaching the server: once cut, bytes go nowhere in
// either direction and new connections are accepted but never joined to
// the server, so the client sees its reads time out, not a refusal.
package tcpproxy

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// Proxy forwards connections to one address until cut.
type Proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	cut   bool
	conns map[net.Conn]struct{} // both ends of every connection
	done  bool
}

// Start listens on a free loopback port and forwards to target; it is
// stopped when t ends.
func Start(t testing.TB, target string) *Proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &Proxy{ln: ln, target: target, conns: map[net.Conn]struct{}{}}
	go p.accept()
	t.Cleanup(p.close)
	return p
}

// Addr is the address clients dial instead of the target's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// Pool dials Redis through the proxy with the short timeouts an app's
// pool should have, so that a client cut off fails in a bounded time.
func (p *Proxy) Pool() *redis.Pool {
	return &redis.Pool{MaxIdle: 4, Dial: func() (redis.Conn, error) {
		return redis.Dial("tcp", p.Addr(), redis.DialConnectTimeout(300*time.Millisecond),
			redis.DialReadTimeout(300*time.Millisecond), redis.DialWriteTimeout(300*time.Millisecond))
	}}
}

// Cut drops every byte from now on, both ways, on the connections open
// and on those made while cut.
func (p *Proxy) Cut() {
	p.mu.Lock()
	p.cut = true
	p.mu.Unlock()
}

// Restore ends the cut: the connections that lived through it are
// closed, as a client's would be after its reads timed out, and new ones
// are joined to the target again.
func (p *Proxy) Restore() {
	p.mu.Lock()
	p.cut = false
	conns := p.conns
	p.conns = map[net.Conn]struct{}{}
	p.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}

func (p *Proxy) accept() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.serve(c)
	}
}

// serve joins c to the target, or, while cut, holds it silent.
func (p *Proxy) serve(c net.Conn) {
	if !p.track(c) {
		return
	}
	p.mu.Lock()
	cut := p.cut
	p.mu.Unlock()
	if cut {
		io.Copy(io.Discard, c) // until Restore closes it
		return
	}
	up, err := net.Dial("tcp", p.target)
	if err != nil || !p.track(up) {
		c.Close()
		return
	}
	go p.pipe(up, c)
	p.pipe(c, up)
}

// track lists c so that Restore and the end close it; false once the
// proxy is closed.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		c.Close()
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

// pipe copies from src to dst while not cut, and drops what it reads
// while cut; it closes both when either ends.
func (p *Proxy) pipe(dst, src net.Conn) {
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			cut := p.cut
			p.mu.Unlock()
			if !cut {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			return
		}
	}
}

func (p *Proxy) close() {
	p.ln.Close()
	p.mu.Lock()
	p.done = true
	conns := p.conns
	p.conns = nil
	p.mu.Unlock()
	for c := range conns {
		c.Close()
	}
}
