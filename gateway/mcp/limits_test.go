package mcp

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

const tooManyCallsMsg = "the limit (MaxConcurrentCalls) is 2"

// TestMaxConcurrentCallsHTTP: a Streamable HTTP session over its limit gets
// a JSON-RPC error for the extra request, not a refused connection.
func TestMaxConcurrentCallsHTTP(t *testing.T) {
	h := newFakeHandler(t, nil)
	s := NewServer(testImpl, h, &ServerOptions{MaxConcurrentCalls: 2})
	_, _, c := newHTTPTestWith(t, s, h, nil)
	c.initialize()
	done := make(chan int, 2)
	for _, id := range []string{`"a"`, `"b"`} {
		go func() {
			done <- c.status("POST", `{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"block"}}`, nil)
		}()
		<-h.started
	}
	resp := c.do("POST", `{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{"name":"echo"}}`, nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"code":-32603`) || !strings.Contains(string(body), tooManyCallsMsg) {
		t.Errorf("third call: %d %s", resp.StatusCode, body)
	}
	for _, id := range []string{`"a"`, `"b"`} {
		c.status("POST", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`+id+`}}`, nil)
	}
	<-done
	<-done
	if got := c.status("POST", `{"jsonrpc":"2.0","id":"d","method":"tools/call","params":{"name":"echo"}}`, nil); got != 200 {
		t.Errorf("after the calls ended: %d", got)
	}
}

