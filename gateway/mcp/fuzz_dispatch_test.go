package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"testing"
	"time"
)

// echoHandler answers every call at once: "echo" returns its arguments,
// "fail" a protocol error, "panic" panics. Nothing blocks, so a fuzz input
// can never hold the server open.
type echoHandler struct{ ts *ToolList }

func (h echoHandler) Tools() *ToolList { return h.ts }

func (h echoHandler) CallTool(_ context.Context, req *CallToolRequest) (*CallToolResult, error) {
	switch req.Name {
	case "fail":
		return nil, &Error{Code: CodeInvalidParams, Message: "no"}
	case "panic":
		panic("fuzzed panic")
	}
	args := append(json.RawMessage(nil), req.Arguments...)
	if len(bytes.TrimSpace(args)) == 0 || args[0] != '{' {
		return &CallToolResult{IsError: true, Content: []Content{{Type: "text", Text: "not an object"}}}, nil
	}
	return &CallToolResult{Content: []Content{{Type: "text", Text: string(args)}}, StructuredContent: args}, nil
}

// FuzzStdio feeds arbitrary input to a stdio session, after a valid
// handshake so every method is reachable: the server must never crash,
// must end when its input does, and must write only whole JSON-RPC
// messages, one per line.
func FuzzStdio(f *testing.F) {
	for _, seed := range []string{
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"a":[1,{"b":null}]},"_meta":{"progressToken":7}}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"panic"}}`,
		`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"fail","arguments":[]}}`,
		`[{"jsonrpc":"2.0","id":5,"method":"ping"},{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":5}}]`,
		`{"jsonrpc":"2.0","id":6,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`,
		`{"jsonrpc":"2.0","id":1e400,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"\ud800"}}`,
		"{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}\n{bad",
		`{"jsonrpc":"2.0","id":9,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{}}}`,
	} {
		f.Add(seed)
	}
	ts, err := NewToolList([]Tool{
		{Name: "echo", Description: "Echo.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "fail", Description: "Fail.", InputSchema: json.RawMessage(`{"type":"object"}`)},
		{Name: "panic", Description: "Panic.", InputSchema: json.RawMessage(`{"type":"object"}`)},
	}, &ToolListOptions{PageSize: 2})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, input string) {
		s := NewServer(testImpl, echoHandler{ts}, nil)
		in := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}` + "\n" +
			`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n" + input + "\n"
		var out bytes.Buffer
		done := make(chan error, 1)
		go func() { done <- s.ServeStdio(context.Background(), bytes.NewReader([]byte(in)), &out) }()
		select {
		case err := <-done:
			if err != nil && err != io.EOF {
				t.Fatalf("ServeStdio: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the server did not end when its input did")
		}
		sc := bufio.NewScanner(&out)
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			if !json.Valid(sc.Bytes()) {
				t.Fatalf("invalid JSON on the wire: %q", sc.Text())
			}
		}
	})
}
