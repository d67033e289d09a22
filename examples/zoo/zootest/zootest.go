// Package zootest starts the zoo demo backend for tests in other packages,
// so each test gets a fresh zoo with the seed data and nothing to clean up.
package zootest

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
)

// Start serves a fresh zoo on a loopback port and returns its address. The
// zoo stops, and its goroutines are gone, when the test ends; a failure to
// start or to stop cleanly fails the test.
func Start(t testing.TB, opts ...zoo.Option) string {
	t.Helper()
	addr, stop, err := zoo.Listen(context.Background(), opts...)
	if err != nil {
		t.Fatalf("zootest: %v", err)
	}
	t.Cleanup(func() {
		if err := stop(); err != nil {
			t.Errorf("zootest: stop: %v", err)
		}
	})
	return addr
}

// Dial returns a plaintext client connection to addr that is closed when
// the test ends.
func Dial(t testing.TB, addr string) *grpc.ClientConn {
	t.Helper()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatalf("zootest: dial %s: %v", addr, err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}
