package realservices

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"google.golang.org/grpc/reflection"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/exchange"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// The authorization server of these tests is zitadel/oidc's OpenID
// Provider (github.com/zitadel/oidc/v3/pkg/op), which implements RFC
// 8693 token exchange, with the module's example storage and login:
// users id1 (test-user@127.0.0.1, allowed to exchange its tokens: the
// example lets only admins) and id2 (test-user2, not allowed). Its
// clients issue opaque tokens; jwtClients makes them JWTs, which the
// gateway's front door and the backend verify with the provider's keys.
const (
	mcpClientID, mcpClientSecret         = "mcp-client", "mcp-secret"
	gatewayClientID, gatewayClientSecret = "mcp-gateway", "gateway-secret"
	backendAudience                      = "zoo-backend"
	redirectURI                          = "http://127.0.0.1/callback"
)

var registerClients sync.Once

// jwtClients is the example storage with every client issuing JWT access
// tokens.
type jwtClients struct{ *storage.Storage }

func (s jwtClients) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return jwtClient{c}, nil
}

// ValidateTokenExchangeRequest is the authorization server's policy, as
// a real one is configured: it issues tokens for backendAudience only,
// and never with scope zoo.admin; then the example's own rules.
func (s jwtClients) ValidateTokenExchangeRequest(ctx context.Context, req op.TokenExchangeRequest) error {
	for _, a := range req.GetAudience() {
		if a != backendAudience {
			return oidc.ErrInvalidTarget().WithDescription("no backend %s here", a)
		}
	}
	if slices.Contains(req.GetScopes(), "zoo.admin") {
		return oidc.ErrInvalidScope().WithDescription("zoo.admin is not granted by token exchange")
	}
	return s.Storage.ValidateTokenExchangeRequest(ctx, req)
}

type jwtClient struct{ op.Client }

func (jwtClient) AccessTokenType() op.AccessTokenType { return op.AccessTokenTypeJWT }

// authServer is a running provider: its issuer (also its URL) and how
// many token exchanges it answered.
type authServer struct {
	issuer    string
	exchanges atomic.Int32
}

func startAuthServer(t *testing.T) *authServer {
	t.Helper()
	registerClients.Do(func() {
		storage.RegisterClients(storage.WebClient(mcpClientID, mcpClientSecret, redirectURI), storage.WebClient(gatewayClientID, gatewayClientSecret, redirectURI))
	})
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	as := &authServer{issuer: "http://" + lis.Addr().String()}
	router := exampleop.SetupServer(as.issuer, jwtClients{storage.NewStorage(storage.NewUserStore(as.issuer))}, nil, false)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/oauth/token" && r.PostFormValue("grant_type") == exchange.GrantType {
			as.exchanges.Add(1)
		}
		router.ServeHTTP(w, r)
	}))
	srv.Listener.Close()
	srv.Listener = lis
	srv.Start()
	t.Cleanup(srv.Close)
	return as
}

// login gets user's access token for the MCP client by the
// authorization code flow, through the provider's own login form.
func (as *authServer) login(t *testing.T, username string) string {
	t.Helper()
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	follow := func(resp *http.Response, err error) *url.URL {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, err := resp.Location()
		if err != nil {
			t.Fatalf("%s: %d without a redirect", resp.Request.URL, resp.StatusCode)
		}
		return loc
	}
	q := url.Values{"client_id": {mcpClientID}, "redirect_uri": {redirectURI}, "response_type": {"code"}, "scope": {"openid zoo"}, "state": {"s"}}
	loginPage := follow(hc.Get(as.issuer + "/auth?" + q.Encode()))
	id := loginPage.Query().Get("authRequestID")
	callback := follow(hc.PostForm(as.issuer+"/login/username", url.Values{"id": {id}, "username": {username}, "password": {"verysecure"}}))
	if !callback.IsAbs() {
		callback = must(url.Parse(as.issuer)).ResolveReference(callback)
	}
	code := follow(hc.Get(callback.String())).Query().Get("code")
	if code == "" {
		t.Fatalf("login of %s: no code", username)
	}
	req, _ := http.NewRequest("POST", as.issuer+"/oauth/token", strings.NewReader(url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI}}.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(mcpClientID, mcpClientSecret)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var tr struct {
		AccessToken string `json:"access_token"`
	}
	if err := jsonDecode(resp.Body, &tr); err != nil || tr.AccessToken == "" {
		t.Fatalf("token for %s: %d %v", username, resp.StatusCode, err)
	}
	return tr.AccessToken
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

// fetchJWKS fetches the provider's key set.
func fetchJWKS(t *testing.T, url string) *jose.JSONWebKeySet {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var set jose.JSONWebKeySet
	if err := json.NewDecoder(resp.Body).Decode(&set); err != nil {
		t.Fatalf("JWKS at %s: %v", url, err)
	}
	return &set
}

// seenBy is what the backend verified of the calls' tokens.
type seenBy struct {
	mu       sync.Mutex
	subjects []string
}

// startCheckingZoo serves the zoo behind an interceptor that accepts a
// call only with a token the provider signed for backendAudience, and
// records its subject.
func startCheckingZoo(t *testing.T, as *authServer) (string, *seenBy) {
	t.Helper()
	keys := fetchJWKS(t, as.issuer+"/keys")
	seen := &seenBy{}
	check := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if strings.HasPrefix(info.FullMethod, "/grpc.reflection.") {
			return next(ctx, req)
		}
		md, _ := metadata.FromIncomingContext(ctx)
		authz := md.Get("authorization")
		if len(authz) != 1 || !strings.HasPrefix(authz[0], "Bearer ") {
			return nil, status.Error(codes.Unauthenticated, "no bearer token")
		}
		tok, err := jwt.ParseSigned(strings.TrimPrefix(authz[0], "Bearer "), []jose.SignatureAlgorithm{jose.RS256, jose.ES256, jose.PS256, jose.EdDSA})
		if err != nil {
			return nil, status.Error(codes.Unauthenticated, "token: "+err.Error())
		}
		var c jwt.Claims
		if err := tok.Claims(keys, &c); err != nil {
			return nil, status.Error(codes.Unauthenticated, "token: "+err.Error())
		}
		if err := c.ValidateWithLeeway(jwt.Expected{Issuer: as.issuer, AnyAudience: jwt.Audience{backendAudience}}, time.Minute); err != nil || c.Expiry == nil {
			return nil, status.Errorf(codes.Unauthenticated, "token: %v (exp %v)", err, c.Expiry)
		}
		sub := c.Subject
		seen.mu.Lock()
		seen.subjects = append(seen.subjects, sub)
		seen.mu.Unlock()
		return next(ctx, req)
	}
	gs := grpc.NewServer(grpc.UnaryInterceptor(check))
	zoo.Register(gs, zoo.NewServer())
	reflection.Register(gs)
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	return lis.Addr().String(), seen
}

