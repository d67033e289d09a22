package testkit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
)

// Client is a raw MCP client over Streamable HTTP: it posts the bytes a
// test gives it with the headers a client sends, and returns what came
// back, for the requests an SDK will not make.
type Client struct {
	URL string // the MCP endpoint, http://HOST:PORT/mcp
	// Header is sent with every request (Authorization, Origin, ...).
	Header http.Header
	// SessionID is sent as Mcp-Session-Id when set; Initialize sets it.
	SessionID string
	// Version is sent as Mcp-Protocol-Version when set; Initialize sets
	// it to the revision negotiated.
	Version string
	// HTTP is the client to send with; nil is http.DefaultClient.
	HTTP *http.Client
}

// Response is an HTTP response read whole.
type Response struct {
	Status int
	Header http.Header
	Body   string
}

// Post sends one JSON-RPC message, or a batch, and reads the answer.
func (c *Client) Post(ctx context.Context, body []byte) (*Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.URL, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if c.SessionID != "" {
		req.Header.Set("Mcp-Session-Id", c.SessionID)
	}
	if c.Version != "" {
		req.Header.Set("Mcp-Protocol-Version", c.Version)
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &Response{Status: resp.StatusCode, Header: resp.Header, Body: string(b)}, nil
}

// Initialize opens a session at revision version (a handshake revision):
// initialize, then notifications/initialized.
func (c *Client) Initialize(ctx context.Context, version string) error {
	c.SessionID, c.Version = "", ""
	r, err := c.Post(ctx, fmt.Appendf(nil, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":%q,"capabilities":{},"clientInfo":{"name":"testkit","version":"1"}}}`, version))
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	sid := r.Header.Get("Mcp-Session-Id")
	if r.Status != http.StatusOK || sid == "" {
		return fmt.Errorf("initialize: %d, session %q: %s", r.Status, sid, r.Body)
	}
	c.SessionID, c.Version = sid, version
	if r, err = c.Post(ctx, []byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		return fmt.Errorf("notifications/initialized: %w", err)
	}
	if r.Status != http.StatusAccepted {
		return fmt.Errorf("notifications/initialized: %d: %s", r.Status, r.Body)
	}
	return nil
}