func TestMaxConcurrentCallsWebSocket(t *testing.T) {
	_, h, url := newWSTest(t, &ServerOptions{MaxConcurrentCalls: 2}, nil)
	c, _, err := dialWS(t, url, []string{"mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wsInitialize(t, c)
	for _, id := range []string{`"a"`, `"b"`} {
		c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":`+id+`,"method":"tools/call","params":{"name":"block"}}`))
		<-h.started
	}
	if got := wsCall(t, c, `{"jsonrpc":"2.0","id":"c","method":"ping"}`); !strings.Contains(got, tooManyCallsMsg) {
		t.Errorf("third request: %s", got)
	}
	c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a"}}`))
	testkit.WaitFor(t, "the condition", func() bool {
		return wsCall(t, c, `{"jsonrpc":"2.0","id":"d","method":"ping"}`) == `{"jsonrpc":"2.0","id":"d","result":{}}`
	})
}

// newHTTPTestWith serves an existing Server over Streamable HTTP.
func newHTTPTestWith(t *testing.T, s *Server, h *fakeHandler, opts *StreamableHTTPOptions) (*Server, *fakeHandler, *httpClient) {
	t.Helper()
	srv := newTestHTTPServer(t, s, streamableHandler(t, s, opts))
	return s, h, &httpClient{t: t, url: srv, c: http.DefaultClient}
}

// stdioLockstep runs a stdio session and returns a function that sends
// one line and returns the one line it is answered with.
func stdioLockstep(t *testing.T, s *Server) func(line string) string {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	t.Cleanup(func() {
		inW.Close()
		go io.Copy(io.Discard, outR)
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	br := bufio.NewReader(outR)
	return func(line string) string {
		t.Helper()
		go func() { _, _ = io.WriteString(inW, line+"\n") }()
		got, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(got)
	}
}

const init0326 = `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{}}}`

// TestStdioLongLine: a line over MaxMessageBytes is answered with an error
// naming the limit and skipped; the session goes on.
func TestStdioLongLine(t *testing.T) {
	send := stdioLockstep(t, NewServer(testImpl, newFakeHandler(t, nil), &ServerOptions{MaxMessageBytes: 1000}))
	send(init0326)
	long := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", 100_000) + `"}}`
	if got, want := send(long), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message exceeds the limit of 1000 bytes"}}`; got != want {
		t.Errorf("long line: %s\nwant %s", got, want)
	}
	if got, want := send(`{"jsonrpc":"2.0","id":2,"method":"ping"}`), `{"jsonrpc":"2.0","id":2,"result":{}}`; got != want {
		t.Errorf("next line: %s", got)
	}
}

// TestBatchLimits: a batch over MaxBatch is refused whole with one error
// (none of it runs, and a million-element batch of junk costs no more
// than one over the limit); one whose response would exceed
// MaxBatchResponseBytes gets one error instead of the response.
func TestBatchLimits(t *testing.T) {
	send := stdioLockstep(t, NewServer(testImpl, newFakeHandler(t, nil), &ServerOptions{MaxBatch: 3, MaxBatchResponseBytes: 200}))
	send(init0326)
	batch := func(n int, pad string) string {
		parts := make([]string, n)
		for i := range parts {
			parts[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"%s}`, i+1, pad)
		}
		return "[" + strings.Join(parts, ",") + "]"
	}
	if got, want := send(batch(3, "")), `[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","id":2,"result":{}},{"jsonrpc":"2.0","id":3,"result":{}}]`; got != want {
		t.Errorf("batch of 3: %s", got)
	}
	tooMany := `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"batch exceeds the limit of 3 messages"}}`
	if got := send(batch(4, "")); got != tooMany {
		t.Errorf("batch of 4: %s", got)
	}
	if got := send("[" + strings.Repeat("1,", 1_000_000) + "1]"); got != tooMany {
		t.Errorf("batch of a million: %s", got)
	}
	// Three pings with long ids: their answers together pass 200 bytes.
	long := `{"jsonrpc":"2.0","id":"` + strings.Repeat("i", 90) + `","method":"ping"}`
	got := send("[" + long + "," + long + "," + long + "]")
	if !strings.Contains(got, `"code":-32603`) || !strings.Contains(got, "batch response exceeds the limit of 200 bytes") || strings.HasPrefix(got, "[") {
		t.Errorf("oversized response: %s", got)
	}
}

// TestMaxInFlight: the server-wide limit applies across sessions and to
// stateless requests, which have no per-session limit.
func TestMaxInFlight(t *testing.T) {
	h := newFakeHandler(t, nil)
	s := NewServer(testImpl, h, &ServerOptions{MaxInFlight: 2})
	_, _, a := newHTTPTestWith(t, s, h, nil)
	b := *a
	a.initialize()
	b.initialize()
	done := make(chan int, 2)
	for _, c := range []*httpClient{a, &b} {
		go func() {
			done <- c.status("POST", `{"jsonrpc":"2.0","id":"blocked","method":"tools/call","params":{"name":"block"}}`, nil)
		}()
		<-h.started
	}
	stateless := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	resp := a.do("POST", stateless, map[string]string{"Mcp-Session-Id": "", "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call"})
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if !strings.Contains(string(body), `"code":-32603`) || !strings.Contains(string(body), "server busy: 2 requests in flight, the limit") {
		t.Errorf("stateless request over the server's limit: %d %s", resp.StatusCode, body)
	}
	for _, c := range []*httpClient{a, &b} {
		c.status("POST", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"blocked"}}`, nil)
	}
	<-done
	<-done
}

// TestWebSocketMaxConnections: an upgrade beyond MaxConnections gets 503;
// a slot frees when a connection closes.
func TestWebSocketMaxConnections(t *testing.T) {
	_, _, url := newWSTest(t, nil, &WebSocketOptions{MaxConnections: 1})
	c1, _, err := dialWS(t, url, []string{"mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	wsInitialize(t, c1)
	if _, resp, err := dialWS(t, url, []string{"mcp"}, nil); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("second connection: %v %v", err, resp)
	}
	c1.Close()
	testkit.WaitFor(t, "the condition", func() bool {
		c, _, err := dialWS(t, url, []string{"mcp"}, nil)
		if err == nil {
			c.Close()
		}
		return err == nil
	})
}

// TestSessionsPerPrincipal: one principal cannot hold more than
// MaxSessionsPerPrincipal sessions (on Streamable HTTP and on legacy
// SSE), others are not affected, anonymous sessions are bounded by
// MaxSessions only, and ending a session frees its slot.
func TestSessionsPerPrincipal(t *testing.T) {
	s := NewServer(testImpl, newFakeHandler(t, nil), &ServerOptions{PrincipalOf: testPrincipalOf})
	mux := http.NewServeMux()
	mux.Handle("/mcp", withTestPrincipal(streamableHandler(t, s, &StreamableHTTPOptions{MaxSessionsPerPrincipal: 2})))
	sse := withTestPrincipal(s.SSEHandler(&SSEOptions{MaxSessionsPerPrincipal: 1}))
	mux.Handle("/sse", sse)
	mux.Handle("/sse/message", sse)
	base := newTestHTTPServer(t, s, mux)

	c := &httpClient{t: t, url: base + "/mcp", c: http.DefaultClient}
	open := func(who string) (int, string, string) {
		resp := c.do("POST", initBody, map[string]string{"X-Principal": who})
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get(headerSessionID), string(body)
	}
	var alice []string
	for range 2 {
		code, sid, body := open("alice")
		if code != 200 {
			t.Fatalf("alice's session: %d %s", code, body)
		}
		alice = append(alice, sid)
	}
	if code, _, body := open("alice"); code != http.StatusServiceUnavailable || !strings.Contains(body, "too many sessions for this principal (limit 2)") {
		t.Errorf("alice's third session: %d %s", code, body)
	}
	for _, who := range []string{"bob", "", "", ""} {
		if code, _, body := open(who); code != 200 {
			t.Errorf("a session of %q: %d %s", who, code, body)
		}
	}
	c.sid = alice[0]
	if got := c.status("DELETE", "", map[string]string{"X-Principal": "alice"}); got != http.StatusNoContent {
		t.Fatalf("DELETE: %d", got)
	}
	if code, _, body := open("alice"); code != 200 {
		t.Errorf("alice after ending one: %d %s", code, body)
	}

	get := func(who string) *http.Response {
		req, _ := http.NewRequest("GET", base+"/sse", nil)
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("X-Principal", who)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { resp.Body.Close() })
		return resp
	}
	if r := get("alice"); r.StatusCode != 200 {
		t.Fatalf("alice's SSE stream: %d", r.StatusCode)
	}
	if r := get("alice"); r.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("alice's second SSE stream: %d, want 503", r.StatusCode)
	}
	if r := get("bob"); r.StatusCode != 200 {
		t.Errorf("bob's SSE stream: %d", r.StatusCode)
	}
}

// TestSlowReaderCut: a client that sends a call and never reads its large
// answer is disconnected by the write deadline, instead of pinning the
// handler and the response's memory forever. The test waits for the
// server to close the connection (an observable event), not on a clock.
func TestSlowReaderCut(t *testing.T) {
	h := newFakeHandler(t, nil)
	s := NewServer(testImpl, h, nil)
	closed := make(chan struct{}, 1)
	srv := httptest.NewUnstartedServer(streamableHandler(t, s, &StreamableHTTPOptions{WriteTimeout: 200 * time.Millisecond}))
	srv.Config.ConnState = func(_ net.Conn, st http.ConnState) {
		if st == http.StateClosed {
			select {
			case closed <- struct{}{}:
			default:
			}
		}
	}
	srv.Start()
	t.Cleanup(func() {
		shutdown(t, s)
		srv.Close()
	})
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// Echo answers with its arguments twice: an 8 MiB response that no
	// socket buffer absorbs. The request stays under the default
	// MaxRequestBytes and carries the Mcp-Name header 2026-07-28 requires
	// (it was 7 bytes over and had none, and passed on the 413's closed
	// connection, never reaching the write deadline).
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"pad":"` + strings.Repeat("x", 4<<20-300) + `"},` +
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	if len(body) > DefaultMaxMessageBytes {
		t.Fatalf("the request is %d bytes, over the limit of %d", len(body), DefaultMaxMessageBytes)
	}
	fmt.Fprintf(c, "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
		"MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	select {
	case <-closed:
	case <-time.After(time.Minute): // a safety net only
		t.Fatal("the server still holds the connection of a client that does not read")
	}
}

// TestWebSocketConnectionsPerPrincipal: one principal's upgrades beyond
// MaxConnectionsPerPrincipal get 503; another principal's do not.
func TestWebSocketConnectionsPerPrincipal(t *testing.T) {
	s := NewServer(testImpl, newFakeHandler(t, nil), &ServerOptions{PrincipalOf: testPrincipalOf})
	base := newTestHTTPServer(t, s, withTestPrincipal(s.WebSocketHandler(&WebSocketOptions{MaxConnectionsPerPrincipal: 1})))
	url := "ws" + strings.TrimPrefix(base, "http")
	as := func(who string) http.Header { return http.Header{"X-Principal": {who}} }
	c, _, err := dialWS(t, url, []string{"mcp"}, as("alice"))
	if err != nil {
		t.Fatal(err)
	}
	wsInitialize(t, c)
	if _, resp, err := dialWS(t, url, []string{"mcp"}, as("alice")); err == nil || resp == nil || resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("alice's second connection: %v %v", err, resp)
	}
	if c2, _, err := dialWS(t, url, []string{"mcp"}, as("bob")); err != nil {
		t.Errorf("bob's connection: %v", err)
	} else {
		c2.Close()
	}
	c.Close()
}

// TestMaxInFlightPerPrincipal: one principal holds at most its share of
// MaxInFlight (half by default), over all its sessions and stateless
// requests; beyond it the next request gets the "server busy" error
// naming its share, while another principal is still served and holds
// its own share; a request that ends frees its slot. Anonymous requests
// (stdio, or no authentication) are bounded by MaxInFlight alone.
func TestMaxInFlightPerPrincipal(t *testing.T) {
	h := newFakeHandler(t, nil)
	s := NewServer(testImpl, h, &ServerOptions{MaxInFlight: 5, PrincipalOf: testPrincipalOf})
	base := newTestHTTPServer(t, s, withTestPrincipal(streamableHandler(t, s, nil)))
	const block = `{"jsonrpc":"2.0","id":"held","method":"tools/call","params":{"name":"block"}}`
	session := func(who string) *httpClient {
		c := &httpClient{t: t, url: base, c: http.DefaultClient}
		resp := c.do("POST", initBody, map[string]string{"X-Principal": who})
		resp.Body.Close()
		c.sid = resp.Header.Get(headerSessionID)
		return c
	}
	type heldCall struct {
		c   *httpClient
		who string
	}
	var held []heldCall
	done := make(chan int, 4)
	hold := func(who string) {
		c := session(who)
		held = append(held, heldCall{c, who})
		go func() {
			done <- c.status("POST", block, map[string]string{"X-Principal": who, headerProtocolVersion: Version20250618})
		}()
		<-h.started
	}
	stateless := func(who string) string {
		c := &httpClient{t: t, url: base, c: http.DefaultClient}
		resp := c.do("POST", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			map[string]string{"X-Principal": who, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "echo"})
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return string(body)
	}
	const share = "server busy: this principal has 2 requests in flight, its share of the server's requests"

	hold("alice")
	hold("alice")
	if got := stateless("alice"); !strings.Contains(got, `"code":-32603`) || !strings.Contains(got, share) {
		t.Errorf("alice's third request, past her share of 2: %s", got)
	}
	if got := stateless("bob"); !strings.Contains(got, `"result"`) {
		t.Errorf("bob, while alice holds her share: %s", got)
	}
	hold("bob")
	hold("bob")
	if got := stateless("bob"); !strings.Contains(got, share) {
		t.Errorf("bob past his share: %s", got)
	}
	cancel := func(h heldCall) {
		h.c.status("POST", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"held"}}`, map[string]string{"X-Principal": h.who})
		<-done
	}
	cancel(held[0])
	if got := stateless("alice"); !strings.Contains(got, `"result"`) {
		t.Errorf("alice after one of her requests ended: %s", got)
	}
	for _, h := range held[1:] {
		cancel(h)
	}

	// stdio is anonymous: its single user may fill the whole server.
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	served := make(chan error, 1)
	go func() { served <- s.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	send(init0326)
	br := bufio.NewReader(outR)
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	// Five held requests, more than any principal's share of 2.
	for i := range 5 {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"block"}}`, i+1))
		<-h.started
	}
	send(`{"jsonrpc":"2.0","id":"p","method":"ping"}`)
	if got, _ := br.ReadString('\n'); !strings.Contains(got, "server busy: 5 requests in flight, the limit") {
		t.Errorf("stdio past the server's limit: %s", got)
	}
	for i := range 5 {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, i+1))
	}
	inW.Close()
	go io.Copy(io.Discard, br)
	if err := <-served; err != nil {
		t.Error(err)
	}
}

