package auth_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
)

// A program that embeds the gateway hands it an Authenticator
// (gateway.Options.FrontDoor.Auth); any other handler can sit behind the
// same one. Here static bearer tokens come from a file, and the handler
// behind Wrap sees the caller's Principal.
func ExampleAuthenticator_Wrap() {
	dir, err := os.MkdirTemp("", "auth-example")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("# one token a line\ns3cret-team-token\n"), 0o600); err != nil {
		log.Fatal(err)
	}
	a, err := auth.New(context.Background(), auth.Config{BearerTokensFile: tokens})
	if err != nil {
		log.Fatal(err)
	}
	defer a.Close()

	h := a.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, _ := auth.FromContext(r.Context())
		fmt.Fprintf(w, "hello, token %s", p.TokenID)
	}))
	for _, token := range []string{"", "wrong", "s3cret-team-token"} {
		req := httptest.NewRequest(http.MethodPost, "/mcp", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if c := rec.Header().Get("WWW-Authenticate"); c != "" {
			fmt.Println(rec.Code, "WWW-Authenticate:", c)
			continue
		}
		fmt.Println(rec.Code, rec.Body.String())
	}
	// Output:
	// 401 WWW-Authenticate: Bearer
	// 401 WWW-Authenticate: Bearer error="invalid_token", error_description="the token is not valid"
	// 200 hello, token f74c120c61b88d7e
}
