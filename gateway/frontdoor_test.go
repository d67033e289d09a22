package gateway_test

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/reflection"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
	"github.com/grpc-mcp-gateway/gateway/internal/oauthtest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// recordingBackend is a zoo whose interceptor keeps the incoming metadata
// of the last ZooService call, to see exactly what the gateway forwards.
type recordingBackend struct {
	addr  string
	mu    sync.Mutex
	last  metadata.MD
	calls map[string]int // by full method name
}

func startRecordingBackend(t *testing.T) *recordingBackend {
	t.Helper()
	b := &recordingBackend{calls: map[string]int{}}
	record := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if strings.HasPrefix(info.FullMethod, "/zoo.") {
			md, _ := metadata.FromIncomingContext(ctx)
			b.mu.Lock()
			b.last = md.Copy()
			b.calls[info.FullMethod]++
			b.mu.Unlock()
		}
		return next(ctx, req)
	}
	gs := grpc.NewServer(grpc.UnaryInterceptor(record))
	zoo.Register(gs, zoo.NewServer())
	reflection.Register(gs)
	b.addr = testkit.ServeLoopback(t, gs)
	return b
}

// deletes is how many DeleteAnimal calls reached the backend.
func (b *recordingBackend) deletes() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls["/zoo.v1.ZooService/DeleteAnimal"]
}

func (b *recordingBackend) metadata() metadata.MD {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.last
}

// serveGateway fronts addr with opts over a real loopback HTTP server and
// returns the server's base URL.
func serveGateway(t *testing.T, addr string, opts *gateway.Options) string {
	t.Helper()
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", addr)}, opts)
	return base
}

// headerTransport adds headers to every request of the MCP client, as a
// client configured with a token (and a proxy adding hop-by-hop headers)
// would.
type headerTransport struct {
	h  http.Header
	rt http.RoundTripper
}

func (t *headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, vs := range t.h {
		for _, v := range vs {
			r.Header.Add(k, v)
		}
	}
	return t.rt.RoundTrip(r)
}