// TestTokenExchange: the gateway calls the zoo as the end user, with a
// token exchanged at a real authorization server (zitadel/oidc's OpenID
// Provider, RFC 8693): over Streamable HTTP and WebSocket, the backend
// verifies the token's signature, issuer and audience (its own, not the
// gateway's) and sees the user's subject; the caller's own token never
// reaches it; a second call reuses the exchanged token; an audience the
// server does not serve (invalid_target), a scope it does not grant
// (invalid_scope, asked by the backend or by one method of a backend
// whose other methods work) and a user it will not exchange for each give a tool
// execution error naming the refusal, and the backend never sees those
// calls.
func TestTokenExchange(t *testing.T) {
	as := startAuthServer(t)
	addr, seen := startCheckingZoo(t, as)
	a, err := auth.New(t.Context(), auth.Config{OAuth: &auth.OAuthConfig{JWKSURL: as.issuer + "/keys", Issuer: as.issuer, Audience: mcpClientID}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	// Three backends serve the same zoo: "zoo" with its audience, and two
	// whose exchange the server refuses: "billing" (another audience) and
	// "admin" (a scope it does not grant).
	var backends []gateway.Backend
	for _, b := range []struct {
		name, audience string
		scopes         []string
	}{{"zoo", backendAudience, nil}, {"billing", "billing-backend", nil}, {"admin", backendAudience, []string{"zoo.admin"}}} {
		x, err := exchange.New(exchange.Options{TokenURL: as.issuer + "/oauth/token", ClientID: gatewayClientID, ClientSecret: gatewayClientSecret,
			Audience: b.audience, Scopes: b.scopes})
		if err != nil {
			t.Fatal(err)
		}
		conn, err := backendconn.Dial(addr, backendconn.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { conn.Close() })
		// DeleteAnimal asks for zoo.admin on top: a scope per method.
		backends = append(backends, gateway.Backend{Name: b.name, Address: addr, Conn: conn, TokenExchange: x,
			Methods: []gateway.MethodSettings{{Match: "zoo.v1.ZooService/DeleteAnimal", TokenScopes: []string{"zoo.admin"}}}})
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	g, err := gateway.New(ctx, backends, &gateway.Options{Auth: a, Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(g.Handler())
	t.Cleanup(func() {
		srv.Close()
		_ = g.Shutdown(context.Background())
	})

	admin := as.login(t, "test-user@127.0.0.1")
	for _, transport := range []string{"streamable", "websocket"} {
		t.Run(transport, func(t *testing.T) {
			cs := connectWith(ctx, t, srv.URL, transport, admin)
			before := as.exchanges.Load()
			for range 2 {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "zoo_ZooService_GetAnimal", Arguments: map[string]any{"id": "leo"}})
				if err != nil || res.IsError {
					t.Fatalf("GetAnimal as id1: %v %+v", err, res)
				}
			}
			seen.mu.Lock()
			last := seen.subjects[len(seen.subjects)-1]
			seen.mu.Unlock()
			if last != "id1" {
				t.Errorf("the backend saw subject %q, want id1", last)
			}
			if transport == "streamable" && as.exchanges.Load()-before != 1 {
				t.Errorf("%d exchanges for two calls, want 1", as.exchanges.Load()-before)
			}
		})
	}

	// The server's refusals, each a tool execution error with its code;
	// the backend never sees those calls.
	cs := connectWith(ctx, t, srv.URL, "streamable", admin)
	seen.mu.Lock()
	calls := len(seen.subjects)
	seen.mu.Unlock()
	for tool, want := range map[string]string{
		"billing_ZooService_GetAnimal": "refused a token for backend billing on your behalf: invalid_target (no backend billing-backend here)",
		"admin_ZooService_GetAnimal":   "refused a token for backend admin on your behalf: invalid_scope (zoo.admin is not granted by token exchange)",
		"zoo_ZooService_DeleteAnimal":  "refused a token for backend zoo on your behalf: invalid_scope (zoo.admin is not granted by token exchange)",
	} {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: tool, Arguments: map[string]any{"id": "leo"}})
		if err != nil {
			t.Fatal(err)
		}
		if text := res.Content[0].(*sdk.TextContent).Text; !res.IsError || !strings.Contains(text, want) {
			t.Errorf("%s: %q, want a tool error containing %q", tool, text, want)
		}
	}

	other := as.login(t, "test-user2")
	cs = connectWith(ctx, t, srv.URL, "streamable", other)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "zoo_ZooService_GetAnimal", Arguments: map[string]any{"id": "leo"}})
	if err != nil {
		t.Fatal(err)
	}
	text := res.Content[0].(*sdk.TextContent).Text
	if !res.IsError || !strings.Contains(text, "the authorization server refused a token for backend zoo on your behalf") || !strings.Contains(text, "impersonation") {
		t.Errorf("id2's call: %+v %q, want a tool error naming the refusal", res, text)
	}
	seen.mu.Lock()
	defer seen.mu.Unlock()
	if len(seen.subjects) != calls {
		t.Errorf("a call whose exchange was refused reached the backend")
	}
}

