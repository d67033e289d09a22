package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/resolver/dns"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

func TestMain(m *testing.M) {
	// grpc-go's DNS resolver resolves at most every 30s; the dns:///
	// tests change their records and cannot wait that long. Set before
	// any test runs, since the resolvers read it unsynchronised.
	dns.SetMinResolutionInterval(time.Millisecond)
	goleak.VerifyTestMain(m)
}

// backend is an in-process zoo with real reflection, plus a hook that
// lets a test hold a call ("id": "block") until its context ends, to
// observe cancellation and deadlines at the backend.
type backend struct {
	addr    string
	started chan struct{}
	ended   chan error // the backend's ctx.Err() for a held call
}

func startBackend(t testing.TB) *backend {
	t.Helper()
	b := &backend{started: make(chan struct{}, 1), ended: make(chan error, 1)}
	hold := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if r, ok := req.(*zoov1.GetAnimalRequest); ok && r.GetId() == "block" {
			b.started <- struct{}{}
			<-ctx.Done()
			b.ended <- ctx.Err()
			return nil, ctx.Err()
		}
		return next(ctx, req)
	}
	gs := grpc.NewServer(grpc.UnaryInterceptor(hold))
	zoo.Register(gs, zoo.NewServer())
	healthpb.RegisterHealthServer(gs, health.NewServer())
	reflection.Register(gs)
	b.addr = testkit.ServeLoopback(t, gs)
	return b
}

// startGateway fronts a fresh backend and serves the gateway over a real
// loopback HTTP server.
func startGateway(t testing.TB, opts *gateway.Options) (*backend, *gateway.Gateway, string) {
	t.Helper()
	b := startBackend(t)
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", b.addr)}, opts)
	return b, g, base + "/mcp"
}

func connect(t *testing.T, url, version string) *sdk.ClientSession {
	t.Helper()
	return testkit.Connect(t, url, version)
}

var versions = []string{"2025-06-18", "2025-11-25", "2026-07-28"}

func call(t *testing.T, cs *sdk.ClientSession, name string, args any) *sdk.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	// A list method's page adds a sentence on how to get the next one.
	n := len(res.Content)
	if n == 2 {
		if tc, ok := res.Content[1].(*sdk.TextContent); ok && strings.HasPrefix(tc.Text, "More results: ") {
			n = 1
		}
	}
	if n != 1 {
		t.Fatalf("want one content block, got %d", len(res.Content))
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		t.Fatalf("want text content, got %T", res.Content[0])
	}
	return tc.Text
}

func TestListTools(t *testing.T) {
	_, _, url := startGateway(t, nil)
	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			cs := connect(t, url, v)
			res, err := cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tool := range res.Tools {
				names = append(names, tool.Name)
				if tool.Description == "" {
					t.Errorf("%s: no description", tool.Name)
				}
				if tool.OutputSchema == nil {
					t.Errorf("%s: no output schema", tool.Name)
				}
			}
			want := []string{
				"ZooService_ChatWithKeeper", "ZooService_CreateAnimal", "ZooService_DeleteAnimal", "ZooService_FeedAnimal",
				"ZooService_GetAnimal", "ZooService_GetNextFeedingTime", "ZooService_GetTaxonomy",
				"ZooService_ListAnimals", "ZooService_ListEnclosures", "ZooService_RecordObservations",
				"ZooService_UpdateAnimal", "ZooService_WatchFeedings",
			}
			if !slices.Equal(names, want) {
				t.Errorf("tools:\n got %v\nwant %v (health hidden, sorted by RPC name)", names, want)
			}
			get := res.Tools[slices.Index(names, "ZooService_GetAnimal")]
			if get.Annotations == nil || !get.Annotations.ReadOnlyHint {
				t.Errorf("GetAnimal (NO_SIDE_EFFECTS) should be readOnlyHint: %+v", get.Annotations)
			}
			if !strings.HasPrefix(get.Description, "Gets an animal.") {
				t.Errorf("a description written from the method's structure should say what it does: %q", get.Description)
			}
			// The zoo's (mcpgateway.v1.tool) options, through reflection.
			if get.Title != "Look up an animal" || get.Annotations.Title != "Look up an animal" ||
				get.Annotations.OpenWorldHint == nil || *get.Annotations.OpenWorldHint || !get.Annotations.IdempotentHint {
				t.Errorf("GetAnimal options: title %q annotations %+v", get.Title, get.Annotations)
			}
			del := res.Tools[slices.Index(names, "ZooService_DeleteAnimal")]
			if del.Title != "Remove an animal" || del.Annotations == nil || del.Annotations.DestructiveHint == nil || !*del.Annotations.DestructiveHint || del.Annotations.ReadOnlyHint {
				t.Errorf("DeleteAnimal options: title %q annotations %+v", del.Title, del.Annotations)
			}
		})
	}
}

