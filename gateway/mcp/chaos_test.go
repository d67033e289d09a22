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
)

// chaosSessions is how many sessions TestSessionsChaos opens per
// transport, and chaosMessages how many messages each sends.
const (
	chaosSessions = 24
	chaosMessages = 30
)

// chaosMessage is message j of session i: ping, calls that answer at
// once (with answers of growing size), block until cancelled or send
// progress, a batch, a cancellation of an earlier call.
func chaosMessage(i, j int) string {
	id := 100 + j
	switch (i + j) % 6 {
	case 0:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"ping"}`, id)
	case 1:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"x":"%s"}}}`, id, strings.Repeat("y", 2000*j))
	case 2:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"block"}}`, id)
	case 3:
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":%d}}}`, id, id)
	case 4:
		return fmt.Sprintf(`[{"jsonrpc":"2.0","id":%d,"method":"ping"}]`, id)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d}}`, id-4)
}

// TestSessionsChaos: many WebSocket and legacy SSE sessions (over
// HTTP/1.1, detached, and over HTTP/2) at once, whose clients read, leave
// mid-stream (the connection closed, or only its sending half), or never
// read, while list_changed is sent to all of them and Shutdown, with a
// short grace, comes in the middle: no race, no panic, and WaitConnections
// returns with every session ended (and the package's goleak check finds
// nothing of them left).
func TestSessionsChaos(t *testing.T) {
	for _, transport := range []string{"sse", "sse-h2", "websocket"} {
		t.Run(transport, func(t *testing.T) {
			var open atomic.Int64
			h := newFakeHandler(t, nil)
			h.started = make(chan string, chaosSessions*chaosMessages) // block never waits for the test
			s := NewServer(testImpl, h, &ServerOptions{SessionObserver: func(_ string, d int) { open.Add(int64(d)) }})
			mux := sseMux(s, &SSEOptions{KeepAlive: 5 * time.Millisecond, WriteTimeout: 300 * time.Millisecond})
			mux.Handle("/ws", s.WebSocketHandler(&WebSocketOptions{PingInterval: 5 * time.Millisecond, WriteTimeout: 300 * time.Millisecond}))
			srv := httptest.NewUnstartedServer(mux)
			if transport == "sse-h2" {
				srv.EnableHTTP2 = true
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()

			// Shutdown comes when half the messages are out.
			var sent atomic.Int64
			half := make(chan struct{})
			count := func() {
				if sent.Add(1) == chaosSessions*chaosMessages/2 {
					close(half)
				}
			}
			var wg sync.WaitGroup
			for i := range chaosSessions {
				wg.Go(func() {
					var c chaosClient
					switch transport {
					case "websocket":
						c = dialChaosWS(srv.URL)
					default:
						c = openChaosSSE(srv, transport == "sse-h2")
					}
					if c == nil {
						return // refused: Shutdown came first
					}
					defer c.close()
					if i%4 != 3 { // the fourth of them never reads
						go c.drain()
					}
					c.send(initBody)
					c.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
					for j := range chaosMessages {
						if !c.send(chaosMessage(i, j)) {
							return
						}
						count()
						if j%3 == 0 {
							s.NotifyToolListChanged()
						}
						if j == chaosMessages/2 {
							switch i % 4 {
							case 1:
								c.leave()
							case 2:
								c.halfClose()
							}
						}
					}
				})
			}
			<-half
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			_ = s.Shutdown(ctx) // the blocked calls are cancelled at its deadline
			cancel()
			wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer wcancel()
			if err := s.WaitConnections(wctx); err != nil {
				t.Errorf("WaitConnections: %v", err)
			}
			if n := open.Load(); n != 0 {
				t.Errorf("WaitConnections returned with %d sessions open", n)
			}
			wg.Wait()
		})
	}
}

// chaosClient is one session of TestSessionsChaos, on any transport.
type chaosClient interface {
	send(msg string) bool // false once the session is gone
	drain()               // reads everything until the end
	leave()               // closes the connection
	halfClose()           // closes the sending half (or, over HTTP/2, leaves)
	close()
}

type chaosWS struct{ c *websocket.Conn }

func dialChaosWS(base string) chaosClient {
	d := websocket.Dialer{Subprotocols: []string{"mcp"}, HandshakeTimeout: 5 * time.Second}
	c, _, err := d.Dial("ws"+strings.TrimPrefix(base, "http")+"/ws", nil)
	if err != nil {
		return nil
	}
	return &chaosWS{c}
}

func (w *chaosWS) send(msg string) bool {
	_ = w.c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return w.c.WriteMessage(websocket.TextMessage, []byte(msg)) == nil
}

func (w *chaosWS) drain() {
	for {
		if _, _, err := w.c.ReadMessage(); err != nil {
			return
		}
	}
}

func (w *chaosWS) leave() { w.c.NetConn().Close() }

func (w *chaosWS) halfClose() { _ = w.c.NetConn().(*net.TCPConn).CloseWrite() }

func (w *chaosWS) close() { w.c.Close() }

type chaosSSE struct {
	client   *http.Client
	endpoint string
	body     io.ReadCloser
	conn     net.Conn // HTTP/1.1: the stream's own connection
	cancel   context.CancelFunc
}

func openChaosSSE(srv *httptest.Server, h2 bool) chaosClient {
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	c := &chaosSSE{client: srv.Client(), cancel: cancel}
	var resp *http.Response
	var err error
	if h2 {
		resp, err = c.client.Do(req)
	} else {
		// Over a connection of its own, which the client may close or
		// half-close.
		if c.conn, err = net.Dial("tcp", srv.Listener.Addr().String()); err == nil {
			if err = req.Write(c.conn); err == nil {
				resp, err = http.ReadResponse(bufio.NewReader(c.conn), req)
			}
		}
	}
	if err != nil || resp.StatusCode != http.StatusOK {
		c.close()
		return nil
	}
	c.body = resp.Body
	// The endpoint event, read byte by byte so that nothing after it is
	// taken from the stream.
	var line []byte
	b := make([]byte, 1)
	for !strings.HasPrefix(string(line), "data: ") || !strings.HasSuffix(string(line), "\n") {
		if _, err := resp.Body.Read(b); err != nil {
			c.close()
			return nil
		}
		if line = append(line, b[0]); b[0] == '\n' && !strings.HasPrefix(string(line), "data: ") {
			line = line[:0]
		}
	}
	c.endpoint = srv.URL + strings.TrimSpace(string(line[len("data: "):]))
	return c
}

func (c *chaosSSE) send(msg string) bool {
	resp, err := c.client.Post(c.endpoint, "application/json", strings.NewReader(msg))
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode != http.StatusNotFound
}

func (c *chaosSSE) drain() { _, _ = io.Copy(io.Discard, c.body) }

func (c *chaosSSE) leave() {
	if c.conn != nil {
		c.conn.Close()
	}
	c.cancel()
}

func (c *chaosSSE) halfClose() {
	if c.conn == nil {
		c.cancel()
		return
	}
	_ = c.conn.(*net.TCPConn).CloseWrite()
}

func (c *chaosSSE) close() {
	c.cancel()
	if c.body != nil {
		c.body.Close()
	}
	if c.conn != nil {
		c.conn.Close()
	}
}
