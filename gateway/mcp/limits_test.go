package mcp

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
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
	waitFor(t, func() bool {
		return wsCall(t, c, `{"jsonrpc":"2.0","id":"d","method":"ping"}`) == `{"jsonrpc":"2.0","id":"d","result":{}}`
	})
}

// newHTTPTestWith serves an existing Server over Streamable HTTP.
func newHTTPTestWith(t *testing.T, s *Server, h *fakeHandler, opts *StreamableHTTPOptions) (*Server, *fakeHandler, *httpClient) {
	t.Helper()
	srv := newTestHTTPServer(t, s, s.StreamableHTTPHandler(opts))
	return s, h, &httpClient{t: t, url: srv, c: http.DefaultClient}
}
