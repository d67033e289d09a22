package mcp

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
)

// TestWebSocketCredentialEnds: the connection loop itself ends a
// connection when its opener's credential ends, whatever the handler does:
// a message read after the expiry is never served (no answer, close 1008),
// and a revocation closes the connection with 1008 and cancels the call in
// flight on it.
func TestWebSocketCredentialEnds(t *testing.T) {
	t.Run("expired", func(t *testing.T) {
		expired := func(context.Context) Principal {
			return Principal{ID: "alice", Expires: time.Now().Add(-time.Second)}
		}
		_, _, url := newWSTest(t, &ServerOptions{PrincipalOf: expired}, nil)
		c, _, err := dialWS(t, url, []string{"mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := c.WriteMessage(websocket.TextMessage, []byte(initBody)); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, msg, err := c.ReadMessage()
		if err == nil {
			t.Fatalf("a message after the expiry was answered: %s", msg)
		}
		if !websocket.IsCloseError(err, websocket.ClosePolicyViolation) {
			t.Fatalf("want close 1008, got %v", err)
		}
	})
	t.Run("revoked", func(t *testing.T) {
		revoked := make(chan struct{})
		who := func(context.Context) Principal { return Principal{ID: "token:1", Revoked: revoked} }
		_, h, url := newWSTest(t, &ServerOptions{PrincipalOf: who}, nil)
		c, _, err := dialWS(t, url, []string{"mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		wsInitialize(t, c)
		if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-h.started:
		case <-time.After(5 * time.Second):
			t.Fatal("the call did not start")
		}
		close(revoked)
		ce := wsCloseError(t, c)
		if ce.Code != websocket.ClosePolicyViolation || ce.Text != reasonRevoked {
			t.Errorf("closed with %d %q, want 1008 %q", ce.Code, ce.Text, reasonRevoked)
		}
		if err, _ := h.lastCtx.Load().(error); err != context.Canceled {
			t.Errorf("the call in flight ended with %v, want it cancelled", err)
		}
	})
	// The expiry ends the connection as a revocation does: close 1008,
	// and the call in flight ended (by its own deadline, the token's
	// expiry, or by the connection's end: they come together).
	t.Run("expires with a call in flight", func(t *testing.T) {
		exp := time.Now().Add(2 * time.Second)
		who := func(context.Context) Principal { return Principal{ID: "alice", Expires: exp} }
		_, h, url := newWSTest(t, &ServerOptions{PrincipalOf: who}, nil)
		c, _, err := dialWS(t, url, []string{"mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		wsInitialize(t, c)
		if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`)); err != nil {
			t.Fatal(err)
		}
		select {
		case <-h.started:
		case <-time.After(5 * time.Second):
			t.Fatal("the call did not start")
		}
		ce := wsCloseError(t, c)
		if ce.Code != websocket.ClosePolicyViolation || ce.Text != reasonExpired {
			t.Errorf("closed with %d %q, want 1008 %q", ce.Code, ce.Text, reasonExpired)
		}
		if time.Now().Before(exp) {
			t.Error("closed before the expiry")
		}
		if err, _ := h.lastCtx.Load().(error); err != context.Canceled && err != context.DeadlineExceeded {
			t.Errorf("the call in flight ended with %v, want it ended", err)
		}
	})
}

// TestCallsEndAtTokenExpiry: a call ends when its caller's token expires
// (TokenExpires, not Expires, which adds the leeway tolerated at the
// door), with an error saying so, over Streamable HTTP in a session and
// stateless, and over WebSocket, whose connection (open until Expires)
// carries on. Before, only a WebSocket's calls ended, with the
// connection, and a POST's ran on to its handler's own deadline.
func TestCallsEndAtTokenExpiry(t *testing.T) {
	const stateless = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"block","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, transport := range []string{"session", "stateless", "websocket"} {
		t.Run(transport, func(t *testing.T) {
			exp := time.Now().Add(1500 * time.Millisecond)
			who := func(context.Context) Principal {
				return Principal{ID: "alice", Expires: exp.Add(time.Minute), TokenExpires: exp}
			}
			var h *fakeHandler
			var body string
			if transport == "websocket" {
				var url string
				_, h, url = newWSTest(t, &ServerOptions{PrincipalOf: who}, nil)
				c, _, err := dialWS(t, url, []string{"mcp"}, nil)
				if err != nil {
					t.Fatal(err)
				}
				wsInitialize(t, c)
				if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`)); err != nil {
					t.Fatal(err)
				}
				_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
				_, msg, err := c.ReadMessage()
				if err != nil {
					t.Fatalf("no answer to the call: %v", err)
				}
				body = string(msg)
				if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":4,"method":"ping"}`)); err != nil {
					t.Fatal(err)
				}
				if _, msg, err := c.ReadMessage(); err != nil || !strings.Contains(string(msg), `"id":4`) {
					t.Errorf("the connection after the call ended: %s %v", msg, err)
				}
			} else {
				h = newFakeHandler(t, nil)
				s := NewServer(testImpl, h, &ServerOptions{PrincipalOf: who})
				_, _, c := newHTTPTestWith(t, s, h, &StreamableHTTPOptions{})
				c.c = &http.Client{Timeout: 10 * time.Second} // a call that never ends fails the test
				msg := stateless
				hdr := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "block"}
				if transport == "session" {
					c.initialize()
					msg, hdr = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`, nil
				}
				resp := c.do("POST", msg, hdr)
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				body = string(b)
			}
			if time.Now().Before(exp) {
				t.Errorf("the call ended before the token expired: %s", body)
			}
			if !strings.Contains(body, "the access token has expired") || !strings.Contains(body, "authenticate again") {
				t.Errorf("the call's answer = %s, want an error saying the token expired", body)
			}
			if err, _ := h.lastCtx.Load().(error); err != context.DeadlineExceeded {
				t.Errorf("the handler's context ended with %v, want its deadline", err)
			}
		})
	}
}

// testPrincipalKey carries the X-Principal header into the context, as the
// gateway's auth middleware carries a validated principal.
type testPrincipalKey struct{}

func withTestPrincipal(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), testPrincipalKey{}, r.Header.Get("X-Principal"))))
	})
}

func testPrincipalOf(ctx context.Context) Principal {
	id, _ := ctx.Value(testPrincipalKey{}).(string)
	return Principal{ID: id}
}

// TestSessionOwner: a session opened by one principal is not found by any
// other, anonymous included (a request that somehow bypassed
// authentication), on Streamable HTTP and legacy SSE; its owner keeps it.
func TestSessionOwner(t *testing.T) {
	s := NewServer(testImpl, newFakeHandler(t, nil), &ServerOptions{PrincipalOf: testPrincipalOf})
	mux := http.NewServeMux()
	mux.Handle("/mcp", withTestPrincipal(streamableHandler(t, s, nil)))
	sse := withTestPrincipal(s.SSEHandler(nil))
	mux.Handle("/sse", sse)
	mux.Handle("/sse/message", sse)
	base := newTestHTTPServer(t, s, mux)

	c := &httpClient{t: t, url: base + "/mcp", c: http.DefaultClient}
	resp := c.do("POST", initBody, map[string]string{"X-Principal": "alice"})
	resp.Body.Close()
	c.sid = resp.Header.Get(headerSessionID)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}`
	for _, who := range []string{"", "bob", "Alice", "alice2"} {
		if got := c.status("POST", call, map[string]string{"X-Principal": who, headerProtocolVersion: Version20250618}); got != http.StatusNotFound {
			t.Errorf("Streamable session of alice, request as %q: %d, want 404", who, got)
		}
	}
	if got := c.status("POST", call, map[string]string{"X-Principal": "alice", headerProtocolVersion: Version20250618}); got != http.StatusOK {
		t.Errorf("the owner's call: %d", got)
	}

	req, _ := http.NewRequest("GET", base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("X-Principal", "alice")
	stream, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Body.Close()
	st := &sseStream{t: t, br: bufio.NewReader(stream.Body)}
	_, endpoint := st.next()
	st.endpoint = base + endpoint
	for _, who := range []string{"", "bob"} {
		if code, _ := st.post(initBody, map[string]string{"X-Principal": who}); code != http.StatusNotFound {
			t.Errorf("SSE session of alice, POST as %q: %d, want 404", who, code)
		}
	}
	if code, _ := st.post(initBody, map[string]string{"X-Principal": "alice"}); code != http.StatusAccepted {
		t.Errorf("the owner's POST: %d, want 202", code)
	}
}

// TestCallsEndAtRevocation: a call over Streamable HTTP (in a session and
// stateless) ends when its caller's credential is revoked, as a
// WebSocket's does, with an error saying why (it used to run on to its
// timeout).
func TestCallsEndAtRevocation(t *testing.T) {
	const stateless = `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"block","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	for _, transport := range []string{"session", "stateless"} {
		t.Run(transport, func(t *testing.T) {
			revoked := make(chan struct{})
			who := func(context.Context) Principal { return Principal{ID: "alice", Revoked: revoked} }
			h := newFakeHandler(t, nil)
			s := NewServer(testImpl, h, &ServerOptions{PrincipalOf: who})
			_, _, c := newHTTPTestWith(t, s, h, &StreamableHTTPOptions{})
			c.c = &http.Client{Timeout: 10 * time.Second} // a call that never ends fails the test
			msg := stateless
			hdr := map[string]string{"MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "block"}
			if transport == "session" {
				c.initialize()
				msg, hdr = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`, nil
			}
			go func() {
				<-h.started
				close(revoked)
			}()
			resp := c.do("POST", msg, hdr)
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if body := string(b); !strings.Contains(body, reasonRevoked) || !strings.Contains(body, "authenticate again") {
				t.Errorf("the call's answer = %s, want an error saying the credential was revoked", body)
			}
		})
	}
}
