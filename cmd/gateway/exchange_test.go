package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/gateway/exchange"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// tokenEndpoint is an RFC 8693 token endpoint: it exchanges any subject
// token for "for:AUDIENCE|RESOURCE", and records the audiences it was
// asked for.
type tokenEndpoint struct {
	*httptest.Server
	mu        sync.Mutex
	audiences []string
}

func newTokenEndpoint(t *testing.T) *tokenEndpoint {
	e := &tokenEndpoint{}
	e.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != exchange.GrantType || r.PostForm.Get("subject_token") == "" {
			http.Error(w, `{"error":"invalid_request"}`, http.StatusBadRequest)
			return
		}
		if id, secret, ok := r.BasicAuth(); !ok || id != "gw" || secret != "s3cret" {
			http.Error(w, `{"error":"invalid_client"}`, http.StatusUnauthorized)
			return
		}
		target := r.PostForm.Get("audience") + "|" + r.PostForm.Get("resource")
		e.mu.Lock()
		e.audiences = append(e.audiences, target)
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"access_token": "for:" + target, "issued_token_type": exchange.AccessTokenType,
			"token_type": "Bearer", "expires_in": 3600})
	}))
	t.Cleanup(e.Close)
	return e
}

// authorizationSeen is a zoo that records the authorization metadata of
// each call it receives.
type authorizationSeen struct {
	addr string
	mu   sync.Mutex
	seen []string
}

func startAuthorizationSeen(t *testing.T) *authorizationSeen {
	t.Helper()
	b := &authorizationSeen{}
	record := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		md, _ := metadata.FromIncomingContext(ctx)
		b.mu.Lock()
		b.seen = append(b.seen, strings.Join(md.Get("authorization"), ","))
		b.mu.Unlock()
		return next(ctx, req)
	}
	gs := grpc.NewServer(grpc.UnaryInterceptor(record))
	zoo.Register(gs, zoo.NewServer())
	reflection.Register(gs)
	b.addr = testkit.ServeLoopback(t, gs)
	return b
}

func (b *authorizationSeen) authorizations() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.seen)
}

// TestTokenExchangePerBackend: with several backends the
// --backend-token-exchange flags give the token endpoint and the client,
// and each backend's token_exchange names its own audience: each backend
// receives tokens for its audience only. The flags alone with several
// backends, two backends naming one audience or resource, and an entry
// without token_url and without the flags are refused at start, naming
// the setting and what to do.
func TestTokenExchangePerBackend(t *testing.T) {
	is, ep := newIssuer(t), newTokenEndpoint(t)
	zooB, shopB := startAuthorizationSeen(t), startAuthorizationSeen(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	flags := append(is.args(), "--backend-token-exchange", ep.URL, "--backend-token-exchange-client-id", "gw", "--backend-token-exchange-secret-file", secret)
	perBackend := writeFile(t, "per-backend.yaml", "backends:\n"+
		"  - name: zoo\n    address: "+zooB.addr+"\n    token_exchange: {audience: zoo-api}\n"+
		"  - name: shop\n    address: "+shopB.addr+"\n    token_exchange: {resource: 'https://shop.example.com'}\n")

	p := startGatewayProcess(t, append(flags, "--config", perBackend, "--tool-mode", "typed")...)
	token := is.token(t, "")
	for _, tool := range []string{"zoo_ZooService_GetAnimal", "shop_ZooService_GetAnimal"} {
		if resp, body := statelessCall(t, p.base, token, tool, `{"id":"leo"}`); resp.StatusCode != http.StatusOK || strings.Contains(body, `"isError":true`) {
			t.Fatalf("%s: %d %s", tool, resp.StatusCode, body)
		}
	}
	if got := zooB.authorizations(); !slices.Equal(got, []string{"Bearer for:zoo-api|"}) {
		t.Errorf("the zoo received %q, want a token for its audience alone", got)
	}
	if got := shopB.authorizations(); !slices.Equal(got, []string{"Bearer for:|https://shop.example.com"}) {
		t.Errorf("the shop received %q, want a token for its resource alone", got)
	}
	ep.mu.Lock()
	asked := slices.Sorted(slices.Values(ep.audiences))
	ep.mu.Unlock()
	if !slices.Equal(asked, []string{"zoo-api|", "|https://shop.example.com"}) {
		t.Errorf("the token endpoint was asked for %q, want each backend's target once", asked)
	}

	sameAudience := writeFile(t, "same.yaml", "backends:\n"+
		"  - name: zoo\n    address: "+zooB.addr+"\n    token_exchange: {audience: zoo-api}\n"+
		"  - name: shop\n    address: "+shopB.addr+"\n    token_exchange: {audience: zoo-api, scope: [shop]}\n")
	ownEndpoint := writeFile(t, "own.yaml", "backends:\n"+
		"  - name: zoo\n    address: "+zooB.addr+"\n"+
		"  - name: shop\n    address: "+shopB.addr+"\n    token_exchange: {token_url: '"+ep.URL+"', client_id: gw, client_secret_file: "+secret+", audience: zoo-api}\n")
	halfClient := writeFile(t, "half.yaml", "backends:\n  - name: zoo\n    address: "+zooB.addr+"\n    token_exchange: {audience: zoo-api, client_id: other}\n")
	noFlags := writeFile(t, "noflags.yaml", "backends:\n  - name: zoo\n    address: "+zooB.addr+"\n    token_exchange: {audience: zoo-api}\n")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"flags with two backends", append(slices.Clone(flags), "--backend-token-exchange-audience", "zoo-api", "--backend", "zoo="+zooB.addr, "--backend", "shop="+shopB.addr),
			`--backend-token-exchange: backends zoo, shop would all be called with tokens for one audience (zoo-api), so each would receive its callers' tokens that are valid at the others; with several backends, name each one's own audience or resource in its token_exchange in the config file`},
		{"flags without an audience with two backends", append(slices.Clone(flags), "--backend", "zoo="+zooB.addr, "--backend", "shop="+shopB.addr),
			`--backend-token-exchange: backends zoo, shop name no audience or resource; with several backends, name each one's own audience or resource in its token_exchange`},
		{"two entries, one audience", append(slices.Clone(flags), "--config", sameAudience),
			`backends[1].token_exchange (with --backend-token-exchange): backend shop: the audience "zoo-api" is also backend zoo's: two backends must not receive tokens for the same audience`},
		{"the flags' audience and an entry's", append(slices.Clone(flags), "--backend-token-exchange-audience", "zoo-api", "--config", ownEndpoint),
			`backends[1].token_exchange: backend shop: the audience "zoo-api" is also backend zoo's`},
		{"a client without token_url", append(slices.Clone(flags), "--config", halfClient),
			`backends[0].token_exchange: client_id, client_secret_file, private_key_file and key_id go with token_url`},
		{"an audience without the flags", append(is.args(), "--config", noFlags),
			`backends[0].token_exchange: token_url is required, or give --backend-token-exchange`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig(tc.args, io.Discard, noEnv)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v\nwant an error containing %s", err, tc.want)
			}
		})
	}
}
