package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

func newWSTest(t *testing.T, sopts *ServerOptions, opts *WebSocketOptions) (*Server, *fakeHandler, string) {
	t.Helper()
	h := newFakeHandler(t, &ToolListOptions{PageSize: 3})
	s := NewServer(testImpl, h, sopts)
	srv := httptest.NewServer(s.WebSocketHandler(opts))
	t.Cleanup(func() {
		shutdown(t, s)
		srv.Close()
	})
	return s, h, "ws" + strings.TrimPrefix(srv.URL, "http")
}

func TestInteropWebSocket(t *testing.T) {
	for _, v := range []string{Version20241105, Version20250618, Version20251125, Version20260728} {
		t.Run(v, func(t *testing.T) {
			s, _, url := newWSTest(t, nil, nil)
			ev := &sdkEvents{changed: make(chan struct{}, 1)}
			cs, err := newSDKClient(ev).Connect(context.Background(), &testkit.WebSocketTransport{URL: url}, &sdk.ClientSessionOptions{ProtocolVersion: v})
			if err != nil {
				t.Fatalf("Connect: %v", err)
			}
			exerciseSDK(t, s, cs, ev, v)
			if err := cs.Close(); err != nil {
				t.Errorf("Close: %v", err)
			}
		})
	}
}

// dialWS opens a raw connection; the test speaks JSON-RPC itself.
func dialWS(t *testing.T, url string, protos []string, hdr http.Header) (*websocket.Conn, *http.Response, error) {
	t.Helper()
	d := websocket.Dialer{Subprotocols: protos, HandshakeTimeout: 5 * time.Second}
	c, resp, err := d.Dial(url, hdr)
	if c != nil {
		t.Cleanup(func() { c.Close() })
	}
	return c, resp, err
}

func wsCall(t *testing.T, c *websocket.Conn, msg string) string {
	t.Helper()
	if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
		t.Fatal(err)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, data, err := c.ReadMessage()
	if err != nil {
		t.Fatalf("reading the answer to %s: %v", msg, err)
	}
	return string(data)
}

