package gateway_test

import (
	"context"
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
		JWKSURL: is.URL, Issuer: "https://as.example.com", Resource: zooAudience,
		ToolScopes: map[string][]string{"ZooService_GetAnimal": {"zoo:read"}},
	}})
	if err != nil {
		b.Fatal(err)
	}
	defer oauth.Close()

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
		caller := statelessCaller(hc, url, "ZooService_GetAnimal", c.token)
		call := func() error { return postGetAnimal(caller) }
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
