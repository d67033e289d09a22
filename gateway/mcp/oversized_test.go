package mcp

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// writeWholeThenRead sends one HTTP/1.1 POST the way clients that write
// the whole body before they read do (the Python SDK's), then reads the
// answer: it fails if the server closed the connection under it.
func writeWholeThenRead(t *testing.T, rawURL, sid, body string) (*http.Response, string, error) {
	t.Helper()
	u, err := url.Parse(rawURL)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(30 * time.Second))
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n%s: %s\r\nContent-Length: %d\r\n\r\n",
		u.RequestURI(), u.Host, headerSessionID, sid, len(body))
	if _, err := io.WriteString(conn, head+body); err != nil {
		return nil, "", fmt.Errorf("writing the request: %w", err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		return nil, "", fmt.Errorf("reading the answer: %w", err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b), nil
}

// TestOversizedBodyAnswered: a body over MaxRequestBytes from a client
// that writes it whole before reading gets the 413 and its JSON-RPC
// error, naming the limit and the setting, instead of a connection
// closed under its upload (the server used to answer on the declared
// length and close); the session goes on. A body past the drain bound is
// answered with the connection closed after it.
func TestOversizedBodyAnswered(t *testing.T) {
	const limit = 4 << 20 // the default
	_, _, c := newHTTPTest(t, &StreamableHTTPOptions{MaxRequestBytes: limit})
	c.initialize()
	big := `{"jsonrpc":"2.0","id":3,"method":"ping","params":{"pad":"` + strings.Repeat("x", 12<<20) + `"}}`
	resp, body, err := writeWholeThenRead(t, c.url, c.sid, big)
	if err != nil {
		t.Fatalf("a client writing %d bytes whole: %v", len(big), err)
	}
	for _, want := range []string{`"code":-32600`, fmt.Sprintf("limit of %d bytes", limit), "--max-request-bytes"} {
		if !strings.Contains(body, want) {
			t.Errorf("the answer %s does not say %q", body, want)
		}
	}
	if resp.StatusCode != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", resp.StatusCode)
	}
	if got := c.status("POST", `{"jsonrpc":"2.0","id":4,"method":"ping"}`, nil); got != http.StatusOK {
		t.Errorf("the session after the oversized body: %d, want 200", got)
	}
	if n := drainLimit(limit); n != 4*limit {
		t.Fatalf("drainLimit(%d) = %d", limit, n)
	}
	resp, _, err = writeWholeThenRead(t, c.url, c.sid, strings.Repeat("x", int(drainLimit(limit))+1))
	if err == nil && (resp.StatusCode != http.StatusRequestEntityTooLarge || !resp.Close) {
		t.Errorf("past the drain bound: %d, close %v; want 413 and the connection closed", resp.StatusCode, resp.Close)
	}
}