func wsInitialize(t *testing.T, c *websocket.Conn) {
	t.Helper()
	if got := wsCall(t, c, initBody); !strings.Contains(got, `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize: %s", got)
	}
}

// wsCloseError reads until the server closes and returns its close frame.
func wsCloseError(t *testing.T, c *websocket.Conn) *websocket.CloseError {
	t.Helper()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	for {
		_, _, err := c.ReadMessage()
		if err == nil {
			continue
		}
		var ce *websocket.CloseError
		if !errors.As(err, &ce) {
			t.Fatalf("want a close frame, got %v", err)
		}
		return ce
	}
}

func TestWebSocketHandshake(t *testing.T) {
	_, _, url := newWSTest(t, nil, &WebSocketOptions{AllowedOrigins: []string{"https://app.example.com"}})
	host := strings.TrimPrefix(url, "ws://")
	for _, tc := range []struct {
		name      string
		protos    []string
		origin    string
		wantCode  int    // HTTP status of a refused upgrade, 0 if accepted
		wantProto string // negotiated subprotocol
	}{
		{"mcp", []string{"mcp"}, "", 0, "mcp"},
		{"mcp among others", []string{"graphql-ws", "mcp"}, "", 0, "mcp"},
		{"none offered", nil, "", 0, ""},
		{"other subprotocol", []string{"graphql-ws"}, "", http.StatusBadRequest, ""},
		{"same origin", []string{"mcp"}, "http://" + host, 0, "mcp"},
		{"allowed origin", []string{"mcp"}, "https://app.example.com", 0, "mcp"},
		{"forbidden origin", []string{"mcp"}, "https://evil.example", http.StatusForbidden, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hdr := http.Header{}
			if tc.origin != "" {
				hdr.Set("Origin", tc.origin)
			}
			c, resp, err := dialWS(t, url, tc.protos, hdr)
			if tc.wantCode != 0 {
				if err == nil || resp == nil || resp.StatusCode != tc.wantCode {
					t.Fatalf("want refusal %d, got err=%v resp=%v", tc.wantCode, err, resp)
				}
				return
			}
			if err != nil {
				t.Fatalf("dial: %v", err)
			}
			if got := c.Subprotocol(); got != tc.wantProto {
				t.Errorf("subprotocol %q, want %q", got, tc.wantProto)
			}
			wsInitialize(t, c)
		})
	}

	// Not an upgrade at all.
	resp, err := http.Get("http" + strings.TrimPrefix(url, "ws"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUpgradeRequired {
		t.Errorf("plain GET: %d, want 426", resp.StatusCode)
	}
}

func TestWebSocketRequireSubprotocol(t *testing.T) {
	_, _, url := newWSTest(t, nil, &WebSocketOptions{RequireSubprotocol: true})
	if _, resp, err := dialWS(t, url, nil, nil); err == nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("no subprotocol: err=%v resp=%v, want 400", err, resp)
	}
	if _, _, err := dialWS(t, url, []string{"mcp"}, nil); err != nil {
		t.Errorf("mcp: %v", err)
	}
}

func TestWebSocketFrameRules(t *testing.T) {
	_, _, url := newWSTest(t, nil, &WebSocketOptions{MaxMessageBytes: 1024})
	t.Run("binary", func(t *testing.T) {
		c, _, err := dialWS(t, url, []string{"mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.WriteMessage(websocket.BinaryMessage, []byte(initBody))
		if ce := wsCloseError(t, c); ce.Code != websocket.CloseUnsupportedData {
			t.Errorf("close %d %q, want 1003", ce.Code, ce.Text)
		}
	})
	t.Run("oversized", func(t *testing.T) {
		c, _, err := dialWS(t, url, []string{"mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		wsInitialize(t, c)
		big := `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`
		c.WriteMessage(websocket.TextMessage, []byte(big))
		ce := wsCloseError(t, c)
		if ce.Code != websocket.CloseMessageTooBig || !strings.Contains(ce.Text, "limit of 1024 bytes") {
			t.Errorf("close %d %q, want 1009 naming the limit", ce.Code, ce.Text)
		}
	})
	t.Run("parse error keeps the connection", func(t *testing.T) {
		c, _, err := dialWS(t, url, []string{"mcp"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := wsCall(t, c, `{"jsonrpc":`); !strings.Contains(got, `-32700`) {
			t.Errorf("got %s", got)
		}
		wsInitialize(t, c)
	})
}

// TestWebSocketVanishingClient: a client that disappears mid-call cancels
// the call's ctx (the backend call with it), and nothing leaks (TestMain
// runs goleak).
func TestWebSocketVanishingClient(t *testing.T) {
	_, h, url := newWSTest(t, nil, nil)
	c, _, err := dialWS(t, url, []string{"mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wsInitialize(t, c)
	c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`))
	select {
	case <-h.started:
	case <-time.After(5 * time.Second):
		t.Fatal("block never started")
	}
	c.UnderlyingConn().Close() // no close frame: the peer just vanishes
	testkit.WaitFor(t, "the condition", func() bool { v, _ := h.lastCtx.Load().(error); return errors.Is(v, context.Canceled) })
}

// TestWebSocketDeadPeer: a peer that stops answering pings is dropped and
// its calls cancelled.
func TestWebSocketDeadPeer(t *testing.T) {
	_, h, url := newWSTest(t, nil, &WebSocketOptions{PingInterval: 50 * time.Millisecond, PongTimeout: 50 * time.Millisecond})
	c, _, err := dialWS(t, url, []string{"mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wsInitialize(t, c)
	c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`))
	<-h.started
	// The client never reads again, so it never answers a ping.
	testkit.WaitFor(t, "the condition", func() bool { v, _ := h.lastCtx.Load().(error); return errors.Is(v, context.Canceled) })
}

func TestWebSocketShutdownGoingAway(t *testing.T) {
	s, _, url := newWSTest(t, nil, nil)
	c, _, err := dialWS(t, url, []string{"mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wsInitialize(t, c)
	shutdown(t, s)
	if ce := wsCloseError(t, c); ce.Code != websocket.CloseGoingAway {
		t.Errorf("close %d %q, want 1001", ce.Code, ce.Text)
	}
	if _, resp, err := dialWS(t, url, []string{"mcp"}, nil); err == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("dial after shutdown: err=%v resp=%v, want 503", err, resp)
	}
}

func TestWebSocketCancelAndProgress(t *testing.T) {
	_, h, url := newWSTest(t, nil, nil)
	c, _, err := dialWS(t, url, []string{"mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wsInitialize(t, c)
	c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"block"}}`))
	<-h.started
	c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}`))
	testkit.WaitFor(t, "the condition", func() bool { v, _ := h.lastCtx.Load().(error); return errors.Is(v, context.Canceled) })
	// The cancelled call gets no answer: the next message is the ping's.
	if got := wsCall(t, c, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Errorf("got %s", got)
	}
	var progress []json.RawMessage
	c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":7}}}`))
	for {
		_, data, err := c.ReadMessage()
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(data), `"id":4`) {
			break
		}
		progress = append(progress, data)
	}
	if len(progress) != 2 {
		t.Errorf("progress notifications: %s", progress)
	}
}