func connectWith(ctx context.Context, t *testing.T, url string, h http.Header) (*sdk.ClientSession, error) {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	client := sdk.NewClient(&sdk.Implementation{Name: "frontdoor", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:   url,
		MaxRetries: -1,
		HTTPClient: &http.Client{Transport: &headerTransport{h: h, rt: tr}},
	}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

func TestBearerEndToEnd(t *testing.T) {
	b := startRecordingBackend(t)
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("# ops\ns3cret-token\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(context.Background(), auth.Config{BearerTokensFile: path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	base := serveGateway(t, b.addr, &gateway.Options{Auth: a, Telemetry: gateway.TelemetryOptions{Metrics: telemetry.NewMetrics()}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	for _, tok := range []string{"", "wrong"} {
		h := http.Header{}
		if tok != "" {
			h.Set("Authorization", "Bearer "+tok)
		}
		if _, err := connectWith(ctx, t, base+"/mcp", h); err == nil {
			t.Errorf("token %q: connected", tok)
		}
	}
	cs, err := connectWith(ctx, t, base+"/mcp", http.Header{"Authorization": {"Bearer s3cret-token"}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": "leo"}})
	if err != nil || res.IsError {
		t.Fatalf("GetAnimal: %v %+v", err, res)
	}
	if md := b.metadata(); len(md.Get("authorization")) != 0 {
		t.Errorf("Authorization reached the backend without --forward-header: %v", md)
	}

	// The probes and metrics stay open (authentication covers the MCP
	// endpoints only); the MCP endpoint answers 401 with a challenge.
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s without a token: %d", path, resp.StatusCode)
		}
	}
	noToken, err := (&testkit.Client{URL: base + "/mcp"}).Post(t.Context(), []byte(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if noToken.Status != 401 || noToken.Header.Get("WWW-Authenticate") != "Bearer" {
		t.Errorf("/mcp without a token: %d %q", noToken.Status, noToken.Header.Get("WWW-Authenticate"))
	}
	resp, err := http.Get(base + auth.MetadataPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("bearer mode serves OAuth metadata: %d", resp.StatusCode)
	}
	http.DefaultClient.CloseIdleConnections()
}

// testIssuer is the test authorization server, issuing as
// https://as.example.com.
type testIssuer struct{ *oauthtest.Issuer }

func newTestIssuer(t testing.TB) *testIssuer {
	return &testIssuer{oauthtest.NewIssuer(t)}
}

func (is *testIssuer) token(t testing.TB, aud, scope string, extra map[string]any) string {
	t.Helper()
	return is.Token(t, "https://as.example.com", aud, scope, extra)
}

// TestOAuthEndToEnd drives the reference client through the gateway in
// OAuth mode: audience checked, per-tool scope refused with 403 before the
// MCP layer, other tools served, a verified claim forwarded as metadata,
// and the protected-resource metadata served at both well-known paths.
func TestOAuthEndToEnd(t *testing.T) {
	b := startRecordingBackend(t)
	is := newTestIssuer(t)
	const aud = "https://zoo.example.com/mcp"
	a, err := auth.New(context.Background(), auth.Config{OAuth: &auth.OAuthConfig{
		JWKSURL:        is.URL,
		Issuer:         "https://as.example.com",
		Resource:       aud,
		RequiredScopes: []string{"zoo"},
		ToolScopes:     map[string][]string{"ZooService_DeleteAnimal": {"zoo:admin"}},
		ForwardClaims:  []auth.ClaimHeader{{Claim: "sub", Header: "X-User-Id"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	base := serveGateway(t, b.addr, &gateway.Options{Auth: a, Calls: gateway.CallOptions{ForwardHeaders: []string{"X-User-Id"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	bearer := func(tok string) http.Header {
		return http.Header{"Authorization": {"Bearer " + tok}, "X-User-Id": {"forged"}}
	}
	if _, err := connectWith(ctx, t, base+"/mcp", bearer(is.token(t, "https://other.example.com", "zoo", nil))); err == nil {
		t.Error("a token for another audience connected")
	}
	if _, err := connectWith(ctx, t, base+"/mcp", bearer(is.token(t, aud, "read", nil))); err == nil {
		t.Error("a token without the global scope connected")
	}

	cs, err := connectWith(ctx, t, base+"/mcp", bearer(is.token(t, aud, "zoo", nil)))
	if err != nil {
		t.Fatal(err)
	}
	tools, err := cs.ListTools(ctx, nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Fatalf("ListTools: %v", err)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": "leo"}})
	if err != nil || res.IsError {
		t.Fatalf("GetAnimal: %v %+v", err, res)
	}
	if got := b.metadata().Get("x-user-id"); !slices.Equal(got, []string{"alice"}) {
		t.Errorf("x-user-id at the backend = %q, want the token's sub [alice], not the client's header", got)
	}
	if _, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_DeleteAnimal", Arguments: map[string]any{"id": "leo"}}); err == nil {
		t.Error("DeleteAnimal without zoo:admin succeeded")
	}

	admin, err := connectWith(ctx, t, base+"/mcp", bearer(is.token(t, aud, "zoo zoo:admin", nil)))
	if err != nil {
		t.Fatal(err)
	}
	res, err = admin.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_DeleteAnimal", Arguments: map[string]any{"id": "leo"}})
	if err != nil || res.IsError {
		t.Fatalf("DeleteAnimal with zoo:admin: %v %+v", err, res)
	}

	// The raw HTTP answer of a per-tool refusal, in a session and
	// stateless (2026-07-28): the step-up challenge, decided where the call
	// is dispatched.
	want := `Bearer error="insufficient_scope", error_description="the token lacks a scope this tool requires", scope="zoo zoo:admin", resource_metadata="https://zoo.example.com/.well-known/oauth-protected-resource/mcp"`
	user := is.token(t, aud, "zoo", nil)
	deletes := b.deletes()
	for _, stateless := range []bool{false, true} {
		resp, body := postToolCall(t, base, user, "ZooService_DeleteAnimal", stateless)
		if resp.StatusCode != 403 || resp.Header.Get("WWW-Authenticate") != want || !strings.Contains(body, `"code":-32010`) || !strings.Contains(body, `"error":"insufficient_scope"`) {
			t.Errorf("per-tool refusal (stateless %v): %d %s\n got %s\nwant %s", stateless, resp.StatusCode, body, resp.Header.Get("WWW-Authenticate"), want)
		}
	}
	if n := b.deletes(); n != deletes {
		t.Errorf("%d refused deletes reached the backend", n-deletes)
	}

	for _, p := range []string{auth.MetadataPath, auth.MetadataPath + "/mcp"} {
		resp, err := http.Get(base + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), `"resource":"https://zoo.example.com/mcp"`) ||
			!strings.Contains(string(body), `"authorization_servers":["https://as.example.com"]`) {
			t.Errorf("GET %s: %d %s", p, resp.StatusCode, body)
		}
	}
	http.DefaultClient.CloseIdleConnections()
}

// grpcOwn are the keys gRPC itself puts in the metadata a server sees.
var grpcOwn = map[string]bool{":authority": true, "content-type": true, "user-agent": true, "grpc-accept-encoding": true, "grpc-timeout": true}

// TestForwardHeaders: exactly the named headers (all their values, keys
// lowercased) and the static metadata reach the backend; Authorization
// only when named; nothing else.
func TestForwardHeaders(t *testing.T) {
	static, err := gateway.ParseMetadata([]string{"X-Gateway=mcp", "trace-bin=AAEC", "x-gateway=second"})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		forward   []string
		static    metadata.MD
		backendMD metadata.MD // Backend.Metadata, from the config file
		want      metadata.MD
	}{
		{"nothing configured", nil, nil, nil, metadata.MD{}},
		{"named headers", []string{"X-Request-Id", "x-tenant", "X-Absent"}, nil, nil,
			metadata.MD{"x-request-id": {"r1", "r2"}, "x-tenant": {"acme"}}},
		{"static only", nil, static, nil, metadata.MD{"x-gateway": {"mcp", "second"}, "trace-bin": {"\x00\x01\x02"}}},
		{"authorization when named, with static", []string{"Authorization", "X-Tenant"}, static, nil,
			metadata.MD{"authorization": {"Bearer tok"}, "x-tenant": {"acme"}, "x-gateway": {"mcp", "second"}, "trace-bin": {"\x00\x01\x02"}}},
		{"per-backend metadata after the rest", []string{"X-Tenant"}, static, metadata.Pairs("x-tenant", "from-config", "x-region", "eu"),
			metadata.MD{"x-tenant": {"acme", "from-config"}, "x-region": {"eu"}, "x-gateway": {"mcp", "second"}, "trace-bin": {"\x00\x01\x02"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := startRecordingBackend(t)
			backend := dialBackend(t, "zoo", b.addr)
			backend.Metadata = c.backendMD
			_, base := newGateway(t, []gateway.Backend{backend}, &gateway.Options{Calls: gateway.CallOptions{ForwardHeaders: c.forward, Metadata: c.static}})
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			cs, err := connectWith(ctx, t, base+"/mcp", http.Header{
				"Authorization": {"Bearer tok"},
				"X-Request-Id":  {"r1", "r2"},
				"X-Tenant":      {"acme"},
				"X-Other":       {"not named"},
				"Cookie":        {"session=1"},
			})
			if err != nil {
				t.Fatal(err)
			}
			// Twice, to see the shared static metadata is not modified by a
			// call.
			for range 2 {
				res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": "leo"}})
				if err != nil || res.IsError {
					t.Fatalf("GetAnimal: %v %+v", err, res)
				}
				got := metadata.MD{}
				for k, v := range b.metadata() {
					if !grpcOwn[k] {
						got[k] = v
					}
				}
				if !mdEqual(got, c.want) {
					t.Errorf("backend metadata\n got %v\nwant %v", got, c.want)
				}
			}
		})
	}
}

// TestForwardHeadersWebSocket: on /ws the named headers are the upgrade
// request's, and they reach the backend with every call on the
// connection; headers not named do not.
func TestForwardHeadersWebSocket(t *testing.T) {
	b := startRecordingBackend(t)
	base := serveGateway(t, b.addr, &gateway.Options{Calls: gateway.CallOptions{ForwardHeaders: []string{"X-Request-Id"}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "frontdoor", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &testkit.WebSocketTransport{
		URL:    "ws" + strings.TrimPrefix(base, "http") + "/ws",
		Header: http.Header{"X-Request-Id": {"upgrade-1"}, "X-Other": {"not named"}},
	}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	for range 2 {
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": "leo"}})
		if err != nil || res.IsError {
			t.Fatalf("GetAnimal: %v %+v", err, res)
		}
		md := b.metadata()
		if got := md.Get("x-request-id"); !slices.Equal(got, []string{"upgrade-1"}) || len(md.Get("x-other")) != 0 {
			t.Errorf("backend metadata %v: want x-request-id [upgrade-1] and no x-other", md)
		}
	}
}

func mdEqual(a, b metadata.MD) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestForwardHeaderNamesRefused: New refuses the forwarded headers and
// metadata keys internal/grpcmeta refuses (TestCheckForwardHeader there
// has the whole list), and forwarding Authorization while Auth is on.
func TestForwardHeaderNamesRefused(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b := startRecordingBackend(t)
	conn, err := backendconn.Dial(b.addr, backendconn.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := gateway.New(ctx, []gateway.Backend{{Address: b.addr, Conn: conn}}, &gateway.Options{Calls: gateway.CallOptions{ForwardHeaders: []string{"Connection"}}}); err == nil || !strings.Contains(err.Error(), "hop-by-hop") {
		t.Errorf("New with a hop-by-hop header: %v", err)
	}
	if _, err := gateway.New(ctx, []gateway.Backend{{Address: b.addr, Conn: conn}}, &gateway.Options{Calls: gateway.CallOptions{Metadata: metadata.MD{"grpc-status": {"0"}}}}); err == nil {
		t.Error("New with a grpc- metadata key: no error")
	}
	// Token passthrough: Authorization may not be forwarded while
	// authentication is on.
	tokens := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(tokens, []byte("t\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a, err := auth.New(ctx, auth.Config{BearerTokensFile: tokens})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := gateway.New(ctx, []gateway.Backend{{Address: b.addr, Conn: conn}}, &gateway.Options{Auth: a, Calls: gateway.CallOptions{ForwardHeaders: []string{"Authorization"}}}); err == nil || !strings.Contains(err.Error(), "while Auth is on") {
		t.Errorf("New forwarding Authorization with Auth on: %v", err)
	}
}

func TestParseMetadata(t *testing.T) {
	good := []struct {
		in   []string
		want metadata.MD
	}{
		{[]string{"a=1", "A=2", "x-env=prod=eu"}, metadata.MD{"a": {"1", "2"}, "x-env": {"prod=eu"}}},
		{[]string{"k-bin=aGk=", "u-bin=-_8", "e="}, metadata.MD{"k-bin": {"hi"}, "u-bin": {"\xfb\xff"}, "e": {""}}},
	}
	for _, c := range good {
		got, err := gateway.ParseMetadata(c.in)
		if err != nil || !mdEqual(got, c.want) {
			t.Errorf("ParseMetadata(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"novalue", "=v", "grpc-x=1", "bad key=1", "k-bin=not base64!", "k=caf\u00e9", "k=a\nb", "content-type=x"} {
		if _, err := gateway.ParseMetadata([]string{in}); err == nil {
			t.Errorf("ParseMetadata(%q): no error", in)
		}
	}
}
