package mcp

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// listenAs opens a 2026-07-28 subscriptions/listen stream for
// toolsListChanged as who and returns it once acknowledged.
func listenAs(t *testing.T, base, who string) *bufio.Reader {
	t.Helper()
	// The client's timeout is a safety net only: the tests wait for the
	// stream to end.
	c := &httpClient{t: t, url: base, c: &http.Client{Timeout: 30 * time.Second}}
	resp := c.do("POST", `{"jsonrpc":"2.0","id":"l","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		map[string]string{"X-Principal": who, "MCP-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"})
	t.Cleanup(func() { resp.Body.Close() })
	r := bufio.NewReader(resp.Body)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("subscriptions/listen as %q: %d, no acknowledgement: %v", who, resp.StatusCode, err)
		}
		if strings.Contains(line, "notifications/subscriptions/acknowledged") {
			return r
		}
	}
}

// TestListenTimeout: a subscriptions/listen stream ends at ListenTimeout
// with its complete result (the client listens again), and at once,
// without one, when the credential that opened it is revoked; another
// principal's stream is not affected by the revocation.
func TestListenTimeout(t *testing.T) {
	const limit = 300 * time.Millisecond
	revoked := make(chan struct{})
	who := func(ctx context.Context) Principal {
		p := testPrincipalOf(ctx)
		if p.ID == "mallory" {
			p.Revoked = revoked
		}
		return p
	}
	s := NewServer(testImpl, newFakeHandler(t, nil), &ServerOptions{ListenTimeout: limit, PrincipalOf: who})
	base := newTestHTTPServer(t, s, withTestPrincipal(streamableHandler(t, s, nil)))

	start := time.Now()
	alice := listenAs(t, base, "alice")
	mallory := listenAs(t, base, "mallory")
	close(revoked)
	rest, err := io.ReadAll(mallory)
	if err != nil || strings.Contains(string(rest), `"result"`) {
		t.Errorf("a revoked principal's stream should end without a result: %q %v", rest, err)
	}
	rest, err = io.ReadAll(alice)
	if err != nil || !strings.Contains(string(rest), `"id":"l","result":{"resultType":"complete"`) {
		t.Errorf("the stream should end with its complete result: %q %v", rest, err)
	}
	if d := time.Since(start); d < limit {
		t.Errorf("the stream ended after %s, before its limit of %s", d, limit)
	}
}