// TestEverySchema compiles every tool's schemas with a real JSON Schema
// 2020-12 validator and runs the LLM-API lint over them.
func TestEverySchema(t *testing.T) {
	_, g, _ := startGateway(t, nil)
	for _, tool := range g.Tools().Tools() {
		for kind, s := range map[string]json.RawMessage{"input": tool.InputSchema, "output": tool.OutputSchema} {
			if _, err := compileSchema(s); err != nil {
				t.Errorf("%s %s schema does not compile: %v", tool.Name, kind, err)
			}
			if problems := schema.Lint(s); len(problems) > 0 {
				t.Errorf("%s %s schema: %v", tool.Name, kind, problems)
			}
		}
	}
}

func compileSchema(s json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(s)))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.AssertFormat()
	if err := c.AddResource("mem://schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("mem://schema.json")
}

// TestCallTool covers success and every error class at each revision.
func TestCallTool(t *testing.T) {
	_, g, url := startGateway(t, nil)
	outputSchemas := map[string]*jsonschema.Schema{}
	for _, tool := range g.Tools().Tools() {
		s, err := compileSchema(tool.OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		outputSchemas[tool.Name] = s
	}
	ok := func(t *testing.T, cs *sdk.ClientSession, name string, args any) map[string]any {
		t.Helper()
		res := call(t, cs, name, args)
		if res.IsError {
			t.Fatalf("%s: unexpected tool error: %s", name, text(t, res))
		}
		var fromText any
		if err := json.Unmarshal([]byte(text(t, res)), &fromText); err != nil {
			t.Fatalf("text block is not JSON: %v", err)
		}
		sc, _ := res.StructuredContent.(map[string]any)
		if sc == nil {
			t.Fatalf("no structuredContent object: %#v", res.StructuredContent)
		}
		js, _ := json.Marshal(sc)
		fromText2, _ := json.Marshal(fromText)
		if string(js) != string(fromText2) {
			t.Errorf("text block and structuredContent differ:\n%s\n%s", fromText2, js)
		}
		inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(string(js)))
		if err := outputSchemas[name].Validate(inst); err != nil {
			t.Errorf("%s: structuredContent does not validate against outputSchema: %v", name, err)
		}
		return sc
	}
	toolError := func(t *testing.T, cs *sdk.ClientSession, name string, args any, wants ...string) {
		t.Helper()
		res := call(t, cs, name, args)
		if !res.IsError {
			t.Fatalf("%s: want isError, got %s", name, text(t, res))
		}
		msg := text(t, res)
		for _, w := range wants {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: error text %q\n does not contain %q", name, msg, w)
			}
		}
	}
	protocolError := func(t *testing.T, cs *sdk.ClientSession, name string, args any, code int64, want string) {
		t.Helper()
		_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: name, Arguments: args})
		var werr *jsonrpc.Error
		if !errors.As(err, &werr) {
			t.Fatalf("%s: want JSON-RPC error %d, got %v", name, code, err)
		}
		if werr.Code != code || !strings.Contains(werr.Message, want) {
			t.Errorf("%s: got error %d %q, want %d containing %q", name, werr.Code, werr.Message, code, want)
		}
	}

	for _, v := range versions {
		t.Run(v, func(t *testing.T) {
			cs := connect(t, url, v)

			sc := ok(t, cs, "ZooService_GetAnimal", map[string]any{"id": "leo"})
			if a, _ := sc["animal"].(map[string]any); a["id"] != "leo" {
				t.Errorf("GetAnimal leo: %v", sc)
			}
			// Proto field names are accepted on input too.
			ok(t, cs, "ZooService_ListAnimals", map[string]any{"page_size": 2})
			ok(t, cs, "ZooService_ListEnclosures", nil)
			ok(t, cs, "ZooService_GetTaxonomy", map[string]any{})
			// A response that is not a JSON object arrives wrapped.
			sc = ok(t, cs, "ZooService_GetNextFeedingTime", map[string]any{"animalId": "leo"})
			if s, _ := sc["value"].(string); !strings.HasSuffix(s, "Z") {
				t.Errorf("wrapped timestamp: %v", sc)
			}

			// Backend statuses are tool execution errors with their details.
			toolError(t, cs, "ZooService_GetAnimal", map[string]any{"id": "nobody"},
				"NOT_FOUND: ", "ResourceInfo", "ErrorInfo")
			toolError(t, cs, "ZooService_CreateAnimal", map[string]any{"animal": map[string]any{}},
				"INVALID_ARGUMENT: ", "BadRequest: field ")

			// Arguments that do not fit are tool errors naming the path.
			toolError(t, cs, "ZooService_GetAnimal", map[string]any{"id": 5}, "id: expected a string, got 5")
			toolError(t, cs, "ZooService_GetAnimal", map[string]any{"idd": "leo"}, `idd: no such field; expected one of: id`)
			toolError(t, cs, "ZooService_ListAnimals", map[string]any{"pageSize": "many"}, `pageSize: expected an integer in the int32 range (a number or a decimal string), got "many"`)
			toolError(t, cs, "ZooService_FeedAnimal", map[string]any{"animalId": "leo", "ration": "hay", "meal": map[string]any{}},
				`ration: at most one of the oneof food may be set, but "meal" and "ration" are both set`)

			// Protocol errors: unknown tool, arguments that are not an object.
			protocolError(t, cs, "NoSuchTool", map[string]any{}, -32602, `unknown tool "NoSuchTool"`)
			protocolError(t, cs, "ZooService_GetAnimal", []int{1}, -32602, "arguments must be a JSON object")
		})
	}
}

