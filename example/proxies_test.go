package main

import (
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/pulse-dev/pulse/internal/testenv/redistest"
	"github.com/pulse-dev/pulse/internal/testenv/tracktest"
	"github.com/pulse-dev/pulse/timeseries"
)

func TestParseTrustedProxies(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in      string
		want    string // the ranges, space-separated
		wantErr string
	}{
		{"", "", ""},
		{"10.0.0.0/8", "10.0.0.0/8", ""},
		{"10.0.0.0/8, 192.168.1.7 ,fd00::/8", "10.0.0.0/8 192.168.1.7/32 fd00::/8", ""},
		{"::1", "::1/128", ""},
		{"10.0.0.0/33", "", `"10.0.0.0/33" is not a CIDR range`},
		{"proxy.local", "", `"proxy.local" is neither a CIDR range`},
		{"10.0.0.0/8,*", "", `"*" is neither`},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			nets, err := parseTrustedProxies(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.HasPrefix(err.Error(), "example: TRUSTED_PROXIES: ") {
					t.Errorf("error %v, want one saying %s", err, tt.wantErr)
				}
				return
			}
			var got []string
			for _, n := range nets {
				got = append(got, n.String())
			}
			if err != nil || strings.Join(got, " ") != tt.want {
				t.Errorf("%q: %v, %v; want %s", tt.in, got, err, tt.want)
			}
		})
	}
}

// One loopback client forging X-Forwarded-For is one visitor on the
// defaults; only a trusted range makes the header count.
func TestForgedForwardedFor(t *testing.T) {
	t.Parallel()
	_, loopback, _ := net.ParseCIDR("127.0.0.0/8")
	var forwarded []timeseries.Visitor
	for i := range 30 {
		forwarded = append(forwarded, timeseries.Visitor{Addr: fmt.Sprintf("203.0.113.%d", 1+i), UserAgent: "curl/8.5.0"})
	}
	tests := []struct {
		name    string
		proxies []*net.IPNet
		want    []timeseries.Visitor
	}{
		{"no proxy trusted (default)", nil, []timeseries.Visitor{{Addr: "127.0.0.1", UserAgent: "curl/8.5.0"}}},
		{"loopback trusted", []*net.IPNet{loopback}, forwarded},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := redistest.Start(t)
			base, stop := startExample(t, srv, options{TrustedProxies: tt.proxies})
			dayKey := func() string {
				key, _ := timeseries.Schema{}.VisitorKey(86400, "hits", timeseries.BucketStart(time.Now().Unix(), 86400))
				return key
			}
			first, day := dayKey(), time.Now().Unix()
			client := &http.Client{Timeout: 10 * time.Second}
			for _, v := range forwarded {
				req, _ := http.NewRequest(http.MethodGet, base+"/", nil)
				req.Header.Set("User-Agent", v.UserAgent)
				req.Header.Set("X-Forwarded-For", v.Addr)
				resp, err := client.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
			}
			if err := stop(); err != nil { // flushes the visitors
				t.Fatal(err)
			}
			// The count is exactly a sketch's of the same visitors under
			// the day's salt. A run across midnight counts the two days'
			// keys, under two salts, and can only be near the true count.
			got, err := redis.Int64(srv.Do("PFCOUNT", first, dayKey()), nil)
			want, slack := tracktest.Sketched(t, srv.Do, day, tt.want), int64(0)
			if dayKey() != first {
				want, slack = int64(len(tt.want)), 1
			}
			if err != nil || got < want-slack || got > want+slack {
				t.Errorf("30 requests forging X-Forwarded-For: %d visitors (%v), want %d, a sketch's count of the %d expected", got, err, want, len(tt.want))
			}
		})
	}
}
