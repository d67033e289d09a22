package testkit

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
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

// Send sends one request to the endpoint (method POST, GET or DELETE;
// body nil for none) with the headers a client sends: Header, Accept, a
// Content-Type with a body, the session and revision when set; then
// extra, whose values replace any of those (a test's chosen or malformed
// header; Host sets the request's Host). The response is returned
// unread, for a test that reads a stream as it arrives; the caller
// closes its body.
func (c *Client) Send(ctx context.Context, method string, body []byte, extra http.Header) (*http.Response, error) {
	req, err := c.newRequest(ctx, method, body)
	if err != nil {
		return nil, err
	}
	for k, v := range extra {
		req.Header[http.CanonicalHeaderKey(k)] = v
	}
	if host := req.Header.Get("Host"); host != "" {
		req.Host = host
		req.Header.Del("Host")
	}
	hc := c.HTTP
	if hc == nil {
		hc = http.DefaultClient
	}
	return hc.Do(req)
}

// NewRequest is the POST of body that Send would make (the same
// headers), unsent: for a benchmark that sends a request per iteration
// through its own http.Client and reads the answer as it needs, with
// nothing in its measured loop beyond the request itself. Header's
// values are shared with the request, not copied, so a benchmark's
// constant headers (MethodHeaders, Bearer) cost nothing per request;
// neither may be changed while a request made from them is in flight.
func (c *Client) NewRequest(ctx context.Context, body []byte) (*http.Request, error) {
	return c.newRequest(ctx, http.MethodPost, body)
}

// The values of the headers every request carries, shared by the
// requests (a request's header values are only ever replaced, never
// changed in place).
var (
	hvJSON   = []string{"application/json"}
	hvAccept = []string{"application/json, text/event-stream"}
)

func (c *Client) newRequest(ctx context.Context, method string, body []byte) (*http.Request, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.URL, rd)
	if err != nil {
		return nil, err
	}
	for k, v := range c.Header {
		req.Header[k] = v
	}
	if body != nil {
		req.Header["Content-Type"] = hvJSON
	}
	req.Header["Accept"] = hvAccept
	if c.SessionID != "" {
		req.Header["Mcp-Session-Id"] = []string{c.SessionID}
	}
	if c.Version != "" {
		req.Header["Mcp-Protocol-Version"] = []string{c.Version}
	}
	return req, nil
}

// Do is Send with the response read whole.
func (c *Client) Do(ctx context.Context, method string, body []byte, extra http.Header) (*Response, error) {
	resp, err := c.Send(ctx, method, body, extra)
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

// Post sends one JSON-RPC message, or a batch, and reads the answer.
func (c *Client) Post(ctx context.Context, body []byte) (*Response, error) {
	return c.Do(ctx, http.MethodPost, body, nil)
}

// Message is the JSON-RPC response the body carries: the body itself, or
// of an event stream the last data line that has an id (the notifications
// before it have none).
func (r *Response) Message() string {
	if !strings.HasPrefix(r.Header.Get("Content-Type"), "text/event-stream") {
		return r.Body
	}
	msg := ""
	for line := range strings.SplitSeq(r.Body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok && strings.Contains(d, `"id"`) {
			msg = d
		}
	}
	return msg
}

// MethodHeaders are the headers a 2026-07-28 client adds to a request:
// Mcp-Method, and Mcp-Name when name is set (the tool's name, the
// resource's URI or the task's id the request names).
func MethodHeaders(method, name string) http.Header {
	h := http.Header{"Mcp-Method": {method}}
	if name != "" {
		h.Set("Mcp-Name", name)
	}
	return h
}

// Bearer is the Authorization header of token.
func Bearer(token string) http.Header {
	return http.Header{"Authorization": {"Bearer " + token}}
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
