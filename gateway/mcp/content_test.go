package mcp

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"
)

// linkHandler has one tool whose result links to a resource that only the
// session that made the call can read, as the gateway's result store does.
type linkHandler struct {
	ts *ToolList
	rs *ResourceSet

	mu  sync.Mutex
	key string // the Session.Key of the last call
}

func newLinkHandler(t testing.TB) *linkHandler {
	t.Helper()
	ts, err := NewToolList([]Tool{{Name: "link", Description: "Links to its result.",
		Meta: json.RawMessage(`{ "anthropic/maxResultSizeChars": 1000 }`)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := NewResourceSet(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &linkHandler{ts: ts, rs: rs}
}

func (h *linkHandler) Tools() *ToolList        { return h.ts }
func (h *linkHandler) Resources() *ResourceSet { return h.rs }

func (h *linkHandler) CallTool(_ context.Context, req *CallToolRequest) (*CallToolResult, error) {
	h.mu.Lock()
	h.key = req.Session.Key
	h.mu.Unlock()
	return &CallToolResult{
		Content: []Content{
			{Type: "text", Text: `{"a":1}`},
			{Type: "text", Text: "The whole result is the resource result://r1."},
			{Type: ContentResourceLink, URI: "result://r1", Name: "result", MIMEType: "application/json", Description: "The whole result.", Size: 12},
		},
		StructuredContent: json.RawMessage(`{"a":1}`),
	}, nil
}

func (h *linkHandler) ReadResource(_ context.Context, req *ReadResourceRequest) (*ResourceContents, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	// Stateless requests have no session key, calls and reads alike.
	stateless := req.Session.ProtocolVersion == Version20260728
	if req.URI != "result://r1" || (req.Session.Key == "") != stateless || req.Session.Key != h.key {
		return nil, ErrResourceNotFound
	}
	return &ResourceContents{URI: req.URI, MIMEType: "application/json", Text: `{"a":1,"b":2}`, Private: true, TTL: 5 * time.Second}, nil
}

// TestResultTranscripts replays testdata/results/*.txtar: resource_link
// blocks from 2025-06-18 on and left out before; a tool's _meta at every
// revision; a private read result with its own TTL at 2026-07-28; and a
// session key on stdio that tools/call and resources/read share.
func TestResultTranscripts(t *testing.T) {
	replayTranscripts(t, "testdata/results/*.txtar", func(t *testing.T, _ string, input []byte) string {
		return runStdioTranscript(t, newLinkHandler(t), input, nil)
	})
}
