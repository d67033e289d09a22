package loadtest_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
	"github.com/grpc-mcp-gateway/gateway/loadtest"
)

// slowStream is a server stream of 1,000 messages with no delay, each
// reported as a progress notification: about 200 KB of events a call.
const slowStream = `{"name":"ZooService_WatchFeedings","arguments":{"count":1000,"interval":"0s"},"_meta":{"progressToken":"p"}}`

// slowReaders is how many calls the slow clients start: enough events
// (about 13 MB) to fill the loopback sockets' buffers many times over.
const slowReaders = 64

// TestSlowReaders starts, on each transport, calls whose events the
// client never reads: over one WebSocket (64 calls in one session), and
// as 64 Streamable HTTP POSTs answered as SSE, each on its own
// connection. The gateway must not queue what it cannot write: its
// memory stays within slowReaderMiB of where it was, the writes that
// block are cut by the write timeout (10 s) and counted
// (grpc_mcp_gateway_slow_clients_dropped_total), and every goroutine of
// those calls ends with the client still connected. A client that reads
// is served meanwhile.
func TestSlowReaders(t *testing.T) {
	const slowReaderMiB = 64
	z := startZoo(t, testkit.FreeAddr(t))
	g := startGateway(t, "--backend", z.addr, "--log-level", "error")
	for _, tc := range []struct {
		name string
		open func(t *testing.T, g *loadtest.Gateway) func()
		// left is the goroutines the gateway may keep for the slow
		// clients: their connections, kept alive between requests.
		left int
		// dropped is the transport label of the slow clients the
		// gateway must count as dropped; empty: none (their calls end).
		dropped string
	}{
		{"websocket", slowWebSocket, 0, "websocket"},
		{"legacy-sse", slowLegacySSE, 0, "sse"},
		{"streamable-http-sse", slowStreamableSSE, slowReaders, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base, err := g.Metric("go_goroutines", "")
			if err != nil {
				t.Fatal(err)
			}
			rss0, _ := g.RSS()
			start := time.Now()
			closeSlow := tc.open(t, g)
			defer closeSlow()

			// A reading client is served while the slow ones block.
			peak := rss0
			bg, err := loadtest.StartBackground(t.Context(), g, 2, 1, loadtest.Unary, 5*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			dropped := testkit.Poll(30*time.Second, func() bool { // another process, which signals nothing
				rss, _ := g.RSS()
				peak = max(peak, rss)
				n, _ := g.Metric("go_goroutines", "")
				return n <= base+6+float64(tc.left) // the reading client's two sessions and their calls
			})
			took := time.Since(start)
			outcomes := bg.Stop()
			if !dropped {
				n, _ := g.Metric("go_goroutines", "")
				t.Fatalf("the slow readers' calls still hold %v goroutines (%v before) after %v", n, base, took)
			}
			if errs := loadtest.Count(outcomes, true); errs > 0 || len(outcomes) == 0 {
				t.Errorf("the reading client: %d calls, %d failed", len(outcomes), errs)
			}
			if tc.dropped != "" {
				if n, err := g.Metric("grpc_mcp_gateway_slow_clients_dropped_total", `transport="`+tc.dropped+`"`); err != nil || n < 1 {
					t.Errorf("slow clients dropped on %s: %v %v (want at least 1)", tc.dropped, n, err)
				}
			}
			growth := float64(peak-rss0) / (1 << 20)
			if growth > slowReaderMiB {
				t.Errorf("RSS grew by %.1f MiB under %d stalled calls (limit %d MiB)", growth, slowReaders, slowReaderMiB)
			}
			t.Logf("%s: %d stalled calls ended after %v, RSS +%.1f MiB at most; the reading client made %d calls meanwhile",
				tc.name, slowReaders, took.Round(100*time.Millisecond), growth, len(outcomes))
		})
	}
}

// slowWebSocket opens a WebSocket session, starts slowReaders stream
// calls on it and never reads again.
func slowWebSocket(t *testing.T, g *loadtest.Gateway) func() {
	d := websocket.Dialer{Subprotocols: []string{"mcp"}}
	c, resp, err := d.Dial("ws"+strings.TrimPrefix(g.Base, "http")+"/ws", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	send := func(s string) {
		if err := c.WriteMessage(websocket.TextMessage, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"` + loadtest.ProtocolVersion + `","capabilities":{},"clientInfo":{"name":"slow","version":"1"}}}`)
	if _, _, err := c.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := range slowReaders {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i+1, slowStream))
	}
	return func() { c.Close() }
}

// slowStreamableSSE posts slowReaders stream calls, each on a connection
// of its own asking for an SSE answer, and never reads the answers. One
// call's events (about 200 KB) fit in the sockets' buffers, so here the
// calls finish; what is left is the connections, kept alive until the
// server's idle timeout.
func slowStreamableSSE(t *testing.T, g *loadtest.Gateway) func() {
	hc := &http.Client{Transport: loadtest.NewTransport()}
	defer hc.CloseIdleConnections()
	s, err := loadtest.DialHTTP(t.Context(), hc, g.Base)
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	for i := range slowReaders {
		c, err := net.Dial("tcp", g.Addr)
		if err != nil {
			t.Fatal(err)
		}
		conns = append(conns, c)
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i+1, slowStream)
		fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"+
			"Mcp-Session-Id: %s\r\nMcp-Protocol-Version: %s\r\nContent-Length: %d\r\n\r\n%s", g.Addr, s.ID(), loadtest.ProtocolVersion, len(body), body)
	}
	return func() {
		for _, c := range conns {
			c.Close()
		}
		_ = s.Close()
	}
}

// slowLegacySSE opens a legacy HTTP+SSE session (GET /sse), reads its
// endpoint event and the answer to initialize, POSTs slowReaders stream
// calls to it and never reads the stream again: every call's events go
// down that one stream.
func slowLegacySSE(t *testing.T, g *loadtest.Gateway) func() {
	c, err := net.Dial("tcp", g.Addr)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(c, "GET /sse HTTP/1.1\r\nHost: %s\r\nAccept: text/event-stream\r\n\r\n", g.Addr)
	r := bufio.NewReader(c)
	var endpoint string
	for endpoint == "" {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading /sse: %v", err)
		}
		if d, ok := strings.CutPrefix(strings.TrimSpace(line), "data: "); ok {
			endpoint = d
		}
	}
	post := func(body string) {
		resp, err := http.Post(g.Base+endpoint, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusAccepted {
			t.Fatalf("POST %s: %d", endpoint, resp.StatusCode)
		}
	}
	post(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"slow","version":"1"}}}`)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("reading /sse: %v", err)
		}
		if strings.Contains(line, `"result"`) {
			break
		}
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	for i := range slowReaders {
		post(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, i+1, slowStream))
	}
	return func() { c.Close() }
}
