package mcp_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// adder is a Handler with one tool, add, that sums two numbers. A
// Handler keeps its ToolList, built once: tools/list costs no encoding
// per request.
type adder struct{ tools *mcp.ToolList }

func newAdder() *adder {
	tools, err := mcp.NewToolList([]mcp.Tool{{
		Name:        "add",
		Description: "Adds a and b.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"]}`),
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: new(true)},
	}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	return &adder{tools: tools}
}

func (h *adder) Tools() *mcp.ToolList { return h.tools }

// CallTool answers a model's mistake with a tool error (IsError) it can
// act on; the server has already resolved the name against Tools.
func (h *adder) CallTool(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct{ A, B *float64 }
	if err := json.Unmarshal(req.Arguments, &args); err != nil || args.A == nil || args.B == nil {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Text: "want numbers a and b"}}}, nil
	}
	sum, _ := json.Marshal(map[string]float64{"sum": *args.A + *args.B})
	return &mcp.CallToolResult{StructuredContent: sum, Content: []mcp.Content{{Structured: true}}}, nil
}

// A Go program serves its own tools over stdio: newline-delimited
// JSON-RPC on any reader and writer (os.Stdin and os.Stdout for a
// client that starts the program). Here the client is in process, on
// two pipes, and waits for each answer as an MCP client does.
func ExampleServer_ServeStdio() {
	srv := mcp.NewServer(mcp.Implementation{Name: "adder", Version: "1.0.0"}, newAdder(), nil)
	clientOut, serverIn := io.Pipe()
	serverOut, clientIn := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(context.Background(), clientOut, clientIn) }()

	answers := bufio.NewScanner(serverOut)
	send := func(msg string, answered bool) {
		if _, err := io.WriteString(serverIn, msg+"\n"); err != nil {
			log.Fatal(err)
		}
		if answered && answers.Scan() {
			fmt.Println(answers.Text())
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`, true)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, false)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}`, true)
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add","arguments":{"a":2}}}`, true)
	serverIn.Close() // the client hangs up: ServeStdio returns
	if err := <-done; err != nil {
		log.Fatal(err)
	}
	// Output:
	// {"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{"tools":{"listChanged":true}},"serverInfo":{"name":"adder","version":"1.0.0"}}}
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}}
	// {"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"want numbers a and b"}],"isError":true}}
}

// The same Handler served over Streamable HTTP: the handler goes on any
// mux, behind whatever the program puts in front of it.
func ExampleServer_StreamableHTTPHandler() {
	srv := mcp.NewServer(mcp.Implementation{Name: "adder", Version: "1.0.0"}, newAdder(), nil)
	h, err := srv.StreamableHTTPHandler(nil)
	if err != nil {
		log.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	ts := httptest.NewServer(mux)
	defer ts.Close()
	defer srv.Shutdown(context.Background())

	session := ""
	post := func(body string) string {
		req, _ := http.NewRequest(http.MethodPost, ts.URL+"/mcp", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-06-18")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			log.Fatal(err)
		}
		defer resp.Body.Close()
		if id := resp.Header.Get("Mcp-Session-Id"); id != "" {
			session = id
		}
		b, _ := io.ReadAll(resp.Body)
		fmt.Println(resp.Status)
		return string(b)
	}
	post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`)
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	body := post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"add","arguments":{"a":2,"b":3}}}`)
	sc := bufio.NewScanner(strings.NewReader(body))
	for sc.Scan() {
		fmt.Println(sc.Text())
	}
	// Output:
	// 200 OK
	// 202 Accepted
	// 200 OK
	// {"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"{\"sum\":5}"}],"structuredContent":{"sum":5}}}
}
