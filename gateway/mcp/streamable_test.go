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
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// httpClient posts JSON-RPC bodies to a test server the way MCP clients do.
type httpClient struct {
	t   *testing.T
	url string
	c   *http.Client
	sid string
}

func (c *httpClient) do(method, body string, hdr map[string]string) *http.Response {
	c.t.Helper()
	resp, err := c.raw().Send(context.Background(), method, []byte(body), testHeader(hdr))
	if err != nil {
		c.t.Fatal(err)
	}
	return resp
}

// raw is the testkit client c's requests go through.
func (c *httpClient) raw() *testkit.Client {
	return &testkit.Client{URL: c.url, SessionID: c.sid, HTTP: c.c}
}

// testHeader is hdr as an http.Header.
func testHeader(hdr map[string]string) http.Header {
	h := http.Header{}
	for k, v := range hdr {
		h.Set(k, v)
	}
	return h
}

func (c *httpClient) status(method, body string, hdr map[string]string) int {
	c.t.Helper()
	resp := c.do(method, body, hdr)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{}}}`

func (c *httpClient) initialize() {
	c.t.Helper()
	resp := c.do("POST", initBody, nil)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || resp.Header.Get(headerSessionID) == "" {
		c.t.Fatalf("initialize: %d, session %q", resp.StatusCode, resp.Header.Get(headerSessionID))
	}
	c.sid = resp.Header.Get(headerSessionID)
}

// streamableHandler is s.StreamableHTTPHandler(o), failing tb on an error.
func streamableHandler(tb testing.TB, s *Server, o *StreamableHTTPOptions) http.Handler {
	tb.Helper()
	h, err := s.StreamableHTTPHandler(o)
	if err != nil {
		tb.Fatal(err)
	}
	return h
}

// newTestHTTPServer serves h until the test ends, shutting s down first.
func newTestHTTPServer(t *testing.T, s *Server, h http.Handler) string {
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		shutdown(t, s)
		srv.Close()
	})
	return srv.URL
}

func newHTTPTest(t *testing.T, opts *StreamableHTTPOptions) (*Server, *fakeHandler, *httpClient) {
	h := newFakeHandler(t, nil)
	s := NewServer(testImpl, h, nil)
	srv := httptest.NewServer(streamableHandler(t, s, opts))
	t.Cleanup(func() {
		shutdown(t, s)
		srv.Close()
	})
	return s, h, &httpClient{t: t, url: srv.URL, c: srv.Client()}
}

func TestStreamableOriginAndHost(t *testing.T) {
	_, _, c := newHTTPTest(t, &StreamableHTTPOptions{AllowedOrigins: []string{"https://app.example.com"}})
	host := strings.TrimPrefix(c.url, "http://")
	ping := `{"jsonrpc":"2.0","method":"notifications/initialized"}`
	for _, tc := range []struct {
		name   string
		method string
		hdr    map[string]string
		want   int
	}{
		{"no origin", "POST", nil, http.StatusBadRequest}, // passes the guard, then no session
		{"same origin", "POST", map[string]string{"Origin": "http://" + host}, http.StatusBadRequest},
		{"allowed origin", "POST", map[string]string{"Origin": "https://app.example.com"}, http.StatusBadRequest},
		{"foreign origin", "POST", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"null origin", "POST", map[string]string{"Origin": "null"}, http.StatusForbidden},
		{"foreign origin GET", "GET", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"foreign origin DELETE", "DELETE", map[string]string{"Origin": "https://evil.example"}, http.StatusForbidden},
		{"rebinding host", "POST", map[string]string{"Host": "evil.example"}, http.StatusForbidden},
		{"localhost host", "POST", map[string]string{"Host": "localhost:1234"}, http.StatusBadRequest},
		{"ipv6 loopback host", "POST", map[string]string{"Host": "[::1]:80"}, http.StatusBadRequest},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := c.status(tc.method, ping, tc.hdr); got != tc.want {
				t.Errorf("status %d, want %d", got, tc.want)
			}
		})
	}
}

// TestOriginProtectionNonLoopback: off loopback, Host names must be
// allowed (a rebound name is not), IP literals and loopback names pass,
// and an Origin equal to the Host proves nothing.
func TestOriginProtectionNonLoopback(t *testing.T) {
	h := OriginProtection([]string{"https://app.example.com"}, []string{"gateway.example", "mcp.example:8443"},
		http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) }))
	for _, tc := range []struct {
		host, origin string
		want         int
	}{
		{"gateway.example", "", 299},
		{"GATEWAY.example:8080", "", 299},
		{"mcp.example:8443", "", 299},
		{"mcp.example:9999", "", http.StatusForbidden},
		{"evil.example", "", http.StatusForbidden},
		{"10.0.0.1:8080", "", 299},
		{"[fd00::1]:8080", "", 299},
		{"localhost:8080", "", 299},
		{"gateway.example", "http://gateway.example", http.StatusForbidden},
		{"10.0.0.1:8080", "http://10.0.0.1:8080", http.StatusForbidden},
		{"gateway.example", "https://app.example.com", 299},
	} {
		req := httptest.NewRequest("POST", "http://x/mcp", nil)
		req.Host = tc.host
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 80}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != tc.want {
			t.Errorf("Host %q Origin %q: status %d, want %d", tc.host, tc.origin, rec.Code, tc.want)
		}
	}
	// "*" allows any origin; the Host check still applies.
	anyOrigin := OriginProtection([]string{"*"}, nil, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(299) }))
	for host, want := range map[string]int{"10.0.0.1:8080": 299, "evil.example": http.StatusForbidden} {
		req := httptest.NewRequest("POST", "http://x/mcp", nil)
		req.Host = host
		req.Header.Set("Origin", "https://anything.example")
		req = req.WithContext(context.WithValue(req.Context(), http.LocalAddrContextKey, &net.TCPAddr{IP: net.IPv4(10, 0, 0, 1), Port: 80}))
		rec := httptest.NewRecorder()
		anyOrigin.ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf(`--allow-origin "*", Host %q: status %d, want %d`, host, rec.Code, want)
		}
	}
}

// TestCORS: an allowed origin's preflight is answered with what MCP
// clients send, its requests expose the session and auth headers; a
// foreign origin gets no CORS header at all.
func TestCORS(t *testing.T) {
	_, _, c := newHTTPTest(t, &StreamableHTTPOptions{AllowedOrigins: []string{"https://app.example.com"}})
	preflight := func(origin string) *http.Response {
		req, _ := http.NewRequest("OPTIONS", c.url, nil)
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "content-type,mcp-session-id,mcp-protocol-version,authorization")
		resp, err := c.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := preflight("https://app.example.com")
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" {
		t.Errorf("allowed preflight: %d %v", resp.StatusCode, resp.Header)
	}
	for _, want := range []string{"Content-Type", "Authorization", "Mcp-Session-Id", "MCP-Protocol-Version", "Last-Event-ID", "Mcp-Method", "Mcp-Name"} {
		if !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), want) {
			t.Errorf("Access-Control-Allow-Headers %q lacks %s", resp.Header.Get("Access-Control-Allow-Headers"), want)
		}
	}
	if m := resp.Header.Get("Access-Control-Allow-Methods"); !strings.Contains(m, "GET") || !strings.Contains(m, "POST") || !strings.Contains(m, "DELETE") {
		t.Errorf("Access-Control-Allow-Methods %q", m)
	}
	resp = preflight("https://evil.example")
	if resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" || resp.Header.Get("Access-Control-Allow-Headers") != "" {
		t.Errorf("foreign preflight: %d %v", resp.StatusCode, resp.Header)
	}
	r := c.do("POST", initBody, map[string]string{"Origin": "https://app.example.com"})
	r.Body.Close()
	if r.StatusCode != 200 || r.Header.Get("Access-Control-Allow-Origin") != "https://app.example.com" || r.Header.Get("Access-Control-Expose-Headers") != "Mcp-Session-Id, WWW-Authenticate" {
		t.Errorf("allowed POST: %d %v", r.StatusCode, r.Header)
	}
}

func TestStreamableSessions(t *testing.T) {
	_, _, c := newHTTPTest(t, &StreamableHTTPOptions{MaxRequestBytes: 1024})
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if got := c.status("POST", ping, nil); got != http.StatusBadRequest {
		t.Errorf("no session: %d", got)
	}
	c.initialize()
	if got := c.status("POST", ping, nil); got != 200 {
		t.Errorf("ping in session: %d", got)
	}
	if got := c.status("POST", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil); got != http.StatusAccepted {
		t.Errorf("notification: %d", got)
	}
	if got := c.status("POST", `{"jsonrpc":"2.0","id":5,"result":{}}`, nil); got != http.StatusAccepted {
		t.Errorf("client response: %d", got)
	}
	resp := c.do("POST", `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"`+strings.Repeat("x", 2000)+`"}}`, nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusRequestEntityTooLarge || !strings.Contains(string(body), `"code":-32600`) {
		t.Errorf("oversized: %d %s", resp.StatusCode, body)
	}
	if got := c.status("POST", ping, map[string]string{"Accept": "text/event-stream"}); got != http.StatusNotAcceptable {
		t.Errorf("bad Accept: %d", got)
	}
	if got := c.status("PATCH", ping, nil); got != http.StatusMethodNotAllowed {
		t.Errorf("PATCH: %d", got)
	}

	// One GET stream per session.
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(headerSessionID, c.sid)
	get, err := c.c.Do(req)
	if err != nil || get.StatusCode != 200 {
		t.Fatalf("GET: %v %v", err, get)
	}
	if got := get.Header.Get("X-Accel-Buffering"); got != "no" {
		t.Errorf("X-Accel-Buffering = %q", got)
	}
	if got := c.status("GET", "", nil); got != http.StatusConflict {
		t.Errorf("second GET: %d", got)
	}
	cancel()
	get.Body.Close()

	if got := c.status("DELETE", "", nil); got != http.StatusNoContent {
		t.Errorf("DELETE: %d", got)
	}
	if got := c.status("POST", ping, nil); got != http.StatusNotFound {
		t.Errorf("after DELETE: %d", got)
	}
	if got := c.status("DELETE", "", nil); got != http.StatusNotFound {
		t.Errorf("second DELETE: %d", got)
	}
	c.sid = ""
	if got := c.status("GET", "", nil); got != http.StatusBadRequest {
		t.Errorf("GET without session: %d", got)
	}
}

func TestStreamableGETReceivesListChanged(t *testing.T) {
	s, _, c := newHTTPTest(t, nil)
	c.initialize()
	req, _ := http.NewRequest("GET", c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(headerSessionID, c.sid)
	get, err := c.c.Do(req)
	if err != nil || get.StatusCode != 200 {
		t.Fatalf("GET: %v %v", err, get)
	}
	defer get.Body.Close()
	s.NotifyToolListChanged() // the stream is registered before the headers are sent
	br := bufio.NewReader(get.Body)
	line, err := br.ReadString('\n')
	for err == nil && !strings.HasPrefix(line, "data: ") {
		line, err = br.ReadString('\n')
	}
	if !strings.Contains(line, "notifications/tools/list_changed") {
		t.Errorf("got %q, %v", line, err)
	}
}

// TestStreamableGETDetached: an HTTP/1.1 GET stream, which leaves
// net/http once its headers are out (so that an idle one holds none of
// net/http's buffers), is still a well-formed chunked event stream: it
// says up front that the connection closes with it, carries list_changed,
// ends with the last chunk when the session is deleted, and is freed
// (the session may open another) when its client goes away.
func TestStreamableGETDetached(t *testing.T) {
	s, _, c := newHTTPTest(t, nil)
	c.initialize()
	open := func() (net.Conn, *http.Response) {
		t.Helper()
		conn, err := net.Dial("tcp", strings.TrimPrefix(c.url, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequest("GET", c.url, nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set(headerSessionID, c.sid)
		if err := req.Write(conn); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), req)
		if err != nil || resp.StatusCode != 200 {
			t.Fatalf("GET: %v %v", resp, err)
		}
		return conn, resp
	}

	conn, resp := open()
	if !resp.Close || len(resp.TransferEncoding) != 1 || resp.TransferEncoding[0] != "chunked" {
		t.Errorf("GET: Close %v, Transfer-Encoding %q; want a chunked response that closes its connection", resp.Close, resp.TransferEncoding)
	}
	if got := resp.Header.Get("Content-Type"); got != "text/event-stream" {
		t.Errorf("Content-Type = %q", got)
	}
	// The client leaves: the session's stream is free again.
	conn.Close()
	testkit.WaitFor(t, "the stream of the client that left to end", func() bool { return s.NotificationStreams() == 0 })

	conn, resp = open()
	defer conn.Close()
	s.NotifyToolListChanged() // the stream is registered before the headers are sent
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	for err == nil && !strings.HasPrefix(line, "data: ") {
		line, err = br.ReadString('\n')
	}
	if !strings.Contains(line, "notifications/tools/list_changed") {
		t.Errorf("got %q, %v", line, err)
	}
	if got := c.status("DELETE", "", nil); got != http.StatusNoContent {
		t.Fatalf("DELETE: %d", got)
	}
	// The body ends cleanly (the last chunk, not a cut connection), and
	// the connection closes after it.
	if rest, err := io.ReadAll(br); err != nil || len(bytes.TrimSpace(rest)) != 0 {
		t.Errorf("after DELETE: %q, %v; want the end of the stream", rest, err)
	}
	if n, err := conn.Read(make([]byte, 1)); err != io.EOF {
		t.Errorf("after the stream: read %d, %v; want the connection closed", n, err)
	}
}

// TestWaitConnectionsStreamableGET: WaitConnections waits for a detached
// Streamable HTTP GET stream too, as for a detached legacy SSE stream or
// a WebSocket: its connection is net/http's no longer, so nothing else
// waits for the last chunk Shutdown ends it with. When WaitConnections
// returns the stream is over (its listener gone) and its client has the
// clean end of the stream.
func TestWaitConnectionsStreamableGET(t *testing.T) {
	s, _, c := newHTTPTest(t, nil)
	c.initialize()
	_, resp := openDetachedGET(t, c)
	shutdown(t, s)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.WaitConnections(ctx); err != nil {
		t.Fatalf("WaitConnections: %v", err)
	}
	if n := s.NotificationStreams(); n != 0 {
		t.Errorf("WaitConnections returned with %d GET streams open", n)
	}
	if rest, err := io.ReadAll(resp.Body); err != nil || len(bytes.TrimSpace(rest)) != 0 {
		t.Errorf("after Shutdown: %q, %v; want the end of the stream", rest, err)
	}
}

// TestStreamableGETCredentialEnds: a detached GET stream ends, cleanly,
// when the credential that opened it is revoked, as a legacy SSE stream
// and a WebSocket do; the client reopens it with a fresh token.
func TestStreamableGETCredentialEnds(t *testing.T) {
	revoked := make(chan struct{})
	h := newFakeHandler(t, nil)
	s := NewServer(testImpl, h, &ServerOptions{PrincipalOf: func(context.Context) Principal {
		return Principal{ID: "token:1", Revoked: revoked}
	}})
	_, _, c := newHTTPTestWith(t, s, h, nil)
	c.initialize()
	conn, resp := openDetachedGET(t, c)
	close(revoked)
	// A safety net only: a stream that does not end fails the test rather
	// than hanging it.
	safety := time.AfterFunc(10*time.Second, func() { conn.Close() })
	defer safety.Stop()
	if rest, err := io.ReadAll(resp.Body); err != nil || len(bytes.TrimSpace(rest)) != 0 {
		t.Errorf("after the revocation: %q, %v; want the end of the stream", rest, err)
	}
}

// TestStreamableGETOverHTTP2: over HTTP/2 a GET stream stays with
// net/http (there is no connection of its own to take): it carries
// list_changed, does not say Connection: close, and ends when the session
// is deleted.
func TestStreamableGETOverHTTP2(t *testing.T) {
	s := NewServer(testImpl, newFakeHandler(t, nil), nil)
	srv := httptest.NewUnstartedServer(streamableHandler(t, s, nil))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(func() {
		shutdown(t, s)
		srv.Close()
	})
	c := &httpClient{t: t, url: srv.URL, c: srv.Client()}
	c.initialize()
	req, _ := http.NewRequest("GET", c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(headerSessionID, c.sid)
	get, err := c.c.Do(req)
	if err != nil || get.StatusCode != 200 {
		t.Fatalf("GET: %v %v", err, get)
	}
	defer get.Body.Close()
	if get.ProtoMajor != 2 || get.Close {
		t.Errorf("GET: %s, Close %v; want HTTP/2, the connection kept", get.Proto, get.Close)
	}
	s.NotifyToolListChanged() // the stream is registered before the headers are sent
	br := bufio.NewReader(get.Body)
	line, err := br.ReadString('\n')
	for err == nil && !strings.HasPrefix(line, "data: ") {
		line, err = br.ReadString('\n')
	}
	if !strings.Contains(line, "notifications/tools/list_changed") {
		t.Errorf("got %q, %v", line, err)
	}
	if got := c.status("DELETE", "", nil); got != http.StatusNoContent {
		t.Fatalf("DELETE: %d", got)
	}
	if rest, err := io.ReadAll(br); err != nil || len(bytes.TrimSpace(rest)) != 0 {
		t.Errorf("after DELETE: %q, %v; want the end of the stream", rest, err)
	}
}

func TestStreamableIdleExpiry(t *testing.T) {
	var ended atomic.Int32
	s := NewServer(testImpl, newFakeHandler(t, nil), &ServerOptions{SessionObserver: func(_ string, delta int) {
		if delta < 0 {
			ended.Add(1)
		}
	}})
	srv := httptest.NewServer(streamableHandler(t, s, &StreamableHTTPOptions{SessionIdleTimeout: 50 * time.Millisecond}))
	t.Cleanup(func() {
		shutdown(t, s)
		srv.Close()
	})
	c := &httpClient{t: t, url: srv.URL, c: srv.Client()}
	c.initialize()
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if got := c.status("POST", ping, nil); got != 200 {
		t.Fatalf("ping: %d", got)
	}
	// The server says when the session ends; polling it with requests
	// would keep it alive.
	testkit.WaitFor(t, "the idle session to end", func() bool { return ended.Load() == 1 })
	if got := c.status("POST", ping, nil); got != http.StatusNotFound {
		t.Errorf("after idle timeout: %d, want 404", got)
	}
}

func TestStreamableMaxSessions(t *testing.T) {
	_, _, c := newHTTPTest(t, &StreamableHTTPOptions{MaxSessions: 1})
	c.initialize()
	if got := c.status("POST", initBody, nil); got != http.StatusServiceUnavailable {
		t.Errorf("second session: %d", got)
	}
}

func TestStreamableClientDisconnectCancels(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		_, h, c := newHTTPTest(t, nil)
		body := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`
		hdr := map[string]string{}
		if stateless {
			body = `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
			hdr = map[string]string{headerProtocolVersion: Version20260728, headerMethod: "tools/call", "Mcp-Name": "block"}
		} else {
			c.initialize()
		}
		ctx, cancel := context.WithCancel(context.Background())
		raw := c.raw()
		errc := make(chan error, 1)
		go func() {
			resp, err := raw.Send(ctx, http.MethodPost, []byte(body), testHeader(hdr))
			if err == nil {
				resp.Body.Close()
			}
			errc <- err
		}()
		select {
		case <-h.started:
		case <-time.After(5 * time.Second):
			t.Fatal("block never started")
		}
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Errorf("client: %v", err)
		}
		testkit.WaitFor(t, "the condition", func() bool { v, _ := h.lastCtx.Load().(error); return errors.Is(v, context.Canceled) })
	}
}

func TestShutdownCancelsInFlight(t *testing.T) {
	s, h, c := newHTTPTest(t, nil)
	c.initialize()
	done := make(chan int, 1)
	go func() {
		done <- c.status("POST", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`, nil)
	}()
	<-h.started
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := s.Shutdown(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Shutdown: %v", err)
	}
	if got := <-done; got != 200 {
		t.Errorf("cancelled call: %d", got)
	}
	if got := c.status("POST", initBody, nil); got != http.StatusServiceUnavailable {
		t.Errorf("initialize after shutdown: %d", got)
	}
}

// openDetachedGET opens c's session's GET stream on a connection of its
// own, and fails unless the stream is detached (it closes its connection
// at its end); the connection closes with the test.
func openDetachedGET(t *testing.T, c *httpClient) (net.Conn, *http.Response) {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(c.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	req, _ := http.NewRequest("GET", c.url, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set(headerSessionID, c.sid)
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil || resp.StatusCode != 200 || !resp.Close {
		t.Fatalf("GET: %v %v; want a stream that closes its connection (detached)", resp, err)
	}
	return conn, resp
}