// TestWebSocketShutdownDrains: at Shutdown a connection with a call in
// flight stays open, still answering what it reads, until the call ends
// (here cancelled by Shutdown's deadline), and then closes with 1001.
func TestWebSocketShutdownDrains(t *testing.T) {
	s, h, url := newWSTest(t, nil, nil)
	c, _, err := dialWS(t, url, []string{"mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wsInitialize(t, c)
	if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`)); err != nil {
		t.Fatal(err)
	}
	<-h.started
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(ctx) }()
	testkit.WaitFor(t, "Shutdown to begin", s.isClosing)
	if got := wsCall(t, c, `{"jsonrpc":"2.0","id":3,"method":"ping"}`); !strings.Contains(got, `"id":3`) {
		t.Errorf("a ping while draining: %s", got)
	}
	cancel() // Shutdown's deadline: the call is cancelled, the drain ends
	if ce := wsCloseError(t, c); ce.Code != websocket.CloseGoingAway {
		t.Errorf("close %d %q, want 1001", ce.Code, ce.Text)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown: %v, want its ctx's error", err)
	}
}

// TestWebSocketDrainCancelsUnreachable: a WebSocket whose peer stops
// reading while Shutdown drains it has its calls cancelled once a write
// fails, as a legacy SSE stream's are, instead of keeping them (and
// Shutdown) until Shutdown's deadline. Which of two things notices the
// failed write first is a race (the reader, finding the connection
// closed by the failed message; or the ping, failing on it): before, the
// calls were cancelled only when the reader won, so the test tries a
// dozen times (with a ping every millisecond it failed in the first few).
func TestWebSocketDrainCancelsUnreachable(t *testing.T) {
	const grace = 3 * time.Second
	for attempt := range 12 {
		h := newFakeHandler(t, nil)
		s := NewServer(testImpl, h, nil)
		srv := httptest.NewUnstartedServer(s.WebSocketHandler(&WebSocketOptions{WriteTimeout: 100 * time.Millisecond, PingInterval: time.Millisecond}))
		smallSocketBuffers(srv)
		srv.Start()
		d := websocket.Dialer{Subprotocols: []string{"mcp"}, NetDialContext: dialSmall, HandshakeTimeout: 5 * time.Second}
		c, _, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
		if err != nil {
			t.Fatal(err)
		}
		wsInitialize(t, c)
		// From here on the socket is not read: answers the small buffers
		// cannot hold, then a call that waits for its end. The reader
		// takes messages in order, so once the call has started the
		// answers are all on their way.
		for i := range 4 {
			if err := c.WriteMessage(websocket.TextMessage, []byte(backlogCall(int64(10+i)))); err != nil {
				t.Fatal(err)
			}
		}
		if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`)); err != nil {
			t.Fatal(err)
		}
		<-h.started
		ctx, cancel := context.WithTimeout(context.Background(), grace)
		start := time.Now()
		err = s.Shutdown(ctx)
		took := time.Since(start)
		cancel()
		c.Close()
		srv.Close()
		if err != nil {
			t.Fatalf("attempt %d: Shutdown waited %v for the call of a peer whose connection had failed (%v)", attempt, took.Round(time.Millisecond), err)
		}
	}
}
