package mcp

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
)

// resourceHandler adds resources to the test Handler.
type resourceHandler struct {
	*fakeHandler
	rs atomic.Pointer[ResourceSet]
}

func newResourceHandler(t testing.TB) *resourceHandler {
	t.Helper()
	rs, err := NewResourceSet([]Resource{
		{URI: "grpc://a/x.v1.One", Name: "x.v1.One", Title: "One", Description: "The first.", MIMEType: "text/x-protobuf"},
		{URI: "grpc://a/x.v1.Two", Name: "x.v1.Two", Title: "Two", MIMEType: "text/x-protobuf"},
		{URI: "grpc://b/y.v1.Three", Name: "y.v1.Three", MIMEType: "text/x-protobuf"},
	}, &ResourceSetOptions{PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	h := &resourceHandler{fakeHandler: newFakeHandler(t, nil)}
	h.rs.Store(rs)
	return h
}

func (h *resourceHandler) Resources() *ResourceSet { return h.rs.Load() }

func (h *resourceHandler) ReadResource(_ context.Context, req *ReadResourceRequest) (*ResourceContents, error) {
	for _, r := range h.rs.Load().Resources() {
		if r.URI == req.URI {
			return &ResourceContents{URI: req.URI, MIMEType: r.MIMEType, Text: "service " + r.Title + " {}\n"}, nil
		}
	}
	return nil, ErrResourceNotFound
}

// TestResourceTranscripts replays testdata/resources/*.txtar over stdio
// against a Handler with resources (the format of TestTranscripts; -update
// rewrites them).
func TestResourceTranscripts(t *testing.T) {
	replayTranscripts(t, "testdata/resources/*.txtar", func(t *testing.T, _ string, input []byte) string {
		return runStdioTranscript(t, newResourceHandler(t), input, nil)
	})
}

// TestNoResourcesWithoutHandler: a Handler that is not a ResourceHandler
// advertises no resources and answers the methods -32601.
func TestNoResourcesWithoutHandler(t *testing.T) {
	s := NewServer(testImpl, newFakeHandler(t, nil), nil)
	if strings.Contains(string(s.caps), "resources") || strings.Contains(string(s.discoverBody), "resources") {
		t.Errorf("capabilities %s", s.caps)
	}
	var m message
	if !decodeMessage([]byte(`{"jsonrpc":"2.0","id":1,"method":"resources/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`), &m) {
		t.Fatal("decode")
	}
	if r := s.handleMessage(context.Background(), nil, &scope{transport: "stdio"}, &m, nil); r.code != CodeMethodNotFound {
		t.Errorf("resources/list: %s", r.body)
	}
}
