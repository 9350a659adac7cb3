package adapter

import (
	"net/http"
	"testing"
)

func TestRemoteAddrAndUserAgent(t *testing.T) {
	tests := []struct {
		name        string
		remote      string
		header      http.Header
		addr, agent string
	}{
		{"IPv4 with port", "192.0.2.1:5555", http.Header{"User-Agent": {"curl/8"}}, "192.0.2.1", "curl/8"},
		{"IPv6 with port", "[2001:db8::1]:443", nil, "2001:db8::1", ""},
		{"no port", "192.0.2.9", nil, "192.0.2.9", ""},
		{"forwarded headers ignored", "192.0.2.1:1", http.Header{"X-Forwarded-For": {"203.0.113.5"}, "X-Real-Ip": {"203.0.113.6"}}, "192.0.2.1", ""},
		{"first of two agents", "192.0.2.1:1", http.Header{"User-Agent": {"a", "b"}}, "192.0.2.1", "a"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &http.Request{RemoteAddr: tt.remote, Header: tt.header}
			if got := RemoteAddr(r); got != tt.addr {
				t.Errorf("RemoteAddr = %q, want %q", got, tt.addr)
			}
			if got, want := UserAgent(r), r.UserAgent(); got != tt.agent || got != want {
				t.Errorf("UserAgent = %q, want %q (Header.Get: %q)", got, tt.agent, want)
			}
		})
	}
}
