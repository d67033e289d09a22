package mcp

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// noopHandler answers every call with one short text block.
type noopHandler struct{ ts *ToolList }

func (h *noopHandler) Tools() *ToolList { return h.ts }

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
	ts, err := NewToolList([]Tool{{Name: "noop", Description: "Does nothing."}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	s := NewServer(testImpl, &noopHandler{ts: ts}, nil)
	h := streamableHandler(b, s, nil)
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

// BenchmarkDecodeToolsCall is the scanning a tools/call request costs
// before its tool runs (internal/jsonscan's work): the envelope, validating
// the whole message, its classification and the params' members. "4KiB"
// carries arguments of about 4 KiB of nested objects, arrays, numbers and
// escaped strings.
func BenchmarkDecodeToolsCall(b *testing.B) {
	var args strings.Builder
	args.WriteString(`{`)
	for i := 0; args.Len() < 4096; i++ {
		if i > 0 {
			args.WriteString(`,`)
		}
		fmt.Fprintf(&args, `"field_%d":{"name":"projects/p%d/locations/us-central1/items/x\u00e9\"%d","count":%d,"ratio":-%d.25e-3,"tags":["a","b",null,true,false],"nested":{"ok":true}}`, i, i, i, i*1000, i)
	}
	args.WriteString(`}`)
	for _, tc := range []struct{ name, body string }{
		{"small", `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"noop","arguments":{"a":1,"b":"two"}}}`},
		{"4KiB", `{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"noop","arguments":` + args.String() + `,"_meta":{"progressToken":7}}}`},
	} {
		b.Run(tc.name, func(b *testing.B) {
			data := []byte(tc.body)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				var m message
				if !decodeMessage(data, &m) || m.classify() != kindRequest {
					b.Fatal("not a request")
				}
				var p params
				if err := p.decode(m.Params); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkAppendString escapes a tool result's JSON (the zoo's GetAnimal
// answer, repeated to about 660 bytes) as the text block of a result,
// which every call of a tool with an output schema does once.
func BenchmarkAppendString(b *testing.B) {
	s := `{"animal":{"id":"leo","displayName":"Leo","species":"SPECIES_LION","diet":"DIET_CARNIVORE","birthTime":"2015-03-01T00:00:00Z","weightKg":190.5,"tags":["big","cat","king"],"attributes":{"mane":"golden","roar":"loud"},"keeper":{"name":"Ann","phone":"+1 555 0100"}}}`
	for len(s) < 600 {
		s += s[:100]
	}
	buf := make([]byte, 0, 4096)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		buf = appendString(buf[:0], s)
	}
}
