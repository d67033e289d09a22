package gateway_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

const zooAudience = "https://zoo.example.com/mcp"

// startOAuthGateway fronts a recording zoo with a gateway in OAuth mode:
// scope "zoo" for everything, "zoo:admin" also for ZooService_DeleteAnimal.
func startOAuthGateway(t *testing.T, is *testIssuer, leeway time.Duration) (*recordingBackend, string) {
	return startOAuthGatewayMode(t, is, leeway, gateway.ToolModeAuto)
}

func startOAuthGatewayMode(t *testing.T, is *testIssuer, leeway time.Duration, mode gateway.ToolMode) (*recordingBackend, string) {
	t.Helper()
	b := startRecordingBackend(t)
	a, err := auth.New(context.Background(), auth.Config{OAuth: &auth.OAuthConfig{
		JWKSURL:        is.URL,
		Issuer:         "https://as.example.com",
		Resource:       zooAudience,
		RequiredScopes: []string{"zoo"},
		ToolScopes:     map[string][]string{"ZooService_DeleteAnimal": {"zoo:admin"}},
		Leeway:         leeway,
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return b, serveGateway(t, b.addr, &gateway.Options{Auth: a, Search: gateway.SearchOptions{ToolMode: mode}})
}

// startBearerGateway fronts a recording zoo with a gateway whose tokens
// file holds tokens; opts may add settings.
func startBearerGateway(t *testing.T, tokens string, opts *gateway.Options) (*recordingBackend, string, string) {
	t.Helper()
	b := startRecordingBackend(t)
	a, path := bearerAuth(t, tokens)
	if opts == nil {
		opts = &gateway.Options{}
	}
	opts.Auth = a
	return b, serveGateway(t, b.addr, opts), path
}

// connectAs connects the reference client with token over one of the
// transports: "streamable", "sse" or "websocket".
func connectAs(ctx context.Context, t *testing.T, base, transport, token string) *sdk.ClientSession {
	t.Helper()
	cs, err := connectAt(ctx, t, base, transport, token, "")
	if err != nil {
		t.Fatalf("connect over %s: %v", transport, err)
	}
	return cs
}

// connectAt is connectAs to a toolset's endpoints ("" for the whole
// catalog's); without a token it sends no Authorization.
func connectAt(ctx context.Context, t *testing.T, base, transport, token, toolset string) (*sdk.ClientSession, error) {
	t.Helper()
	h := http.Header{}
	if token != "" {
		h.Set("Authorization", "Bearer "+token)
	}
	suffix := ""
	if toolset != "" {
		suffix = "/" + toolset
	}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	hc := &http.Client{Transport: &headerTransport{h: h, rt: tr}}
	var ct sdk.Transport
	switch transport {
	case "streamable":
		ct = &sdk.StreamableClientTransport{Endpoint: base + "/mcp" + suffix, MaxRetries: -1, HTTPClient: hc}
	case "sse":
		ct = &sdk.SSEClientTransport{Endpoint: base + "/sse" + suffix, HTTPClient: hc}
	case "websocket":
		ct = &testkit.WebSocketTransport{URL: "ws" + strings.TrimPrefix(base, "http") + "/ws" + suffix, Header: h}
	}
	client := sdk.NewClient(&sdk.Implementation{Name: "authz", Version: "1"}, nil)
	cs, err := client.Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs, nil
}

// TestToolScopesEveryTransport: a token with the global scope but not the
// tool's is refused DeleteAnimal on every transport, before the backend
// sees it (the hole was /ws, whose frames never passed the HTTP
// middleware), while other tools work; the scoped token may delete.
// WebSocket and SSE, which have no status line, get JSON-RPC error -32010
// whose data carries the step-up facts of the HTTP challenge.
func TestToolScopesEveryTransport(t *testing.T) {
	is := newTestIssuer(t)
	b, base := startOAuthGateway(t, is, 0)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	user := is.token(t, zooAudience, "zoo", nil)
	admin := is.token(t, zooAudience, "zoo zoo:admin", nil)

	for _, transport := range []string{"websocket", "sse", "streamable"} {
		t.Run(transport, func(t *testing.T) {
			cs := connectAs(ctx, t, base, transport, user)
			before := b.deletes()
			_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_DeleteAnimal", Arguments: map[string]any{"id": "leo"}})
			if err == nil {
				t.Fatal("DeleteAnimal without zoo:admin succeeded")
			}
			if transport != "streamable" { // Streamable gets the HTTP 403 (TestOAuthEndToEnd reads it)
				var je *jsonrpc.Error
				if !errors.As(err, &je) || je.Code != -32010 || !strings.Contains(string(je.Data), `"error":"insufficient_scope"`) ||
					!strings.Contains(string(je.Data), `"scope":"zoo zoo:admin"`) || !strings.Contains(string(je.Data), `"resource_metadata":"https://zoo.example.com/.well-known/oauth-protected-resource/mcp"`) {
					t.Errorf("refusal: %v, want JSON-RPC -32010 with the step-up data", err)
				}
			}
			if n := b.deletes(); n != before {
				t.Errorf("the refused DeleteAnimal reached the backend (%d calls)", n-before)
			}
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": "leo"}})
			if err != nil || res.IsError {
				t.Errorf("GetAnimal with the global scope: %v %+v", err, res)
			}
		})
	}
	cs := connectAs(ctx, t, base, "websocket", admin)
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_DeleteAnimal", Arguments: map[string]any{"id": "gerry"}})
	if err != nil || res.IsError || b.deletes() != 1 {
		t.Errorf("DeleteAnimal with zoo:admin over /ws: %v %+v, %d deletes at the backend", err, res, b.deletes())
	}
}

// TestToolScopesCallTool: in search mode, call_tool runs another tool by
// name, and the scopes checked are the target's: the check lives in the
// call path every tool takes, not in front of tools/call.
func TestToolScopesCallTool(t *testing.T) {
	is := newTestIssuer(t)
	b, base := startOAuthGatewayMode(t, is, 0, gateway.ToolModeSearch)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	run := func(token, tool string) (*sdk.CallToolResult, error) {
		cs := connectAs(ctx, t, base, "websocket", token)
		return cs.CallTool(ctx, &sdk.CallToolParams{Name: gateway.CallToolName, Arguments: map[string]any{"name": tool, "arguments": map[string]any{"id": "leo"}}})
	}
	_, err := run(is.token(t, zooAudience, "zoo", nil), "ZooService_DeleteAnimal")
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32010 || b.deletes() != 0 {
		t.Errorf("call_tool of DeleteAnimal without zoo:admin: %v, %d deletes at the backend", err, b.deletes())
	}
	if res, err := run(is.token(t, zooAudience, "zoo", nil), "ZooService_GetAnimal"); err != nil || res.IsError {
		t.Errorf("call_tool of GetAnimal: %v %+v", err, res)
	}
	if res, err := run(is.token(t, zooAudience, "zoo zoo:admin", nil), "ZooService_DeleteAnimal"); err != nil || res.IsError || b.deletes() != 1 {
		t.Errorf("call_tool of DeleteAnimal with zoo:admin: %v %+v", err, res)
	}
}

// wsDial opens /ws with a bearer token and completes the handshake.
func wsDial(t *testing.T, base, token string) *websocket.Conn {
	t.Helper()
	c, _, err := (&websocket.Dialer{Subprotocols: []string{"mcp"}}).Dial("ws"+strings.TrimPrefix(base, "http")+"/ws",
		http.Header{"Authorization": {"Bearer " + token}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	wsSend(t, c, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ws","version":"1"}}}`)
	if _, _, err := c.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	wsSend(t, c, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func wsSend(t *testing.T, c *websocket.Conn, msg string) {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
}

// wsClosed reads until the server closes the connection and returns the
// close frame; the read deadline bounds the wait.
func wsClosed(t *testing.T, c *websocket.Conn, within time.Duration) *websocket.CloseError {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(within))
	for {
		if _, _, err := c.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if !errors.As(err, &ce) {
				t.Fatalf("connection ended without a close frame: %v", err)
			}
			return ce
		}
	}
}

// sseOpen opens /sse with a bearer token and returns the stream and the
// message URL of its endpoint event.
func sseOpen(t *testing.T, base, token string) (*bufio.Reader, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		t.Fatalf("GET /sse: %d", resp.StatusCode)
	}
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading the endpoint event: %v", err)
		}
		if after, ok := strings.CutPrefix(line, "data: "); ok {
			return r, base + strings.TrimSpace(after)
		}
	}
}

// sseRest reads the stream to its end and returns what it held.
func sseRest(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	rest, err := io.ReadAll(r)
	if err != nil {
		t.Fatalf("the stream failed instead of ending: %v", err)
	}
	return string(rest)
}

// TestReauthExpiringToken: a WebSocket and an SSE stream opened with a
// token that expires end when it does (WebSocket with close 1008 and a
// reason), having served calls until then; a request with that token is
// then refused at the door.
func TestReauthExpiringToken(t *testing.T) {
	is := newTestIssuer(t)
	_, base := startOAuthGateway(t, is, time.Millisecond)
	exp := time.Now().Add(2 * time.Second).Truncate(time.Second).Add(time.Second)
	tok := is.token(t, zooAudience, "zoo", map[string]any{"exp": exp.Unix()})

	ws := wsDial(t, base, tok)
	wsSend(t, ws, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"leo"}}}`)
	if _, msg, err := ws.ReadMessage(); err != nil || !strings.Contains(string(msg), `"Leo"`) {
		t.Fatalf("a call before expiry: %s %v", msg, err)
	}
	stream, _ := sseOpen(t, base, tok)
	sid := initSession(t, base, tok)
	get, _ := mcpRequest(t, base, "GET", tok, sid, "")
	if get.StatusCode != 200 {
		t.Fatalf("GET stream of the session: %d", get.StatusCode)
	}
	listen := openListen(t, base, tok)

	ce := wsClosed(t, ws, 10*time.Second)
	if ce.Code != websocket.ClosePolicyViolation || ce.Text != "the access token has expired" {
		t.Errorf("WebSocket closed with %d %q, want 1008 and the reason", ce.Code, ce.Text)
	}
	if time.Now().Before(exp) {
		t.Errorf("closed before the token's expiry")
	}
	if rest := sseRest(t, stream); !strings.Contains(rest, ": the access token has expired") {
		t.Errorf("SSE stream ended with %q, want the expiry comment", rest)
	}
	for name, body := range map[string]io.Reader{"the Streamable GET stream": get.Body, "subscriptions/listen": listen} {
		ended := make(chan error, 1)
		go func() {
			_, err := io.ReadAll(body)
			ended <- err
		}()
		select {
		case err := <-ended:
			if err != nil {
				t.Errorf("%s failed instead of ending: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Errorf("%s outlived the token", name)
		}
	}
	resp, _ := postToolCall(t, base, tok, "ZooService_GetAnimal", true)
	if resp.StatusCode != 401 {
		t.Errorf("a request with the expired token: %d, want 401", resp.StatusCode)
	}
}

// openListen opens a 2026-07-28 subscriptions/listen stream as token and
// reads its acknowledgement.
func openListen(t *testing.T, base, token string) io.Reader {
	t.Helper()
	raw := &testkit.Client{URL: base + "/mcp", Version: "2026-07-28", Header: testkit.Bearer(token)}
	resp, err := raw.Send(context.Background(), http.MethodPost, []byte(`{"jsonrpc":"2.0","id":9,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`), testkit.MethodHeaders("subscriptions/listen", ""))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	for err == nil && !strings.Contains(line, "subscriptions/acknowledged") {
		line, err = r.ReadString('\n')
	}
	if err != nil {
		t.Fatalf("subscriptions/listen: %d, no acknowledgement: %v", resp.StatusCode, err)
	}
	return r
}

// TestReauthRevokedToken: removing a token from the bearer tokens file
// ends the WebSocket and SSE connections it opened (1008 on WebSocket);
// another token's connection carries on.
func TestReauthRevokedToken(t *testing.T) {
	_, base, path := startBearerGateway(t, "alpha\nbeta\n", nil)
	alphaWS := wsDial(t, base, "alpha")
	alphaSSE, _ := sseOpen(t, base, "alpha")
	betaWS := wsDial(t, base, "beta")

	tmp := path + ".new"
	if err := os.WriteFile(tmp, []byte("beta\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	ce := wsClosed(t, alphaWS, 10*time.Second)
	if ce.Code != websocket.ClosePolicyViolation || ce.Text != "the access token has been revoked" {
		t.Errorf("WebSocket closed with %d %q, want 1008 and the reason", ce.Code, ce.Text)
	}
	if rest := sseRest(t, alphaSSE); !strings.Contains(rest, ": the access token has been revoked") {
		t.Errorf("SSE stream ended with %q, want the revocation comment", rest)
	}
	wsSend(t, betaWS, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"leo"}}}`)
	if _, msg, err := betaWS.ReadMessage(); err != nil || !strings.Contains(string(msg), `"Leo"`) {
		t.Errorf("the other token's connection: %s %v", msg, err)
	}
}

// mcpRequest sends one request to /mcp with token (and a session id when
// sid is set) and returns the response and its body.
func mcpRequest(t *testing.T, base, method, token, sid, body string) (*http.Response, string) {
	t.Helper()
	raw := &testkit.Client{URL: base + "/mcp", Header: testkit.Bearer(token), SessionID: sid}
	if sid != "" {
		raw.Version = "2025-11-25"
	}
	var b []byte
	if body != "" {
		b = []byte(body)
	}
	resp, err := raw.Send(context.Background(), method, b, nil)
	if err != nil {
		t.Fatal(err)
	}
	if method == "GET" && resp.StatusCode == 200 {
		t.Cleanup(func() { resp.Body.Close() })
		return resp, ""
	}
	rb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(rb)
}

// initSession opens a Streamable HTTP session as token.
func initSession(t *testing.T, base, token string) string {
	t.Helper()
	raw := &testkit.Client{URL: base + "/mcp", Header: testkit.Bearer(token)}
	if err := raw.Initialize(context.Background(), "2025-11-25"); err != nil {
		t.Fatal(err)
	}
	return raw.SessionID
}

// postToolCall POSTs a tools/call of tool to /mcp as token: in a fresh
// session, or stateless at 2026-07-28.
func postToolCall(t *testing.T, base, token, tool string, stateless bool) (*http.Response, string) {
	t.Helper()
	if !stateless {
		sid := initSession(t, base, token)
		return mcpRequest(t, base, "POST", token, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":{"id":"leo"}}}`)
	}
	raw := &testkit.Client{URL: base + "/mcp", Version: "2026-07-28", Header: testkit.Bearer(token)}
	resp, err := raw.Send(context.Background(), http.MethodPost, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":{"id":"leo"},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`), testkit.MethodHeaders("tools/call", tool))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

// TestSessionOwnership: a session belongs to the principal that opened
// it. Another principal holding its id gets 404 for every use, exactly as
// for a session that does not exist (a call, notifications/cancelled, the
// GET stream, DELETE; a POST into a legacy SSE session), and the session
// is unharmed for its owner. In the scale-out mode the owner is bound
// into the signed session token.
func TestSessionOwnership(t *testing.T) {
	secret := []byte(strings.Repeat("s", 32))
	for _, mode := range []string{"memory", "scale-out"} {
		t.Run(mode, func(t *testing.T) {
			opts := &gateway.Options{}
			if mode == "scale-out" {
				opts.Transports.HTTP = &mcp.StreamableHTTPOptions{SessionSecret: secret}
			}
			b, base, _ := startBearerGateway(t, "alpha\nbeta\n", opts)
			sid := initSession(t, base, "alpha")
			call := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ZooService_DeleteAnimal","arguments":{"id":"leo"}}}`
			notFound := func(what string, resp *http.Response, body string) {
				t.Helper()
				if resp.StatusCode != 404 {
					t.Errorf("%s by another principal: %d %s, want 404", what, resp.StatusCode, body)
				}
			}
			_, unknown := mcpRequest(t, base, "POST", "beta", "no-such-session", call)
			resp, body := mcpRequest(t, base, "POST", "beta", sid, call)
			notFound("tools/call", resp, body)
			if body != unknown {
				t.Errorf("another principal's session answered %q, an unknown one %q: want the same", body, unknown)
			}
			resp, body = mcpRequest(t, base, "POST", "beta", sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`)
			notFound("notifications/cancelled", resp, body)
			resp, body = mcpRequest(t, base, "GET", "beta", sid, "")
			notFound("GET stream", resp, body)
			resp, body = mcpRequest(t, base, "DELETE", "beta", sid, "")
			notFound("DELETE", resp, body)
			if b.deletes() != 0 {
				t.Errorf("another principal's call reached the backend")
			}

			resp, body = mcpRequest(t, base, "POST", "alpha", sid, call)
			if resp.StatusCode != 200 || !strings.Contains(body, `"result"`) || b.deletes() != 1 {
				t.Errorf("the owner's call after the intruder's attempts: %d %s", resp.StatusCode, body)
			}
			if resp, _ := mcpRequest(t, base, "DELETE", "alpha", sid, ""); resp.StatusCode != 204 {
				t.Errorf("the owner's DELETE: %d", resp.StatusCode)
			}
		})
	}

	t.Run("sse", func(t *testing.T) {
		_, base, _ := startBearerGateway(t, "alpha\nbeta\n", nil)
		stream, endpoint := sseOpen(t, base, "alpha")
		post := func(token string) int {
			req, _ := http.NewRequest("POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"sse","version":"1"}}}`))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Authorization", "Bearer "+token)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			return resp.StatusCode
		}
		if got := post("beta"); got != 404 {
			t.Errorf("POST into another principal's SSE session: %d, want 404", got)
		}
		if got := post("alpha"); got != 202 {
			t.Fatalf("the owner's POST: %d, want 202", got)
		}
		// The owner's initialize is answered on the stream: the intruder's
		// never reached it (it would have been answered first).
		for {
			line, err := stream.ReadString('\n')
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(line, "data: ") {
				if !strings.Contains(line, `"protocolVersion":"2024-11-05"`) {
					t.Errorf("first message on the stream: %s", line)
				}
				break
			}
		}
	})
}

// TestOAuthMetadataAllowedHosts: without a configured resource URI the
// protected-resource metadata is built from the request's Host, so it is
// served only to hosts the gateway answers for (loopback names and
// AllowedHosts, here on a loopback listener), never cached, and a page on
// a rebound name gets no document naming it.
func TestOAuthMetadataAllowedHosts(t *testing.T) {
	is := newTestIssuer(t)
	b := startRecordingBackend(t)
	a, err := auth.New(context.Background(), auth.Config{OAuth: &auth.OAuthConfig{
		JWKSURL: is.URL, Issuer: "https://as.example.com", Audience: zooAudience,
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	base := serveGateway(t, b.addr, &gateway.Options{Auth: a, FrontDoor: gateway.FrontDoorOptions{AllowedHosts: []string{"mcp.example.com"}}})
	get := func(host string) (*http.Response, string) {
		t.Helper()
		req, _ := http.NewRequest("GET", base+auth.MetadataPath+"/mcp", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp, string(body)
	}
	for _, host := range []string{"mcp.example.com", "localhost:8080"} {
		resp, body := get(host)
		if resp.StatusCode != 200 || !strings.Contains(body, `"resource":"http://`+host+`/mcp"`) || resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("Host %s: %d %q %s", host, resp.StatusCode, resp.Header.Get("Cache-Control"), body)
		}
	}
	if resp, body := get("evil.example"); resp.StatusCode != 403 || strings.Contains(body, "evil.example") {
		t.Errorf("Host evil.example: %d %s, want 403 and no document naming it", resp.StatusCode, body)
	}
}
