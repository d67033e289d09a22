package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// Embedding the gateway in a Go program: one backend, found by server
// reflection, its methods compiled into tools once, and a tool called in
// process. A nil *Options means the defaults the binary's flags default
// to.
func Example() {
	ctx := context.Background()
	// The demo backend: a grpc-go server with server reflection.
	addr, stop, err := zoo.Listen(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()

	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()
	g, err := gateway.New(ctx, []gateway.Backend{{Address: addr, Conn: conn}}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()

	for _, t := range g.Tools().Tools() {
		if strings.HasPrefix(t.Name, "ZooService_Get") {
			fmt.Println(t.Name)
		}
	}
	res, err := g.CallTool(ctx, &mcp.CallToolRequest{
		Name:      "ZooService_GetAnimal",
		Arguments: json.RawMessage(`{"id": "no-such-animal"}`),
	})
	if err != nil {
		log.Fatal(err) // a malformed request: a JSON-RPC error
	}
	// A backend's error is a result the model reads, not a protocol error.
	fmt.Println("isError:", res.IsError)
	// Output:
	// ZooService_GetAnimal
	// ZooService_GetNextFeedingTime
	// ZooService_GetTaxonomy
	// isError: true
}

// Options come in groups by concept (Calls, Results, Catalog, Search,
// Transports, FrontDoor, Scopes, Telemetry); a group left out, like a
// field left out, keeps its defaults.
func ExampleOptions() {
	ctx := context.Background()
	addr, stop, err := zoo.Listen(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer stop()
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer conn.Close()

	g, err := gateway.New(ctx, []gateway.Backend{{Address: addr, Conn: conn}}, &gateway.Options{
		Calls:   gateway.CallOptions{Timeout: 5 * time.Second},
		Catalog: gateway.CatalogOptions{Include: []string{"zoo.v1.ZooService/GetTaxonomy", "zoo.v1.ZooService/ListAnimals"}},
		Search:  gateway.SearchOptions{ToolMode: gateway.ToolModeTyped},
	})
	if err != nil {
		log.Fatal(err)
	}
	defer g.Close()
	for _, t := range g.Tools().Tools() {
		fmt.Println(t.Name)
	}
	// Output:
	// ZooService_GetTaxonomy
	// ZooService_ListAnimals
}

// A bad option is an *OptionError naming it by its path, so a program
// that sets options from names of its own (the gateway binary's flags)
// can say which of its names was wrong without reading the message.
func ExampleOptionError() {
	_, err := gateway.New(context.Background(), nil, &gateway.Options{
		Calls: gateway.CallOptions{Timeout: gateway.Off}, // a call always has a deadline
	})
	var oe *gateway.OptionError
	if errors.As(err, &oe) {
		fmt.Println(oe.Option)
		fmt.Println(oe.Err)
	}
	// Output:
	// Options.Calls.Timeout
	// cannot be off (a call always has a deadline), got -1ns; 0 means the default
}

// Serving MCP over Streamable HTTP: Handler is the whole front door (the
// MCP endpoint at /mcp, the legacy SSE and WebSocket endpoints, health),
// to mount in the program's own server.
func ExampleGateway_Handler() {
	ctx := context.Background()
	g, stop := zooGateway(ctx) // as in the package example
	defer stop()

	srv := httptest.NewServer(g.Handler())
	defer srv.Close()

	// What an MCP client sends first.
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/mcp", strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	fmt.Println(resp.Status)
	fmt.Println("session:", resp.Header.Get("Mcp-Session-Id") != "")
	// Output:
	// 200 OK
	// session: true
}

// Serving MCP over stdio, as a local MCP server started by a desktop
// client: newline-delimited JSON-RPC on in and out.
func ExampleGateway_ServeStdio() {
	ctx := context.Background()
	g, stop := zooGateway(ctx) // as in the package example
	defer stop()

	// A client waits for initialize's answer before it sends the rest:
	// the server handles requests concurrently.
	in, client := io.Pipe()
	out, w := io.Pipe()
	go func() {
		w.CloseWithError(g.ServeStdio(ctx, in, w))
	}()
	answers := bufio.NewScanner(out)
	send := func(lines ...string) {
		for _, l := range lines {
			if _, err := io.WriteString(client, l+"\n"); err != nil {
				log.Fatal(err)
			}
		}
	}
	var msg struct {
		Result struct {
			ServerInfo struct{ Name string } `json:"serverInfo"`
			IsError    bool                  `json:"isError"`
		} `json:"result"`
	}
	read := func() {
		if !answers.Scan() {
			log.Fatal("stdio ended early")
		}
		if err := json.Unmarshal(answers.Bytes(), &msg); err != nil {
			log.Fatal(err)
		}
	}

	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"example","version":"1"}}}`)
	read()
	fmt.Println("server:", msg.Result.ServerInfo.Name)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"no-such-animal"}}}`)
	read()
	fmt.Println("isError:", msg.Result.IsError)
	client.Close() // the end of input ends ServeStdio
	for answers.Scan() {
	}
	// Output:
	// server: grpc-mcp-gateway
	// isError: true
}

// zooGateway is the package example's gateway in front of the demo
// backend; stop shuts both down.
func zooGateway(ctx context.Context) (g *gateway.Gateway, stop func()) {
	addr, stopZoo, err := zoo.Listen(ctx)
	if err != nil {
		log.Fatal(err)
	}
	conn, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	if g, err = gateway.New(ctx, []gateway.Backend{{Address: addr, Conn: conn}}, nil); err != nil {
		log.Fatal(err)
	}
	return g, func() {
		_ = g.Shutdown(ctx)
		conn.Close()
		_ = stopZoo()
	}
}