// connectWith connects the go-sdk client to the gateway at base with an
// access token, over Streamable HTTP or WebSocket.
func connectWith(ctx context.Context, t *testing.T, base, transport, token string) *sdk.ClientSession {
	t.Helper()
	h := http.Header{"Authorization": {"Bearer " + token}}
	var ct sdk.Transport
	switch transport {
	case "streamable":
		ct = &sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1, HTTPClient: &http.Client{Transport: headerRT{h}}}
	case "websocket":
		ct = &testkit.WebSocketTransport{URL: "ws" + strings.TrimPrefix(base, "http") + "/ws", Header: h}
	}
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "exchange-test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatalf("connect over %s: %v", transport, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type headerRT struct{ h http.Header }

func (rt headerRT) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range rt.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

func jsonDecode(r io.Reader, v any) error { return json.NewDecoder(r).Decode(v) }

// TestTokenExchangeBinary: the gateway binary, configured by its flags
// (--oauth-*, --backend-token-exchange*), calls the zoo as the end user
// with a token the real authorization server exchanged, and its metrics
// count the request to the token endpoint.
func TestTokenExchangeBinary(t *testing.T) {
	as := startAuthServer(t)
	addr, seen := startCheckingZoo(t, as)
	bin := testkit.GatewayBinary(t)
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(gatewayClientSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	listen := lis.Addr().String()
	lis.Close()
	cmd := exec.Command(bin, "--listen", listen, "--backend", "zoo="+addr, "--tool-mode", "typed",
		"--oauth-jwks-url", as.issuer+"/keys", "--oauth-issuer", as.issuer, "--oauth-audience", mcpClientID,
		"--backend-token-exchange", as.issuer+"/oauth/token", "--backend-token-exchange-client-id", gatewayClientID,
		"--backend-token-exchange-secret-file", secret, "--backend-token-exchange-audience", backendAudience)
	logs := &syncWriter{w: new(strings.Builder)}
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	})
	base := "http://" + listen
	testkit.WaitFor(t, "the gateway to be ready", func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cs := connectWith(ctx, t, base, "streamable", as.login(t, "test-user@127.0.0.1"))
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": "leo"}})
	if err != nil || res.IsError {
		t.Fatalf("GetAnimal: %v %+v\n%s", err, res, logs.String())
	}
	seen.mu.Lock()
	got := slices.Clone(seen.subjects)
	seen.mu.Unlock()
	if !slices.Equal(got, []string{"id1"}) {
		t.Errorf("the backend saw subjects %v, want [id1]", got)
	}
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if want := `grpc_mcp_gateway_token_exchange_duration_seconds_count{backend="zoo",outcome="ok"} 1`; !strings.Contains(string(body), want) {
		t.Errorf("metrics lack %s", want)
	}
}

// syncWriter serialises writes to w: the process's stderr is copied by
// a goroutine of exec while the test may read it.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.(*strings.Builder).String()
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
