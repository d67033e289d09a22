package mcp

import (
	"context"
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
}
