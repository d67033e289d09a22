package gateway_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
)

// bearerAuth is an authenticator for the static tokens of a tokens file
// (one per line, each its own principal), polled every 10ms so a test can
// revoke one by rewriting the file; it returns the file's path too.
func bearerAuth(t *testing.T, tokens string) (*auth.Authenticator, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(tokens), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(context.Background(), auth.Config{BearerTokensFile: path, PollInterval: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a, path
}

// startJobsAs serves the jobs backend (lrotest: long-running operations,
// real reflection) behind a gateway with opts.
func startJobsAs(t *testing.T, bopts lrotest.Options, opts *gateway.Options) (*lrotest.Server, string) {
	t.Helper()
	srv, stop, err := lrotest.Start(bopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "jobs", srv.Addr)}, opts)
	return srv, base + "/mcp"
}

