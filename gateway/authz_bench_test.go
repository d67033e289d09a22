package gateway_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
)

// BenchmarkAuthorizedCall measures what authentication and per-call
// authorization add to one small stateless tools/call (GetAnimal over
// Streamable HTTP, one in flight): no auth, a static bearer token, and an
// OAuth JWT (validated once, then served from the token cache) checked
// against a per-tool scope.
//
//	go test -run '^$' -bench BenchmarkAuthorizedCall -benchmem ./gateway/
func BenchmarkAuthorizedCall(b *testing.B) {
	tokens := filepath.Join(b.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("bench-token\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	bearer, err := auth.New(context.Background(), auth.Config{BearerTokensFile: tokens})
	if err != nil {
		b.Fatal(err)
	}
	defer bearer.Close()
	is := newTestIssuer(b)
	oauth, err := auth.New(context.Background(), auth.Config{OAuth: &auth.OAuthConfig{
		JWKSURL: is.url, Issuer: "https://as.example.com", Resource: zooAudience,
		ToolScopes: map[string][]string{"ZooService_GetAnimal": {"zoo:read"}},
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer oauth.Close()

	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"leo"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
	for _, c := range []struct {
		name  string
		auth  *auth.Authenticator
		token string
	}{
		{"none", nil, ""},
		{"bearer", bearer, "bench-token"},
		{"oauth+tool-scope", oauth, is.token(b, zooAudience, "zoo:read", nil)},
	} {
		_, _, url := startGateway(b, &gateway.Options{Auth: c.auth})
		hc := &http.Client{Transport: &http.Transport{}}
		call := func() error {
			req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
			req.Header = http.Header{
				"Content-Type":         {"application/json"},
				"Accept":               {"application/json, text/event-stream"},
				"Mcp-Protocol-Version": {"2026-07-28"},
				"Mcp-Method":           {"tools/call"},
				"Mcp-Name":             {"ZooService_GetAnimal"},
			}
			if c.token != "" {
				req.Header["Authorization"] = []string{"Bearer " + c.token}
			}
			resp, err := hc.Do(req)
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				return &httpStatusError{resp.StatusCode}
			}
			return err
		}
		if err := call(); err != nil {
			b.Fatalf("%s: %v", c.name, err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := call(); err != nil {
					b.Fatal(err)
				}
			}
		})
		hc.CloseIdleConnections()
	}
}
