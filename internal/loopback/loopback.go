// Package loopback is the module's one answer to "does this address name
// this machine?". Three decisions hang on it: a backend on loopback
// defaults to plaintext (gateway), a loopback listener refuses Host headers
// that are not loopback names against DNS rebinding (gateway/mcp), and a
// JWKS fetched over plain http off loopback is refused (gateway/auth).
// They must agree, so the rule lives here, in a package with no
// dependencies that the protocol layer may import without learning gRPC.
package loopback

import (
	"net"
	"strings"
)

// Host reports whether host names this machine: "localhost" in any case,
// or an IP address in 127.0.0.0/8 or ::1. IPv6 literals may keep their
// brackets ("[::1]"), as URLs and Host headers write them. Any other name
// is not loopback, even one that resolves to it: the question is what the
// address says, not what DNS answers today.
func Host(host string) bool {
	host = strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Addr is [Host] for an address that may carry a port: "HOST:PORT",
// "[::1]:443", or a bare host.
func Addr(addr string) bool {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return Host(h)
	}
	return Host(addr)
}

// NetAddr is [Host] for a connection's address, such as the local address
// an HTTP request arrived on.
func NetAddr(a net.Addr) bool {
	if t, ok := a.(*net.TCPAddr); ok {
		return t.IP.IsLoopback()
	}
	return a != nil && Addr(a.String())
}
