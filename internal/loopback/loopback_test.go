package loopback_test

import (
	"net"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/internal/loopback"
)

func TestAddr(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"localhost":          true,
		"LocalHost:8080":     true,
		"127.0.0.1":          true,
		"127.0.0.1:50051":    true,
		"127.3.2.1:1":        true,
		"::1":                true,
		"[::1]":              true,
		"[::1]:443":          true,
		"":                   false,
		"0.0.0.0:8080":       false,
		"[::]:8080":          false,
		"10.0.0.1:50051":     false,
		"example.com:443":    false,
		"localhost.evil.com": false,
		"127.0.0.1.nip.io":   false,
		"[::ffff:10.0.0.1]":  false,
	} {
		if got := loopback.Addr(addr); got != want {
			t.Errorf("Addr(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestNetAddr(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		addr net.Addr
		want bool
	}{
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 80}, true},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 80}, true},
		{&net.TCPAddr{IP: net.IPv4(192, 168, 1, 1), Port: 80}, false},
		{&net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53}, true},
		{&net.UnixAddr{Name: "/tmp/s", Net: "unix"}, false},
		{nil, false},
	} {
		if got := loopback.NetAddr(c.addr); got != c.want {
			t.Errorf("NetAddr(%v) = %v, want %v", c.addr, got, c.want)
		}
	}
}