// smallSocketBuffers makes srv's connections keep small kernel buffers,
// so that what a client that stops reading leaves unread is the
// server's own doing, not the sockets' (which on loopback grow to
// megabytes).
func smallSocketBuffers(srv *httptest.Server) {
	srv.Config.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if tc, ok := c.(*net.TCPConn); ok {
			_ = tc.SetReadBuffer(64 << 10)
			_ = tc.SetWriteBuffer(64 << 10)
		}
		return ctx
	}
}

// dialSmall dials addr with small kernel buffers (see smallSocketBuffers).
func dialSmall(ctx context.Context, network, addr string) (net.Conn, error) {
	c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetReadBuffer(64 << 10)
		_ = tc.SetWriteBuffer(64 << 10)
	}
	return c, err
}

// backlogBound is how many calls a client that stops reading may still
// get accepted in the tests below: the answers allowed to wait for the
// stream (maxReplyBacklog), and a margin for what the small socket
// buffers hold and for requests handed over while the last slots went.
const backlogBound = maxReplyBacklog + 32

// backlogCall is tools/call number i, whose answer (its 64 KiB argument,
// twice) no small socket buffer absorbs.
func backlogCall(i int64) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"pad":"%s"}}}`, i, backlogPad)
}

var backlogPad = strings.Repeat("x", 64<<10)

// TestSSEUnreadStreamHoldsPosts: a client that keeps POSTing calls to a
// legacy SSE session whose stream it does not read cannot pile up
// answers waiting for that stream. Once maxReplyBacklog of them wait,
// its POSTs wait too (backpressure), and when the write deadline drops
// the stream they are answered 404. Before, every POST was answered 202
// at once and left a goroutine holding its answer (and its request)
// until the deadline: hundreds a second from one client, without bound.
func TestSSEUnreadStreamHoldsPosts(t *testing.T) {
	s := NewServer(testImpl, newFakeHandler(t, nil), nil)
	srv := httptest.NewUnstartedServer(sseMux(s, &SSEOptions{WriteTimeout: time.Second}))
	smallSocketBuffers(srv)
	srv.Start()
	t.Cleanup(func() {
		shutdown(t, s)
		srv.Close()
	})
	conn, err := dialSmall(context.Background(), "tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req, _ := http.NewRequest("GET", srv.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	if err := req.Write(conn); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET: %v %v", resp, err)
	}
	st := &sseStream{t: t, br: bufio.NewReader(resp.Body), body: resp.Body, cancel: func() {}}
	_, data := st.next()
	st.endpoint = srv.URL + data
	st.post(initBody, nil)
	st.next()
	// From here on the stream is not read.

	const posters = 4
	client := &http.Client{Transport: &http.Transport{DialContext: dialSmall, MaxConnsPerHost: posters}}
	defer client.CloseIdleConnections()
	var accepted, ids atomic.Int64
	var wg sync.WaitGroup
	for range posters {
		wg.Go(func() {
			for accepted.Load() <= backlogBound {
				resp, err := client.Post(st.endpoint, "application/json", strings.NewReader(backlogCall(ids.Add(1))))
				if err != nil {
					t.Error(err)
					return
				}
				resp.Body.Close()
				switch resp.StatusCode {
				case http.StatusAccepted:
					accepted.Add(1)
				case http.StatusNotFound:
					return // the stream was dropped
				default:
					t.Errorf("POST: %d", resp.StatusCode)
					return
				}
			}
		})
	}
	wg.Wait()
	if n := accepted.Load(); n > backlogBound {
		t.Errorf("%d calls accepted on a stream that is not read, want at most %d: their answers pile up", n, backlogBound)
	}
}

// TestWebSocketUnreadHoldsReads: a WebSocket client that keeps sending
// calls and never reads cannot pile up answers waiting for the socket:
// once maxReplyBacklog of them wait, the server stops reading (so the
// client's writes block, as TCP's flow control does), until the write
// deadline drops the connection. Before, every message was read and left
// a goroutine holding its answer until the deadline, without bound.
func TestWebSocketUnreadHoldsReads(t *testing.T) {
	s := NewServer(testImpl, newFakeHandler(t, nil), nil)
	srv := httptest.NewUnstartedServer(s.WebSocketHandler(&WebSocketOptions{WriteTimeout: time.Second}))
	smallSocketBuffers(srv)
	srv.Start()
	t.Cleanup(func() {
		shutdown(t, s)
		srv.Close()
	})
	d := websocket.Dialer{Subprotocols: []string{"mcp"}, NetDialContext: dialSmall, HandshakeTimeout: 5 * time.Second}
	c, _, err := d.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	wsInitialize(t, c)
	// From here on the socket is not read.
	sent := 0
	for ; sent <= backlogBound; sent++ {
		_ = c.SetWriteDeadline(time.Now().Add(30 * time.Second)) // a safety net only
		if err := c.WriteMessage(websocket.TextMessage, []byte(backlogCall(int64(sent)+2))); err != nil {
			break // the server dropped the connection
		}
	}
	if sent > backlogBound {
		t.Errorf("%d calls taken from a client that does not read, want at most %d: their answers pile up", sent, backlogBound)
	}
}