func TestFeedingLimitIsRetryable(t *testing.T) {
	_, _, url := startGateway(t, nil)
	cs := connect(t, url, "2025-11-25")
	var last *sdk.CallToolResult
	for range 5 {
		last = call(t, cs, "ZooService_FeedAnimal", map[string]any{"animalId": "leo", "ration": "meat"})
	}
	msg := text(t, last)
	if !last.IsError || !strings.HasPrefix(msg, "RESOURCE_EXHAUSTED: ") || !strings.Contains(msg, "retryable") || !strings.Contains(msg, "RetryInfo") {
		t.Errorf("fifth feeding: isError=%v %q", last.IsError, msg)
	}
}

func TestInputErrorsProtocolMode(t *testing.T) {
	_, _, url := startGateway(t, &gateway.Options{Calls: gateway.CallOptions{InputErrors: gateway.InputErrorsProtocol}})
	cs := connect(t, url, "2025-11-25")
	_, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": 5}})
	var werr *jsonrpc.Error
	if !errors.As(err, &werr) || werr.Code != -32602 || !strings.Contains(werr.Message, "id: expected a string") {
		t.Fatalf("want -32602 naming the field, got %v", err)
	}
}

// TestProtoNames: with UseProtoNames (--json-names proto) schemas and
// results use the proto field names; arguments are accepted under both.
func TestProtoNames(t *testing.T) {
	_, g, url := startGateway(t, &gateway.Options{Catalog: gateway.CatalogOptions{UseProtoNames: true}})
	if in := string(toolByName(t, g, "ZooService_ListAnimals").InputSchema); !strings.Contains(in, `"page_size"`) || strings.Contains(in, `"pageSize"`) {
		t.Errorf("ListAnimals input schema: %s", in)
	}
	cs := connect(t, url, "2025-11-25")
	res := call(t, cs, "ZooService_GetAnimal", map[string]any{"id": "leo"})
	if txt := text(t, res); res.IsError || !strings.Contains(txt, `"display_name":"Leo"`) || strings.Contains(txt, "displayName") {
		t.Errorf("GetAnimal with proto names: %s", txt)
	}
	for _, args := range []map[string]any{{"page_size": 1}, {"pageSize": 1}} {
		if res := call(t, cs, "ZooService_ListAnimals", args); res.IsError {
			t.Errorf("ListAnimals %v: %s", args, text(t, res))
		}
	}
}

