package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

func newSSETest(t *testing.T, opts *SSEOptions) (*Server, *fakeHandler, *httptest.Server) {
	t.Helper()
	h := newFakeHandler(t, &ToolListOptions{PageSize: 3})
	s := NewServer(testImpl, h, nil)
	return s, h, serveSSE(t, s, opts)
}

// sseMux routes s's legacy SSE endpoints, /sse and /sse/message.
func sseMux(s *Server, opts *SSEOptions) *http.ServeMux {
	mux := http.NewServeMux()
	sh := s.SSEHandler(opts)
	mux.Handle("/sse", sh)
	mux.Handle("/sse/message", sh)
	return mux
}

// serveSSE serves s's legacy SSE endpoints for the test, and shuts s down
// at its end.
func serveSSE(t *testing.T, s *Server, opts *SSEOptions) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(sseMux(s, opts))
	t.Cleanup(func() {
		shutdown(t, s)
		srv.Close()
	})
	return srv
}

func TestInteropSSE(t *testing.T) {
	for _, v := range []string{Version20241105, Version20251125} {
		t.Run(v, func(t *testing.T) {
			s, _, srv := newSSETest(t, nil)
			ev := &sdkEvents{changed: make(chan struct{}, 1)}
			cs, err := newSDKClient(ev).Connect(context.Background(), &sdk.SSEClientTransport{Endpoint: srv.URL + "/sse"}, &sdk.ClientSessionOptions{ProtocolVersion: v})
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

// sseStream is a raw client of the legacy transport.
type sseStream struct {
	t        *testing.T
	endpoint string
	body     io.ReadCloser
	br       *bufio.Reader
	cancel   context.CancelFunc
}

func openSSE(t *testing.T, base string) *sseStream {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != 200 {
		cancel()
		t.Fatalf("GET /sse: %v %v", err, resp)
	}
	st := &sseStream{t: t, body: resp.Body, br: bufio.NewReader(resp.Body), cancel: cancel}
	t.Cleanup(st.close)
	name, data := st.next()
	if name != "endpoint" || !strings.HasPrefix(data, "/sse/message?sessionId=") {
		t.Fatalf("first event %q %q", name, data)
	}
	st.endpoint = base + data
	return st
}

func (st *sseStream) close() { st.cancel(); st.body.Close() }

// next returns the next event, skipping keepalive comments.
func (st *sseStream) next() (name, data string) {
	st.t.Helper()
	name, data, err := testkit.NextEvent(st.br)
	if err != nil {
		st.t.Fatalf("reading stream: %v", err)
	}
	return name, data
}

func (st *sseStream) post(body string, hdr map[string]string) (int, string) {
	st.t.Helper()
	req, _ := http.NewRequest("POST", st.endpoint, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		st.t.Fatal(err)
	}
	data, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp.StatusCode, string(data)
}

func TestSSETransport(t *testing.T) {
	_, _, srv := newSSETest(t, &SSEOptions{MaxRequestBytes: 1024, AllowedOrigins: []string{"https://app.example.com"}})
	st := openSSE(t, srv.URL)
	if code, _ := st.post(initBody, nil); code != http.StatusAccepted {
		t.Fatalf("initialize POST: %d", code)
	}
	if _, data := st.next(); !strings.Contains(data, `"protocolVersion":"2025-06-18"`) {
		t.Fatalf("initialize result %s", data)
	}
	for _, tc := range []struct {
		name     string
		body     string
		hdr      map[string]string
		wantCode int
		wantBody string
	}{
		{"oversized", `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", 2000) + `"}}`, nil, http.StatusRequestEntityTooLarge, "exceeds the limit of 1024 bytes"},
		{"parse error", `{"jsonrpc":`, nil, http.StatusBadRequest, "-32700"},
		{"bad content type", `{}`, map[string]string{"Content-Type": "text/plain"}, http.StatusUnsupportedMediaType, "-32600"},
		{"forbidden origin", `{}`, map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden, "origin not allowed"},
		{"allowed origin", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, map[string]string{"Origin": "https://app.example.com"}, http.StatusAccepted, ""},
	} {
		code, body := st.post(tc.body, tc.hdr)
		if code != tc.wantCode || !strings.Contains(body, tc.wantBody) {
			t.Errorf("%s: %d %s, want %d %q", tc.name, code, body, tc.wantCode, tc.wantBody)
		}
	}
	// The session survived every refusal.
	if code, _ := st.post(`{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil); code != http.StatusAccepted {
		t.Fatalf("ping POST: %d", code)
	}
	if _, data := st.next(); data != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Errorf("ping: %s", data)
	}

	// Unknown session, forbidden origin on the stream, wrong method.
	for _, tc := range []struct {
		method, url string
		hdr         map[string]string
		want        int
	}{
		{"POST", srv.URL + "/sse/message?sessionId=nope", nil, http.StatusNotFound},
		{"POST", srv.URL + "/sse/message", nil, http.StatusBadRequest},
		{"GET", srv.URL + "/sse", map[string]string{"Origin": "https://evil.example", "Accept": "text/event-stream"}, http.StatusForbidden},
		{"GET", srv.URL + "/sse", map[string]string{"Accept": "application/json"}, http.StatusNotAcceptable},
		{"PUT", srv.URL + "/sse", nil, http.StatusMethodNotAllowed},
	} {
		req, _ := http.NewRequest(tc.method, tc.url, strings.NewReader(`{}`))
		for k, v := range tc.hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.want {
			t.Errorf("%s %s %v: %d, want %d", tc.method, tc.url, tc.hdr, resp.StatusCode, tc.want)
		}
	}
}

func TestSSEClosingStreamCancels(t *testing.T) {
	_, h, srv := newSSETest(t, nil)
	st := openSSE(t, srv.URL)
	st.post(initBody, nil)
	st.next()
	st.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`, nil)
	select {
	case <-h.started:
	case <-time.After(5 * time.Second):
		t.Fatal("block never started")
	}
	endpoint := st.endpoint
	st.close()
	testkit.WaitFor(t, "the condition", func() bool { v, _ := h.lastCtx.Load().(error); return errors.Is(v, context.Canceled) })
	// The session is gone with its stream.
	testkit.WaitFor(t, "the condition", func() bool {
		resp, err := http.Post(endpoint, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":3,"method":"ping"}`))
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusNotFound
	})
}

func TestSSEMaxSessionsAndKeepAlive(t *testing.T) {
	_, _, srv := newSSETest(t, &SSEOptions{MaxSessions: 1, KeepAlive: 20 * time.Millisecond})
	st := openSSE(t, srv.URL)
	req, _ := http.NewRequest("GET", srv.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("second stream: %d, want 503", resp.StatusCode)
	}
	line, err := st.br.ReadString('\n')
	if err != nil || line != ": keepalive\n" {
		t.Errorf("keepalive: %q %v", line, err)
	}
}

// TestSSEDetached: over HTTP/1.1 a legacy SSE stream leaves net/http once
// its endpoint event is out (its handler returns, so that an idle session
// holds one goroutine, the one reading the connection), and is still a
// well-formed chunked event stream: it says up front that its connection
// closes with it, carries answers and list_changed, ends with the last
// chunk at Shutdown, and its session ends when its client leaves.
func TestSSEDetached(t *testing.T) {
	s, _, srv := newSSETest(t, nil)
	open := func() (net.Conn, *http.Response, *bufio.Reader) {
		t.Helper()
		conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("GET", srv.URL+"/sse", nil)
		req.Header.Set("Accept", "text/event-stream")
		if err := req.Write(conn); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET: %v %v", resp, err)
		}
		return conn, resp, bufio.NewReader(resp.Body)
	}
	conn, resp, br := open()
	if !resp.Close || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Errorf("GET: Close %v, Transfer-Encoding %q; want a chunked response that closes its connection", resp.Close, resp.TransferEncoding)
	}
	st := &sseStream{t: t, br: br, body: resp.Body, cancel: func() {}}
	name, data := st.next()
	if name != "endpoint" {
		t.Fatalf("first event %q %q", name, data)
	}
	st.endpoint = srv.URL + data
	// The frame is named through the method itself, so that a rename
	// cannot leave the test waiting for the end of a frame that no
	// longer exists (which would be at once). "(" finds a frame, not a
	// "created by".
	frame := runtime.FuncForPC(reflect.ValueOf((*sseHandler).stream).Pointer()).Name() + "("
	if !strings.HasSuffix(frame, ".(*sseHandler).stream(") {
		t.Fatalf("the handler's frame is named %q", frame)
	}
	testkit.WaitFor(t, "the GET handler to return", func() bool {
		return !strings.Contains(goroutineStacks(), frame)
	})

	if code, _ := st.post(initBody, nil); code != http.StatusAccepted {
		t.Fatalf("initialize POST: %d", code)
	}
	if _, data := st.next(); !strings.Contains(data, `"protocolVersion"`) {
		t.Fatalf("initialize result %s", data)
	}
	st.post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
	s.NotifyToolListChanged()
	if _, data := st.next(); !strings.Contains(data, "notifications/tools/list_changed") {
		t.Errorf("list_changed: %s", data)
	}

	// The client leaves: its session ends with the stream.
	endpoint := st.endpoint
	conn.Close()
	testkit.WaitFor(t, "the session of the client that left to end", func() bool {
		return postStatus(t, endpoint, `{"jsonrpc":"2.0","id":3,"method":"ping"}`) == http.StatusNotFound
	})

	// Shutdown ends an open stream cleanly: the last chunk, then the
	// connection closed.
	conn, _, br = open()
	defer conn.Close()
	st = &sseStream{t: t, br: br, cancel: func() {}}
	st.next()
	shutdown(t, s)
	if rest, err := io.ReadAll(br); err != nil || len(bytes.TrimSpace(rest)) != 0 {
		t.Errorf("after Shutdown: %q, %v; want the end of the stream", rest, err)
	}
	if n, err := conn.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("after the stream: read %d, %v; want the connection closed", n, err)
	}
}

// TestSSEOverHTTP2: over HTTP/2 a legacy SSE stream stays with net/http
// (there is no connection of its own to take) and works the same: the
// endpoint event, answers, and its end when the client leaves.
func TestSSEOverHTTP2(t *testing.T) {
	s := NewServer(testImpl, newFakeHandler(t, nil), nil)
	srv := httptest.NewUnstartedServer(sseMux(s, nil))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(func() {
		shutdown(t, s)
		srv.Close()
	})
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := srv.Client().Do(req)
	if err != nil || resp.StatusCode != 200 {
		cancel()
		t.Fatalf("GET: %v %v", err, resp)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.Close {
		t.Errorf("GET: %s, Close %v; want HTTP/2, the connection kept", resp.Proto, resp.Close)
	}
	st := &sseStream{t: t, br: bufio.NewReader(resp.Body), body: resp.Body, cancel: cancel}
	_, data := st.next()
	st.endpoint = srv.URL + data
	post := func(body string) int {
		resp, err := srv.Client().Post(st.endpoint, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if code := post(initBody); code != http.StatusAccepted {
		t.Fatalf("initialize POST: %d", code)
	}
	if _, data := st.next(); !strings.Contains(data, `"protocolVersion"`) {
		t.Fatalf("initialize result %s", data)
	}
	if code := post(`{"jsonrpc":"2.0","id":2,"method":"ping"}`); code != http.StatusAccepted {
		t.Fatalf("ping POST: %d", code)
	}
	if _, data := st.next(); data != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Errorf("ping: %s", data)
	}
	cancel()
	testkit.WaitFor(t, "the session of the client that left to end", func() bool {
		return post(`{"jsonrpc":"2.0","id":3,"method":"ping"}`) == http.StatusNotFound
	})
}

// postStatus POSTs body to url and returns the status.
func postStatus(t *testing.T, url, body string) int {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// goroutineStacks is every goroutine's stack, as a panic prints them,
// all of it: a frame cut off by a short buffer would be found absent.
func goroutineStacks() string {
	for n := 1 << 20; ; n *= 2 {
		buf := make([]byte, n)
		if m := runtime.Stack(buf, true); m < n {
			return string(buf[:m])
		}
	}
}

// TestSSEShutdownDrains: at Shutdown a legacy SSE stream with a call in
// flight stays open, still answering what is POSTed to it, until the call
// ends (here cancelled by Shutdown's deadline: its error still reaches
// the stream), and then ends cleanly.
func TestSSEShutdownDrains(t *testing.T) {
	s, h, srv := newSSETest(t, nil)
	st := openSSE(t, srv.URL)
	st.post(initBody, nil)
	st.next()
	if code, _ := st.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`, nil); code != http.StatusAccepted {
		t.Fatalf("tools/call POST: %d", code)
	}
	<-h.started
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Shutdown(ctx) }()
	testkit.WaitFor(t, "Shutdown to begin", s.isClosing)
	if code, _ := st.post(`{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil); code != http.StatusAccepted {
		t.Fatalf("a ping while draining: %d", code)
	}
	if _, data := st.next(); !strings.Contains(data, `"id":3`) {
		t.Errorf("a ping while draining: %s", data)
	}
	cancel() // Shutdown's deadline: the call is cancelled, the drain ends
	if _, data := st.next(); !strings.Contains(data, `"id":2`) {
		t.Errorf("the cancelled call's answer: %s", data)
	}
	if rest, err := io.ReadAll(st.br); err != nil || len(bytes.TrimSpace(rest)) != 0 {
		t.Errorf("after the drain: %q, %v; want the end of the stream", rest, err)
	}
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown: %v, want its ctx's error", err)
	}
}

// TestWaitConnections: after Shutdown, WaitConnections returns only once
// the sessions on connections taken from net/http (a detached SSE stream,
// a WebSocket) have ended, their cancelled calls' replies written first:
// http.Server.Shutdown does not wait for such connections.
func TestWaitConnections(t *testing.T) {
	var open atomic.Int64
	h := newFakeHandler(t, nil)
	s := NewServer(testImpl, h, &ServerOptions{SessionObserver: func(_ string, d int) { open.Add(int64(d)) }})
	mux := sseMux(s, nil)
	mux.Handle("/ws", s.WebSocketHandler(nil))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	block := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`

	st := openSSE(t, srv.URL)
	st.post(initBody, nil)
	st.next()
	st.post(block, nil)
	<-h.started
	c, _, err := dialWS(t, "ws"+strings.TrimPrefix(srv.URL, "http")+"/ws", []string{"mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	wsInitialize(t, c)
	if err := c.WriteMessage(websocket.TextMessage, []byte(block)); err != nil {
		t.Fatal(err)
	}
	<-h.started

	ctx, cancel := context.WithCancel(context.Background())
	cancel() // no grace: the calls are cancelled at once
	if err := s.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Shutdown: %v, want its ctx's error", err)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	if err := s.WaitConnections(wctx); err != nil {
		t.Fatalf("WaitConnections: %v", err)
	}
	if n := open.Load(); n != 0 {
		t.Errorf("WaitConnections returned with %d sessions still open", n)
	}
	if _, data := st.next(); !strings.Contains(data, `"id":2`) {
		t.Errorf("the SSE call's reply: %s", data)
	}
	if _, msg, err := c.ReadMessage(); err != nil || !strings.Contains(string(msg), `"id":2`) {
		t.Errorf("the WebSocket call's reply: %s, %v", msg, err)
	}
}

// TestSSECredentialEnds: a legacy SSE stream ends when its opener's
// credential does, as a WebSocket does (TestWebSocketCredentialEnds):
// the call in flight cancelled, its answer written, then a comment
// saying why and the end of the stream.
func TestSSECredentialEnds(t *testing.T) {
	open := func(t *testing.T, who Principal) (*fakeHandler, *sseStream) {
		h := newFakeHandler(t, nil)
		s := NewServer(testImpl, h, &ServerOptions{PrincipalOf: func(context.Context) Principal { return who }})
		st := openSSE(t, serveSSE(t, s, nil).URL)
		// A safety net only: a stream that does not end fails the test
		// rather than hanging it.
		safety := time.AfterFunc(10*time.Second, st.close)
		t.Cleanup(func() { safety.Stop() })
		return h, st
	}
	t.Run("revoked", func(t *testing.T) {
		revoked := make(chan struct{})
		h, st := open(t, Principal{ID: "token:1", Revoked: revoked})
		st.post(initBody, nil)
		st.next()
		if code, _ := st.post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`, nil); code != http.StatusAccepted {
			t.Fatalf("tools/call POST: %d", code)
		}
		<-h.started
		close(revoked)
		if _, data := st.next(); !strings.Contains(data, `"id":2`) {
			t.Errorf("the cancelled call's answer: %s", data)
		}
		if rest, err := io.ReadAll(st.br); err != nil || string(rest) != ": "+reasonRevoked+"\n\n" {
			t.Errorf("after the revocation: %q, %v; want the reason, then the end of the stream", rest, err)
		}
		if err, _ := h.lastCtx.Load().(error); err != context.Canceled {
			t.Errorf("the call in flight ended with %v, want it cancelled", err)
		}
	})
	t.Run("expired", func(t *testing.T) {
		_, st := open(t, Principal{ID: "alice", Expires: time.Now().Add(-time.Second)})
		if rest, err := io.ReadAll(st.br); err != nil || string(rest) != ": "+reasonExpired+"\n\n" {
			t.Errorf("an expired credential's stream: %q, %v; want the reason, then the end of the stream", rest, err)
		}
	})
}
