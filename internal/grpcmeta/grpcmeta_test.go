package grpcmeta_test

import (
	"testing"

	"github.com/grpc-mcp-gateway/gateway/internal/grpcmeta"
)

func TestCheckForwardHeader(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"Connection", "keep-alive", "Proxy-Authorization", "Proxy-Foo", "TE", "Trailer", "Transfer-Encoding", "Upgrade", "Host", "grpc-timeout", "content-type", "User-Agent", "X Bad", "x:y", "é", ""} {
		if err := grpcmeta.CheckForwardHeader(name); err == nil {
			t.Errorf("%q accepted", name)
		}
	}
	for _, name := range []string{"Authorization", "X-Request-Id", "traceparent", "x-trace-bin", "Cookie", "x_under.dot-9"} {
		if err := grpcmeta.CheckForwardHeader(name); err != nil {
			t.Errorf("%q refused: %v", name, err)
		}
	}
}

func TestCheckKey(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"", "grpc-status", "content-type", "te", "user-agent", "host", "connection", "X-Upper", "a b"} {
		if err := grpcmeta.CheckKey(k); err == nil {
			t.Errorf("%q accepted", k)
		}
	}
	for _, k := range []string{"authorization", "x-env", "k-bin", "a.b_c-9"} {
		if err := grpcmeta.CheckKey(k); err != nil {
			t.Errorf("%q refused: %v", k, err)
		}
	}
}
