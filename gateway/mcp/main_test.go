package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeHandler is the test Handler: a few tools covering every outcome.
type fakeHandler struct {
	ts      atomic.Pointer[ToolList]
	started chan string // receives the tool name when a blocking call starts
	lastCtx atomic.Value
}

func ptr[T any](v T) *T { return &v }

func testTools() []Tool {
	return []Tool{
		{Name: "echo", Title: "Echo", Description: "Echoes its arguments.", InputSchema: json.RawMessage(`{"type": "object",
  "properties": {"text": {"type": "string"}}}`), OutputSchema: json.RawMessage(`{"type":"object"}`),
			Annotations: &ToolAnnotations{ReadOnlyHint: ptr(true)}},
		{Name: "fail", Description: "Always a tool execution error."},
		{Name: "proto_error", Description: "Returns a JSON-RPC error."},
		{Name: "oops", Description: "Returns a plain Go error."},
		{Name: "panic", Description: "Panics."},
		{Name: "progress", Description: "Sends progress, then answers."},
		{Name: "block", Description: "Blocks until cancelled."},
	}
}

func newFakeHandler(t testing.TB, opts *ToolListOptions) *fakeHandler {
	t.Helper()
	ts, err := NewToolList(testTools(), opts)
	if err != nil {
		t.Fatal(err)
	}
	h := &fakeHandler{started: make(chan string, 16)}
	h.ts.Store(ts)
	return h
}

func (h *fakeHandler) Tools() *ToolList { return h.ts.Load() }

func (h *fakeHandler) CallTool(ctx context.Context, req *CallToolRequest) (*CallToolResult, error) {
	switch req.Name {
	case "echo":
		args := string(req.Arguments)
		if args == "" {
			args = "{}"
		}
		return &CallToolResult{
			Content:           []Content{{Type: "text", Text: args}},
			StructuredContent: json.RawMessage(`{"echo":` + args + `,"session":` + fmt.Sprintf("%q", req.Session.Transport) + `}`),
		}, nil
	case "fail":
		return &CallToolResult{Content: []Content{{Type: "text", Text: "NOT_FOUND: no such thing"}}, IsError: true}, nil
	case "proto_error":
		return nil, &Error{Code: CodeInvalidParams, Message: "bad arguments", Data: json.RawMessage(`{"field":"x"}`)}
	case "oops":
		return nil, errors.New("backend exploded")
	case "panic":
		panic("boom")
	case "progress":
		for i := 1; i <= 2; i++ {
			if err := req.NotifyProgress(ctx, float64(i), 2, fmt.Sprintf("step %d", i)); err != nil {
				return nil, err
			}
		}
		return &CallToolResult{Content: []Content{{Type: "text", Text: "done"}}}, nil
	case "block":
		h.started <- req.Name
		<-ctx.Done()
		h.lastCtx.Store(ctx.Err())
		return nil, ctx.Err()
	}
	return nil, fmt.Errorf("unexpected tool %q", req.Name)
}

var testImpl = Implementation{Name: "test-gateway", Title: "Test Gateway", Version: "0.0.1"}
