package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// BenchmarkIdleSession measures what one idle session holds on the server,
// per transport: heap and stack bytes, and goroutines. Clients are raw TCP
// connections that hold no goroutine and almost no memory (their few
// hundred bytes of socket state are included in the figure), so the
// numbers are the server's.
//
// The sessions of the goal "10,000 idle sessions, each holding a GET
// stream or a WebSocket, within 256 MiB" (what remains of 256 MiB beside
// the ~35 MiB at rest, with room for the runtime's own overhead, which
// loadtest's BenchmarkGoalIdleSessions measures on the binary) fail the
// benchmark above idleBudget bytes or one goroutine each (the one that
// reads the connection; everything else an idle stream waits for comes
// by callback).
//
//	go test -run '^$' -bench BenchmarkIdleSession -benchtime 1x ./gateway/mcp/
func BenchmarkIdleSession(b *testing.B) {
	const n = 200
	for _, tc := range []struct {
		name   string
		open   func(b testing.TB, base string) io.Closer // one initialized idle session
		mux    func(tb testing.TB, s *Server) http.Handler
		budget bool // held to idleBudget
	}{
		{"streamable-http", openHTTPSession(false), streamableMux(nil), false},
		{"streamable-http+GET", openHTTPSession(true), streamableMux(nil), true},
		{"streamable-http-token", openHTTPSession(false), streamableMux(&StreamableHTTPOptions{SessionSecret: testSecret}), false},
		{"streamable-http-token+GET", openHTTPSession(true), streamableMux(&StreamableHTTPOptions{SessionSecret: testSecret}), true},
		{"sse", openSSESession, func(_ testing.TB, s *Server) http.Handler { return s.SSEHandler(nil) }, true},
		{"websocket", openWSSession, func(_ testing.TB, s *Server) http.Handler { return s.WebSocketHandler(nil) }, true},
		{"stdio", nil, nil, false},
	} {
		b.Run(tc.name, func(b *testing.B) {
			ts, err := NewToolList(testTools(), nil)
			if err != nil {
				b.Fatal(err)
			}
			s := NewServer(testImpl, &noopHandler{ts: ts}, nil)
			var open func() io.Closer
			var srv *httptest.Server
			if tc.open == nil {
				open = func() io.Closer { return openStdioSession(b, s) }
			} else {
				srv = httptest.NewServer(tc.mux(b, s))
				open = func() io.Closer { return tc.open(b, srv.URL) }
			}
			m0, g0 := settle()
			conns := make([]io.Closer, 0, n)
			for range n {
				conns = append(conns, open())
			}
			m1, g1 := settle()
			// Signed: a figure near zero may come out below it.
			heap := float64(int64(m1.HeapAlloc)-int64(m0.HeapAlloc)) / n
			stack := float64(int64(m1.StackInuse)-int64(m0.StackInuse)) / n
			perSession := heap + stack
			goroutines := float64(g1-g0) / n
			b.ReportMetric(perSession, "bytes/session")
			b.ReportMetric(heap, "heap-bytes/session")
			b.ReportMetric(stack, "stack-bytes/session")
			b.ReportMetric(goroutines, "goroutines/session")
			if tc.budget && perSession > idleBudget {
				b.Errorf("an idle session holds %.0f bytes, over the budget of %d", perSession, idleBudget)
			}
			if tc.budget && goroutines > 1.1 { // .1: the benchmark's own come and go
				b.Errorf("an idle session holds %.2f goroutines, over 1", goroutines)
			}
			for range b.N {
			}
			for _, c := range conns {
				c.Close()
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			s.Shutdown(ctx)
			if srv != nil {
				srv.Close()
			}
		})
	}
}

// idleBudget is what one idle session holding a GET stream or a
// WebSocket may hold (heap and goroutine stacks): 10,000 of them in
// 256 MiB beside the ~35 MiB at rest leave ~22 KiB each, of which the
// runtime's overhead (freed pages not yet returned, stack and heap spans
// in part empty) takes a few.
const idleBudget = 20 << 10

// settle lets goroutines reach their idle state and returns the live heap
// plus stacks, and the goroutine count.
func settle() (runtime.MemStats, int) {
	var last int
	for i := 0; i < 50; i++ {
		time.Sleep(20 * time.Millisecond)
		g := runtime.NumGoroutine()
		if g == last && i > 3 {
			break
		}
		last = g
	}
	for range 6 {
		runtime.GC()
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms, runtime.NumGoroutine()
}

func streamableMux(o *StreamableHTTPOptions) func(tb testing.TB, s *Server) http.Handler {
	return func(tb testing.TB, s *Server) http.Handler { return streamableHandler(tb, s, o) }
}

// rawConn opens a TCP connection and writes req; it reads the response
// head into a stack buffer, keeping nothing.
func rawConn(b testing.TB, base, req string) (net.Conn, string) {
	c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.WriteString(c, req); err != nil {
		b.Fatal(err)
	}
	var buf [2048]byte
	n := 0
	for !bytes.Contains(buf[:n], []byte("\r\n\r\n")) {
		m, err := c.Read(buf[n:])
		if err != nil {
			b.Fatal(err)
		}
		n += m
	}
	return c, string(buf[:n])
}

func openHTTPSession(withGET bool) func(b testing.TB, base string) io.Closer {
	return func(b testing.TB, base string) io.Closer {
		client := &testkit.Client{URL: base, HTTP: &http.Client{Transport: http.DefaultTransport}}
		resp, err := client.Post(context.Background(), []byte(initBody))
		if err != nil {
			b.Fatal(err)
		}
		sid := resp.Header.Get(headerSessionID)
		if !withGET {
			return io.NopCloser(nil)
		}
		c, head := rawConn(b, base, "GET / HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: "+sid+"\r\n\r\n")
		if !strings.HasPrefix(head, "HTTP/1.1 200") {
			b.Fatalf("GET: %s", head)
		}
		return c
	}
}

func openSSESession(b testing.TB, base string) io.Closer {
	c, head := rawConn(b, base, "GET /sse HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n")
	if !strings.HasPrefix(head, "HTTP/1.1 200") {
		b.Fatalf("GET /sse: %s", head)
	}
	i := strings.Index(head, "/sse/message?sessionId=")
	for i < 0 || !strings.Contains(head[i:], "\n") {
		var buf [512]byte
		m, err := c.Read(buf[:])
		if err != nil {
			b.Fatal(err)
		}
		head += string(buf[:m])
		i = strings.Index(head, "/sse/message?sessionId=")
	}
	endpoint, _, _ := strings.Cut(head[i:], "\n")
	req, _ := http.NewRequest("POST", base+endpoint, strings.NewReader(initBody))
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		b.Fatal(err)
	}
	resp.Body.Close()
	return c
}

func openWSSession(b testing.TB, base string) io.Closer {
	c, head := rawConn(b, base, "GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"+
		"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp\r\n\r\n")
	if !strings.HasPrefix(head, "HTTP/1.1 101") {
		b.Fatalf("upgrade: %s", head)
	}
	// A masked text frame (mask key zero: the payload goes as is).
	frame := []byte{0x81, 0x80 | 126, byte(len(initBody) >> 8), byte(len(initBody)), 0, 0, 0, 0}
	if _, err := c.Write(append(frame, initBody...)); err != nil {
		b.Fatal(err)
	}
	var buf [512]byte
	if _, err := c.Read(buf[:]); err != nil { // the initialize result
		b.Fatal(err)
	}
	return c
}

// openStdioSession is the stdio transport's cost per connection (a
// process serves one, but the code is the same per session). Output goes
// to io.Discard so that no client goroutine is counted.
func openStdioSession(b testing.TB, s *Server) io.Closer {
	inR, inW := io.Pipe()
	go s.ServeStdio(context.Background(), inR, io.Discard)
	if _, err := fmt.Fprintln(inW, initBody); err != nil {
		b.Fatal(err)
	}
	return inW
}