// TestInvalidArgumentsNeverReachTheBackend: arguments the request message
// cannot hold are answered at the gateway, in both input-error modes; the
// backend sees only the valid call.
func TestInvalidArgumentsNeverReachTheBackend(t *testing.T) {
	for _, mode := range []gateway.InputErrorMode{gateway.InputErrorsTool, gateway.InputErrorsProtocol} {
		r := startReplica(t, listenLoopback(t), nil)
		_, base := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", r.addr)}, &gateway.Options{Calls: gateway.CallOptions{InputErrors: mode}})
		cs := connect(t, base+"/mcp", "2025-11-25")
		for _, args := range []map[string]any{{"id": 5}, {"idd": "leo"}, {"id": "leo", "extra": true}} {
			res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: args})
			if err == nil && !res.IsError {
				t.Errorf("mode %v, %v: answered without an error", mode, args)
			}
		}
		if n := r.count("GetAnimal"); n != 0 {
			t.Errorf("mode %v: the backend saw %d calls with invalid arguments", mode, n)
		}
		if res := call(t, cs, "ZooService_GetAnimal", map[string]any{"id": "leo"}); res.IsError || r.count("GetAnimal") != 1 {
			t.Errorf("mode %v: the valid call: %s, backend saw %d calls", mode, text(t, res), r.count("GetAnimal"))
		}
	}
}

func TestDeadlineIsRetryableToolError(t *testing.T) {
	b, _, url := startGateway(t, &gateway.Options{Calls: gateway.CallOptions{Timeout: 200 * time.Millisecond}})
	cs := connect(t, url, "2025-11-25")
	res := call(t, cs, "ZooService_GetAnimal", map[string]any{"id": "block"})
	if msg := text(t, res); !res.IsError || !strings.HasPrefix(msg, "DEADLINE_EXCEEDED: ") || !strings.Contains(msg, "retryable") {
		t.Errorf("isError=%v %q", res.IsError, msg)
	}
	<-b.started
	// The backend's context ends either by its own copy of the deadline or
	// by the gateway's cancellation when the deadline fires; which comes
	// first is a race inside gRPC, and either ends the backend's work.
	if err := <-b.ended; err == nil {
		t.Error("the backend call did not end")
	}
}

// TestCancellationReachesBackend: a client that cancels its call makes the
// gateway cancel the gRPC call.
func TestCancellationReachesBackend(t *testing.T) {
	b, _, url := startGateway(t, nil)
	sessions := map[string]func(t *testing.T) *sdk.ClientSession{}
	for _, v := range versions {
		sessions["streamable-http/"+v] = func(t *testing.T) *sdk.ClientSession { return connect(t, url, v) }
	}
	sessions["websocket/2025-11-25"] = func(t *testing.T) *sdk.ClientSession { return connectWS(t, url, "2025-11-25") }
	for _, name := range slices.Sorted(maps.Keys(sessions)) {
		t.Run(name, func(t *testing.T) {
			cs := sessions[name](t)
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() {
				_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": "block"}})
				errc <- err
			}()
			select {
			case <-b.started:
			case <-time.After(10 * time.Second):
				t.Fatal("the call never reached the backend")
			}
			cancel()
			select {
			case err := <-b.ended:
				if !errors.Is(err, context.Canceled) {
					t.Errorf("backend saw %v, want canceled", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the backend call was not cancelled")
			}
			if err := <-errc; err == nil {
				t.Error("cancelled call returned no error")
			}
		})
	}
}

// connectWS connects the reference client to the gateway's /ws.
func connectWS(t *testing.T, mcpURL, version string) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "e2e-ws", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &testkit.WebSocketTransport{URL: wsURL(mcpURL)}, &sdk.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("connect over WebSocket at %s: %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func wsURL(mcpURL string) string {
	return "ws" + strings.TrimPrefix(strings.TrimSuffix(mcpURL, "/mcp"), "http") + "/ws"
}

// TestWebSocketClientVanishes: a WebSocket client whose connection dies
// mid-call (no close frame) gets its gRPC call cancelled at the backend;
// goleak in TestMain checks nothing is left behind.
func TestWebSocketClientVanishes(t *testing.T) {
	b, _, url := startGateway(t, nil)
	c, _, err := (&websocket.Dialer{Subprotocols: []string{"mcp"}}).Dial(wsURL(url), nil)
	if err != nil {
		t.Fatal(err)
	}
	send := func(msg string) {
		t.Helper()
		if err := c.WriteMessage(websocket.TextMessage, []byte(msg)); err != nil {
			t.Fatal(err)
		}
	}
	// The handshake completes before anything else is sent, as the
	// lifecycle requires.
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"ws","version":"1"}}}`)
	if _, _, err := c.ReadMessage(); err != nil {
		t.Fatal(err)
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"block"}}}`)
	select {
	case <-b.started:
	case <-time.After(10 * time.Second):
		t.Fatal("the call never reached the backend")
	}
	c.UnderlyingConn().Close() // vanish: no close frame
	select {
	case err := <-b.ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("backend saw %v, want canceled", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the backend call was not cancelled after the client vanished")
	}
}
