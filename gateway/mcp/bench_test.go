package mcp

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// noopHandler answers every call with one short text block.
type noopHandler struct{ ts *ToolSet }

func (h *noopHandler) Tools() *ToolSet { return h.ts }

var noopResult = &CallToolResult{Content: []Content{{Type: "text", Text: `{"ok":true}`}}, StructuredContent: []byte(`{"ok":true}`)}

func (h *noopHandler) CallTool(context.Context, *CallToolRequest) (*CallToolResult, error) {
	return noopResult, nil
}

// discardWriter is a minimal ResponseWriter, so the benchmark measures the
// handler rather than httptest.ResponseRecorder.
type discardWriter struct{ h http.Header }

func (w *discardWriter) Header() http.Header         { return w.h }
func (w *discardWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *discardWriter) WriteHeader(int)             {}

// BenchmarkStreamableToolsCall is one tools/call through the Streamable
// HTTP handler (ServeHTTP called directly, no network) with a no-op tool.
func BenchmarkStreamableToolsCall(b *testing.B) {
	ts, err := NewToolSet([]Tool{{Name: "noop", Description: "Does nothing."}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	s := NewServer(testImpl, &noopHandler{ts: ts}, nil)
	h := s.StreamableHTTPHandler(nil)
	defer s.Shutdown(context.Background())

	// A 2025-11-25 session.
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/mcp", bytes.NewReader([]byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}`)))
	req.Header.Set("Accept", "application/json, text/event-stream")
	h.ServeHTTP(rec, req)
	sid := rec.Header().Get(headerSessionID)

	for _, tc := range []struct {
		name string
		body string
		hdr  map[string]string
	}{
		{"session-2025-11-25", `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"noop","arguments":{"a":1,"b":"two"}}}`,
			map[string]string{headerSessionID: sid, headerProtocolVersion: Version20251125}},
		{"stateless-2026-07-28", `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"noop","arguments":{"a":1,"b":"two"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
			map[string]string{headerProtocolVersion: Version20260728, headerMethod: "tools/call", "Mcp-Name": "noop"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			body := []byte(tc.body)
			rd := bytes.NewReader(body)
			req := httptest.NewRequest("POST", "/mcp", rd)
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Content-Type", "application/json")
			for k, v := range tc.hdr {
				req.Header.Set(k, v)
			}
			w := &discardWriter{h: http.Header{}}
			b.ReportAllocs()
			for b.Loop() {
				rd.Reset(body)
				req.Body = io.NopCloser(rd)
				clear(w.h)
				h.ServeHTTP(w, req)
			}
		})
	}
}
