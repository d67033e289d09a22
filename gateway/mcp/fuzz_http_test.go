package mcp

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/gorilla/websocket"
)

// envelopeSeeds are JSON-RPC messages and near-misses for the transport
// fuzz targets: every method, batches, bad ids, bad UTF-8, truncation.
var envelopeSeeds = []string{
	`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
	`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"a":[1,{"b":null}]},"_meta":{"progressToken":7}}}`,
	`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"panic"}}`,
	`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}]`,
	`{"jsonrpc":"2.0","id":6,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
	`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"\ud800"}}`,
	`{"jsonrpc":"2.0","id":8,"method":"ping"`,
	`[1,2,3]`,
	`{"jsonrpc":"2.0","id":{},"result":{}}`,
}

func fuzzToolList(f *testing.F) *ToolList {
	ts, err := NewToolList([]Tool{
		{Name: "echo", Description: "Echo.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "fail", Description: "Fail.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "panic", Description: "Panic.", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}, nil)
	if err != nil {
		f.Fatal(err)
	}
	return ts
}

// checkJSONBody: a response body is one JSON value, or SSE events whose
// data lines each are.
func checkJSONBody(t *testing.T, contentType string, body []byte) {
	t.Helper()
	if strings.HasPrefix(contentType, "text/event-stream") {
		for line := range strings.Lines(string(body)) {
			if data, ok := strings.CutPrefix(strings.TrimRight(line, "\n"), "data: "); ok && !json.Valid([]byte(data)) {
				t.Fatalf("invalid JSON in an SSE event: %q", data)
			}
		}
		return
	}
	if len(body) > 0 && !json.Valid(body) {
		t.Fatalf("invalid JSON body (%s): %q", contentType, body)
	}
}

// FuzzStreamableHTTP posts arbitrary bodies, with and without a session
// and the stateless revision's headers, to the Streamable HTTP handler:
// it never panics, never answers 5xx, and only ever writes JSON.
func FuzzStreamableHTTP(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add(s, uint8(0))
		f.Add(s, uint8(1))
		f.Add(s, uint8(2))
	}
	s := NewServer(testImpl, echoHandler{fuzzToolList(f)}, nil)
	h := streamableHandler(f, s, nil)
	post := func(body, sid string, stateless bool) *httptest.ResponseRecorder {
		req := httptest.NewRequest("POST", "/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		if stateless {
			req.Header.Set("MCP-Protocol-Version", "2026-07-28")
			req.Header.Set("Mcp-Method", "tools/call")
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	init := post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{}}}`, "", false)
	sid := init.Header().Get("Mcp-Session-Id")
	if sid == "" {
		f.Fatalf("initialize: %d %s", init.Code, init.Body)
	}
	f.Fuzz(func(t *testing.T, body string, mode uint8) {
		var rec *httptest.ResponseRecorder
		switch mode % 3 {
		case 0:
			rec = post(body, sid, false)
		case 1:
			rec = post(body, "", false)
		default:
			rec = post(body, "", true)
		}
		if rec.Code >= 500 {
			t.Fatalf("status %d for %q: %s", rec.Code, body, rec.Body)
		}
		checkJSONBody(t, rec.Header().Get("Content-Type"), rec.Body.Bytes())
	})
}

// FuzzWebSocket sends an arbitrary text frame on an initialized
// WebSocket session: whatever it is, the connection stays usable (a
// ping sent after it is answered) and everything received is JSON.
func FuzzWebSocket(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add(s)
	}
	s := NewServer(testImpl, echoHandler{fuzzToolList(f)}, nil)
	srv := httptest.NewServer(s.WebSocketHandler(nil))
	f.Cleanup(srv.Close)
	url := "ws" + strings.TrimPrefix(srv.URL, "http")
	f.Fuzz(func(t *testing.T, msg string) {
		c, _, err := websocket.DefaultDialer.Dial(url, http.Header{"Sec-WebSocket-Protocol": {"mcp"}})
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		wsInitialize(t, c)
		if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		if err := c.WriteMessage(websocket.TextMessage, []byte(`{"jsonrpc":"2.0","id":"fuzz-ping","method":"ping"}`)); err != nil {
			t.Fatal(err)
		}
		for {
			typ, data, err := c.ReadMessage()
			if err != nil {
				t.Fatalf("the connection ended after %q: %v", msg, err)
			}
			if typ != websocket.TextMessage || !json.Valid(data) {
				t.Fatalf("not a JSON text frame: %q", data)
			}
			if string(data) == `{"jsonrpc":"2.0","id":"fuzz-ping","result":{}}` {
				return
			}
		}
	})
}

// FuzzSSEPost posts an arbitrary body with an arbitrary query (the
// session's own sessionId, then whatever the fuzzer adds) to the legacy
// SSE endpoint: the POST is answered 202, 400, 404 or 413, and the
// session's stream goes on (a ping posted after it is answered on the
// stream, whose every event is JSON).
func FuzzSSEPost(f *testing.F) {
	for _, s := range envelopeSeeds {
		f.Add(s, "")
		f.Add(s, "&sessionId=other")
	}
	f.Add(`{"jsonrpc":"2.0","id":9,"method":"ping"}`, "%zz;&=")
	s := NewServer(testImpl, echoHandler{fuzzToolList(f)}, nil)
	srv := httptest.NewServer(sseMux(s, nil))
	f.Cleanup(srv.Close)
	f.Fuzz(func(t *testing.T, body, query string) {
		st := openSSE(t, srv.URL)
		code, _ := st.post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{}}}`, nil)
		if code != http.StatusAccepted {
			t.Fatalf("initialize: %d", code)
		}
		if _, data := st.next(); !json.Valid([]byte(data)) {
			t.Fatalf("initialize answer %q", data)
		}
		endpoint := st.endpoint
		if _, err := url.Parse(endpoint + query); err == nil && !strings.ContainsAny(query, " \r\n\t#") {
			st.endpoint = endpoint + query
		}
		switch code, _ := st.post(body, nil); code {
		case http.StatusAccepted, http.StatusBadRequest, http.StatusNotFound, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("POST %q ?%q: status %d", body, query, code)
		}
		st.endpoint = endpoint
		if code, _ := st.post(`{"jsonrpc":"2.0","id":"fuzz-ping","method":"ping"}`, nil); code != http.StatusAccepted {
			t.Fatalf("ping after %q: %d", body, code)
		}
		for {
			_, data := st.next()
			if !json.Valid([]byte(data)) {
				t.Fatalf("invalid JSON event %q", data)
			}
			if data == `{"jsonrpc":"2.0","id":"fuzz-ping","result":{}}` {
				return
			}
		}
	})
}
