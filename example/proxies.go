package main

import (
	"fmt"
	"net"
	"strings"

	"github.com/labstack/echo/v4"
)

// parseTrustedProxies reads TRUSTED_PROXIES: CIDR ranges (or single
// addresses), separated by commas or spaces. Empty means none.
func parseTrustedProxies(s string) ([]*net.IPNet, error) {
	var nets []*net.IPNet
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' }) {
		if !strings.Contains(f, "/") {
			ip := net.ParseIP(f)
			if ip == nil {
				return nil, fmt.Errorf("example: TRUSTED_PROXIES: %q is neither a CIDR range such as 10.0.0.0/8 nor an IP address", f)
			}
			bits := 128
			if ip.To4() != nil {
				ip, bits = ip.To4(), 32
			}
			nets = append(nets, &net.IPNet{IP: ip, Mask: net.CIDRMask(bits, bits)})
			continue
		}
		_, n, err := net.ParseCIDR(f)
		if err != nil {
			return nil, fmt.Errorf("example: TRUSTED_PROXIES: %q is not a CIDR range such as 10.0.0.0/8", f)
		}
		nets = append(nets, n)
	}
	return nets, nil
}

// ipExtractor is how the forum finds a client's address. With no trusted
// proxy it is the connection's: X-Forwarded-For is anyone's to write, and
// trusting it would let one client pose as any number of visitors (and
// forge the address in the logs). With trusted ranges, the header's
// nearest address not in them is the client, read only when the
// connection itself comes from one of them; Echo's default trust of the
// loopback and private networks is turned off.
func ipExtractor(trusted []*net.IPNet) echo.IPExtractor {
	if len(trusted) == 0 {
		return echo.ExtractIPDirect()
	}
	opts := []echo.TrustOption{echo.TrustLoopback(false), echo.TrustLinkLocal(false), echo.TrustPrivateNet(false)}
	for _, n := range trusted {
		opts = append(opts, echo.TrustIPRange(n))
	}
	return echo.ExtractIPFromXFFHeader(opts...)
}
