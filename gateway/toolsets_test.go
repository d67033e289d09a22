package gateway_test

import (
	"context"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// toolsetGateway serves a recording zoo and the shop with two toolsets:
// zoo-read (the zoo's reads, typed, with its own instructions) and shop
// (the shop's package, in search mode); auth, when set, fronts it.
func toolsetGateway(t *testing.T, opts *gateway.Options) (*recordingBackend, string) {
	t.Helper()
	zooB := startRecordingBackend(t)
	shopAPI := &fakeAPI{}
	shopAPI.set(t, apiFile("shop.v1", "ShopService", method("GetItem"), method("DeleteItem")))
	shop, _ := serveFake(t, shopAPI, "127.0.0.1:0")
	if opts == nil {
		opts = &gateway.Options{}
	}
	opts.FrontDoor.Toolsets = append([]gateway.Toolset{
		{Name: "zoo-read", Description: "Read the zoo: animals and enclosures.", ToolMode: gateway.ToolModeTyped,
			Include: []string{"zoo.v1.ZooService/Get*", "zoo.v1.ZooService/List*"}},
		{Name: "shop", Include: []string{"shop.v1.*"}, ToolMode: gateway.ToolModeSearch},
	}, opts.FrontDoor.Toolsets...)
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", zooB.addr), dialBackend(t, "shop", shop)}, opts)
	return zooB, base
}

// TestToolsets: each toolset's endpoints list its tools only, with its
// instructions and its mode, over Streamable HTTP, WebSocket and SSE; a
// caller who names another toolset's tool (tools/call in typed mode,
// call_tool in search mode) gets an unknown tool and the backend never
// sees the call; search_tools finds only the toolset's tools; its
// resources are its services; /mcp still serves the whole catalog; and
// the metrics count its calls and sessions.
func TestToolsets(t *testing.T) {
	metrics := telemetry.NewMetrics()
	zooB, base := toolsetGateway(t, &gateway.Options{Telemetry: gateway.TelemetryOptions{Metrics: metrics}, Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for _, transport := range []string{"streamable", "websocket", "sse"} {
		t.Run(transport, func(t *testing.T) {
			zr, err := connectAt(ctx, t, base, transport, "", "zoo-read")
			if err != nil {
				t.Fatal(err)
			}
			if got := zr.InitializeResult().Instructions; got != "Read the zoo: animals and enclosures." {
				t.Errorf("zoo-read's instructions: %q", got)
			}
			listed := toolsetNames(ctx, t, zr)
			if len(listed) == 0 || slices.ContainsFunc(listed, func(n string) bool {
				return !strings.HasPrefix(n, "ZooService_Get") && !strings.HasPrefix(n, "ZooService_List")
			}) {
				t.Errorf("zoo-read lists %v, want the zoo's Get and List tools only", listed)
			}
			if res := call(t, zr, "ZooService_GetAnimal", map[string]any{"id": "leo"}); res.IsError {
				t.Errorf("GetAnimal through zoo-read: %s", text(t, res))
			}
			before := zooB.deletes()
			if _, err := zr.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_DeleteAnimal", Arguments: map[string]any{"id": "leo"}}); err == nil ||
				!strings.Contains(err.Error(), "unknown tool") {
				t.Errorf("DeleteAnimal through zoo-read: %v, want unknown tool", err)
			}
			if _, err := zr.CallTool(ctx, &sdk.CallToolParams{Name: "ShopService_GetItem", Arguments: map[string]any{}}); err == nil ||
				!strings.Contains(err.Error(), "unknown tool") {
				t.Errorf("the shop's GetItem through zoo-read: %v, want unknown tool", err)
			}
			if zooB.deletes() != before {
				t.Error("a call outside the toolset reached the backend")
			}
			res, err := zr.ListResources(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Resources) != 1 || res.Resources[0].URI != "grpc://zoo/zoo.v1.ZooService" {
				t.Errorf("zoo-read's resources: %v, want the zoo's service only", res.Resources)
			}
			if _, err := zr.ReadResource(ctx, &sdk.ReadResourceParams{URI: "grpc://shop/shop.v1.ShopService"}); err == nil {
				t.Error("zoo-read reads the shop's service")
			}

			shop, err := connectAt(ctx, t, base, transport, "", "shop")
			if err != nil {
				t.Fatal(err)
			}
			if listed := toolsetNames(ctx, t, shop); !slices.Equal(listed, []string{gateway.CallToolName, gateway.SearchToolsName}) {
				t.Errorf("shop lists %v, want search mode's two tools", listed)
			}
			if n := metricValue(t, metrics, "grpc_mcp_gateway_toolset_sessions", map[string]string{"toolset": "shop"}); n != 1 {
				t.Errorf("toolset_sessions{toolset=shop} = %v with one session open, want 1", n)
			}
			found := names(searchTools(t, shop, map[string]any{"query": "delete"}))
			if !slices.Contains(found, "ShopService_DeleteItem") || slices.Contains(found, "ZooService_DeleteAnimal") {
				t.Errorf("search_tools \"delete\" in shop: %v, want the shop's and not the zoo's", found)
			}
			out := call(t, shop, gateway.CallToolName, map[string]any{"name": "ZooService_DeleteAnimal", "arguments": map[string]any{"id": "leo"}})
			if !out.IsError || !strings.Contains(text(t, out), "unknown tool") || strings.Contains(text(t, out), "Zoo") && strings.Contains(text(t, out), "closest names are Zoo") {
				t.Errorf("call_tool of the zoo's DeleteAnimal in shop: %s, want unknown tool", text(t, out))
			}
			if zooB.deletes() != before {
				t.Error("call_tool outside the toolset reached the backend")
			}
			if out := call(t, shop, gateway.CallToolName, map[string]any{"name": "ShopService_GetItem", "arguments": map[string]any{}}); out.IsError {
				t.Errorf("call_tool of the shop's GetItem: %s", text(t, out))
			}

			whole, err := connectAt(ctx, t, base, transport, "", "")
			if err != nil {
				t.Fatal(err)
			}
			if all := toolsetNames(ctx, t, whole); !slices.Contains(all, "ZooService_DeleteAnimal") || !slices.Contains(all, "ShopService_DeleteItem") {
				t.Errorf("/mcp lists %v, want the whole catalog", all)
			}
		})
	}
	// Per transport: GetAnimal in zoo-read (the calls outside it end in
	// the MCP layer); search_tools and two call_tool in shop.
	for ts, want := range map[string]float64{"zoo-read": 3, "shop": 9} {
		if n := metricValue(t, metrics, "grpc_mcp_gateway_toolset_calls_total", map[string]string{"toolset": ts}); n != want {
			t.Errorf("toolset_calls_total{toolset=%s} = %v, want %v", ts, n, want)
		}
	}
}

func toolsetNames(ctx context.Context, t *testing.T, cs *sdk.ClientSession) []string {
	t.Helper()
	var out []string
	for tl, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, tl.Name)
	}
	slices.Sort(out)
	return out
}

// TestToolsetRequiredScopes: a toolset's required scopes are checked at
// its endpoints' front door, with the step-up challenge, on top of the
// gateway's; the whole catalog's endpoint does not ask for them; and a
// toolset with ListVisibleOnly lists only what the token may call.
func TestToolsetRequiredScopes(t *testing.T) {
	is := newTestIssuer(t)
	_, base := toolsetGateway(t, &gateway.Options{Auth: oauthWithRules(t, is, map[string][]string{"zoo.v1.ZooService/List*": {"zoo:list"}}),
		Scopes: gateway.ScopeOptions{
			ListVisibleOnly: true,
		}, FrontDoor: gateway.FrontDoorOptions{
			Toolsets: []gateway.Toolset{{Name: "admin", RequiredScopes: []string{"zoo:admin"}, ToolMode: gateway.ToolModeTyped}},
		}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	user := is.token(t, zooAudience, "zoo", nil)
	for _, transport := range []string{"streamable", "websocket"} {
		if _, err := connectAt(ctx, t, base, transport, user, "admin"); err == nil {
			t.Errorf("%s: a token without zoo:admin opened the admin toolset", transport)
		}
		if _, err := connectAt(ctx, t, base, transport, is.token(t, zooAudience, "zoo zoo:admin", nil), "admin"); err != nil {
			t.Errorf("%s: a token with zoo:admin: %v", transport, err)
		}
		zr, err := connectAt(ctx, t, base, transport, user, "zoo-read")
		if err != nil {
			t.Fatal(err)
		}
		if names := toolsetNames(ctx, t, zr); len(names) == 0 || slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, "ZooService_List") }) {
			t.Errorf("%s: zoo-read lists %v to a token without zoo:list, want the Get tools only", transport, names)
		}
	}
}

// TestToolsetOptionsChecked: New refuses a toolset it cannot serve,
// naming it and what was expected.
func TestToolsetOptionsChecked(t *testing.T) {
	zooB := startRecordingBackend(t)
	for _, c := range []struct {
		name string
		sets []gateway.Toolset
		want string
	}{
		{"bad name", []gateway.Toolset{{Name: "Billing/x"}}, `Options.FrontDoor.Toolsets[0].Name: "Billing/x": want 1 to 63 of a-z 0-9 _ -`},
		{"duplicate", []gateway.Toolset{{Name: "a"}, {Name: "a"}}, `Options.FrontDoor.Toolsets[1].Name: "a": another toolset has that name`},
		{"bad glob", []gateway.Toolset{{Name: "a", Include: []string{"zoo.v1.[Zoo/*"}}}, `Options.FrontDoor.Toolsets[0].Include: "zoo.v1.[Zoo/*"`},
		{"scopes without auth", []gateway.Toolset{{Name: "a", RequiredScopes: []string{"x"}}}, `Options.FrontDoor.Toolsets[0].RequiredScopes: toolset a: needs Options.Auth`},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			g, err := gateway.New(ctx, []gateway.Backend{dialBackend(t, "zoo", zooB.addr)}, &gateway.Options{FrontDoor: gateway.FrontDoorOptions{Toolsets: c.sets}})
			if err == nil {
				_ = g.Shutdown(ctx)
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q, want it to contain %q", err, c.want)
			}
		})
	}
}

// TestToolsetTasks: a toolset reaches only the tasks of its own tools: a
// task started through the whole catalog is found through a toolset that
// holds Jobs/Run, and not found (as another principal's is not) through
// one that does not, at no cost to the backend.
func TestToolsetTasks(t *testing.T) {
	is := newTestIssuer(t)
	srv, url := jobsWithAuth(t, is, nil, &gateway.Options{FrontDoor: gateway.FrontDoorOptions{
		Toolsets: []gateway.Toolset{
			{Name: "jobs", Include: []string{"lrotest.v1.Jobs/*", "google.longrunning.Operations/*"}},
			{Name: "instances", Include: []string{"lrotest.v1.Instances/*", "google.longrunning.Operations/*"}},
		},
	}})
	token := is.token(t, zooAudience, "jobs", nil)
	id := startTask(newSessionClientAs(t, url, token))
	var got wireTask
	newSessionClientAs(t, url+"/jobs", token).result("tasks/get", map[string]any{"taskId": id}, "", &got)
	if got.Status != "working" || got.TaskID != id {
		t.Errorf("tasks/get through the jobs toolset: %+v", got)
	}
	polls := srv.Polls()
	other := newSessionClientAs(t, url+"/instances", token)
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if r := other.call(method, map[string]any{"taskId": id}, ""); r.Error == nil || r.Error.Code != -32602 || !strings.HasSuffix(r.Error.Message, "Task not found") {
			t.Errorf("%s of a Jobs task through the instances toolset: %+v, want not found", method, r)
		}
	}
	if srv.Polls() != polls || len(srv.Cancelled()) != 0 {
		t.Errorf("task methods outside the toolset reached the backend: %d polls, cancelled %v", srv.Polls()-polls, srv.Cancelled())
	}
}

// TestToolsetsOnly: with ToolsetsOnly the whole catalog's endpoints
// answer 404 while the toolsets serve; stdio serves StdioToolset; New
// refuses ToolsetsOnly without toolsets and a StdioToolset that names
// none, and ServeStdio refuses to serve the whole catalog.
func TestToolsetsOnly(t *testing.T) {
	zooB, base := toolsetGateway(t, &gateway.Options{FrontDoor: gateway.FrontDoorOptions{ToolsetsOnly: true}})
	for _, path := range []string{"/mcp", "/ws", "/sse"} {
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("GET %s: %d, want 404", path, resp.StatusCode)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	zr, err := connectAt(ctx, t, base, "streamable", "", "zoo-read")
	if err != nil {
		t.Fatal(err)
	}
	if names := toolsetNames(ctx, t, zr); !slices.Contains(names, "ZooService_GetAnimal") {
		t.Errorf("zoo-read lists %v", names)
	}

	g, err := gateway.New(ctx, []gateway.Backend{dialBackend(t, "zoo", zooB.addr)}, &gateway.Options{FrontDoor: gateway.FrontDoorOptions{
		ToolsetsOnly: true,
		StdioToolset: "reads",
		Toolsets:     []gateway.Toolset{{Name: "reads", Include: []string{"zoo.v1.ZooService/Get*"}, ToolMode: gateway.ToolModeTyped}},
	},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = g.Shutdown(context.Background()) })
	cs := stdioTransport(t, &streamGateway{gw: g}, nil)
	if names := toolsetNames(ctx, t, cs); len(names) == 0 || slices.ContainsFunc(names, func(n string) bool { return !strings.HasPrefix(n, "ZooService_Get") }) {
		t.Errorf("stdio serving the reads toolset lists %v", names)
	}

	for _, c := range []struct {
		opts gateway.Options
		want string
	}{
		{gateway.Options{FrontDoor: gateway.FrontDoorOptions{ToolsetsOnly: true}}, "Options.FrontDoor.ToolsetsOnly: needs FrontDoor.Toolsets"},
		{gateway.Options{FrontDoor: gateway.FrontDoorOptions{StdioToolset: "nope", Toolsets: []gateway.Toolset{{Name: "a"}}}}, `Options.FrontDoor.StdioToolset: "nope": no toolset of that name`},
	} {
		if g, err := gateway.New(ctx, []gateway.Backend{dialBackend(t, "zoo", zooB.addr)}, &c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			if err == nil {
				_ = g.Shutdown(ctx)
			}
			t.Errorf("New(%+v): %v, want %q", c.opts, err, c.want)
		}
	}
	g2, err := gateway.New(ctx, []gateway.Backend{dialBackend(t, "zoo", zooB.addr)}, &gateway.Options{FrontDoor: gateway.FrontDoorOptions{ToolsetsOnly: true, Toolsets: []gateway.Toolset{{Name: "a"}}}})
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = g2.Shutdown(context.Background()) }()
	if err := g2.ServeStdio(ctx, strings.NewReader(""), io.Discard); err == nil || !strings.Contains(err.Error(), "set FrontDoor.StdioToolset") {
		t.Errorf("ServeStdio with ToolsetsOnly and no StdioToolset: %v", err)
	}
}

// TestToolsetListChanged: a refresh that changes one toolset's tools and
// services notifies that toolset's clients (tools, then resources) and no
// other's. Each client's notifications arrive in order on its stream, so
// the changes alternate between the toolsets: a notification sent to the
// wrong one shows up before the one its own next change brings.
func TestToolsetListChanged(t *testing.T) {
	shopAPI, otherAPI := &fakeAPI{}, &fakeAPI{}
	shopAPI.set(t, apiFile("shop.v1", "Shop", method("A")))
	otherAPI.set(t, apiFile("other.v1", "Other", method("A")))
	shop, _ := serveFake(t, shopAPI, "127.0.0.1:0")
	other, _ := serveFake(t, otherAPI, "127.0.0.1:0")
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "shop", shop), dialBackend(t, "other", other)}, &gateway.Options{
		Catalog: gateway.CatalogOptions{
			Refresh: 50 * time.Millisecond,
		}, Search: gateway.SearchOptions{
			ToolMode: gateway.ToolModeTyped,
		},
		FrontDoor: gateway.FrontDoorOptions{
			Toolsets: []gateway.Toolset{{Name: "shop", Include: []string{"shop.v1.*"}}, {Name: "other", Include: []string{"other.v1.*"}}},
		}})
	events := map[string]chan string{"shop": make(chan string, 10), "other": make(chan string, 10)}
	for name, ch := range events {
		connectNotified(t, base+"/mcp/"+name, "2025-11-25", &sdk.ClientOptions{
			ToolListChangedHandler:     func(context.Context, *sdk.ToolListChangedRequest) { ch <- "tools" },
			ResourceListChangedHandler: func(context.Context, *sdk.ResourceListChangedRequest) { ch <- "resources" },
		})
		testkit.WaitFor(t, "the "+name+" client's notification stream", func() bool { return g.NotificationStreams(name) == 1 })
	}
	steps := []struct {
		toolset string
		api     *fakeAPI
		file    *descriptorpb.FileDescriptorProto
	}{
		{"shop", shopAPI, apiFile("shop.v1", "Shop", method("A"), method("B"))},
		{"other", otherAPI, apiFile("other.v1", "Other", method("A"), method("B"))},
		{"shop", shopAPI, apiFile("shop.v1", "Shop", method("B"))},
		{"other", otherAPI, apiFile("other.v1", "Other", method("B"))},
	}
	for i, st := range steps {
		st.api.set(t, st.file)
		for _, want := range []string{"tools", "resources"} {
			select {
			case got := <-events[st.toolset]:
				if got != want {
					t.Fatalf("step %d (%s changed): %s's client got %s list_changed, want %s", i, st.toolset, st.toolset, got, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("step %d: no %s list_changed for %s", i, want, st.toolset)
			}
		}
	}
}

// TestToolsetTakesPollers: a toolset holding a long-running tool holds
// the tools its description and results name for polling its operation
// (GetOperation, WaitOperation), though its patterns name only the tool.
func TestToolsetTakesPollers(t *testing.T) {
	srv, stop, err := lrotest.Start(lrotest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "jobs", srv.Addr)}, &gateway.Options{Search: gateway.SearchOptions{
		ToolMode: gateway.ToolModeTyped,
	},
		FrontDoor: gateway.FrontDoorOptions{
			Toolsets: []gateway.Toolset{{Name: "run", Include: []string{"lrotest.v1.Jobs/Run"}}},
		}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cs, err := connectAt(ctx, t, base, "streamable", "", "run")
	if err != nil {
		t.Fatal(err)
	}
	names := toolsetNames(ctx, t, cs)
	if !slices.Contains(names, "Jobs_Run") || !slices.ContainsFunc(names, func(n string) bool { return strings.HasSuffix(n, "GetOperation") }) {
		t.Errorf("the run toolset lists %v, want Jobs_Run and the GetOperation that polls it", names)
	}
	if slices.Contains(names, "Jobs_Peek") {
		t.Errorf("the run toolset lists %v: Jobs_Peek is not in it", names)
	}
}

// TestToolsetsSharePrincipalShare: a principal's share of requests in
// flight (MaxInFlightPerPrincipal) counts across the whole catalog's
// endpoint and the toolsets', not once per endpoint.
func TestToolsetsSharePrincipalShare(t *testing.T) {
	api, addr := slowAPI(t)
	a, _ := bearerAuth(t, "tok\n")
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "s", addr)}, &gateway.Options{Auth: a, Search: gateway.SearchOptions{
		ToolMode: gateway.ToolModeTyped,
	},
		Transports: gateway.TransportOptions{
			Server: &mcp.ServerOptions{MaxInFlightPerPrincipal: 1},
		}, FrontDoor: gateway.FrontDoorOptions{
			Toolsets: []gateway.Toolset{{Name: "all"}},
		}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	whole := connectAs(ctx, t, base, "streamable", "tok")
	ts, err := connectAt(ctx, t, base, "streamable", "tok", "all")
	if err != nil {
		t.Fatal(err)
	}
	checkSharedLimit(ctx, t, api, whole, ts, "server busy")
}

// TestToolsetsShareInFlight: the process's limit on requests in flight
// (MaxInFlight) counts the calls of every endpoint together.
func TestToolsetsShareInFlight(t *testing.T) {
	api, addr := slowAPI(t)
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "s", addr)}, &gateway.Options{Search: gateway.SearchOptions{
		ToolMode: gateway.ToolModeTyped,
	},
		Transports: gateway.TransportOptions{
			Server: &mcp.ServerOptions{MaxInFlight: 1},
		}, FrontDoor: gateway.FrontDoorOptions{
			Toolsets: []gateway.Toolset{{Name: "all"}},
		}})
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	checkSharedLimit(ctx, t, api, connect(t, base+"/mcp/all", "2025-11-25"), connect(t, base+"/mcp", "2025-11-25"), "server busy: 1 requests in flight")
}

// slowAPI serves S_Slow, which holds a call whose text is "block" until
// api.hold is closed.
func slowAPI(t *testing.T) (*fakeAPI, string) {
	api := &fakeAPI{hold: make(chan struct{}), held: make(chan struct{}, 1)}
	api.set(t, apiFile("svc.v1", "S", method("Slow")))
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	return api, addr
}

// checkSharedLimit holds a call through first, checks that a call
// through second is refused with busy while it runs, and admitted once
// it ended: a limit of one counted across both endpoints.
func checkSharedLimit(ctx context.Context, t *testing.T, api *fakeAPI, first, second *sdk.ClientSession, busy string) {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := first.CallTool(ctx, &sdk.CallToolParams{Name: "S_Slow", Arguments: map[string]any{"text": "block"}})
		done <- err
	}()
	<-api.held
	if _, err := second.CallTool(ctx, &sdk.CallToolParams{Name: "S_Slow", Arguments: map[string]any{"text": "x"}}); err == nil || !strings.Contains(err.Error(), busy) {
		t.Errorf("a call through the other endpoint while one runs: %v, want %q", err, busy)
	}
	close(api.hold)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if _, err := second.CallTool(ctx, &sdk.CallToolParams{Name: "S_Slow", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Errorf("after the first call ended: %v", err)
	}
}

// TestToolsetMessageResources: a toolset serves the message resources
// its own tools' schemas can name (what their requests and responses
// reach) and no other: through a toolset without the tool, or without the
// backend, a message the whole catalog serves is an unknown resource, as
// if the API did not exist.
func TestToolsetMessageResources(t *testing.T) {
	t.Parallel()
	api := &fakeAPI{}
	api.set(t, deepFile())
	big, _ := serveFake(t, api, "127.0.0.1:0")
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "big", big), dialBackend(t, "zoo", startBackend(t).addr)}, &gateway.Options{
		Search: gateway.SearchOptions{
			ToolMode: gateway.ToolModeTyped,
		}, FrontDoor: gateway.FrontDoorOptions{
			Toolsets: []gateway.Toolset{
				{Name: "deep", Include: []string{"big.v1.Big/Deep"}},
				{Name: "small", Include: []string{"big.v1.Big/Small"}},
				{Name: "zoo", Include: []string{"zoo.v1.*"}},
			},
		}})
	var uri string
	for _, tl := range g.Tools().Tools() {
		if m := regexp.MustCompile(`see resource (grpc://big/big\.v1\.Level[0-9]+)`).FindStringSubmatch(string(tl.InputSchema)); tl.Name == "Big_Deep" && m != nil {
			uri = m[1]
		}
	}
	if uri == "" {
		t.Fatal("Deep's input schema names no message resource: the test needs one")
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for path, served := range map[string]bool{"/mcp": true, "/mcp/deep": true, "/mcp/small": false, "/mcp/zoo": false} {
		res, err := connect(t, base+path, "2025-11-25").ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		switch {
		case served && (err != nil || len(res.Contents) != 1 || !strings.Contains(res.Contents[0].Text, "message Level")):
			t.Errorf("%s: reading %s: %v %v, want its source", path, uri, res, err)
		case !served && (err == nil || !strings.Contains(err.Error(), "not found")):
			t.Errorf("%s: reading %s: %v %v, want an unknown resource", path, uri, res, err)
		}
	}
}

// TestToolsetTaskOperations: task methods through a toolset call only the
// Operations methods the toolset holds: one whose patterns leave out
// CancelOperation cannot cancel a task (the backend never sees the
// attempt) while the whole catalog can, and tasks/get still polls through
// the GetOperation its long-running tool brings; with the Operations tools
// listed, and withheld under authentication alike.
func TestToolsetTaskOperations(t *testing.T) {
	toolsets := []gateway.Toolset{{Name: "runner", Include: []string{"lrotest.v1.Jobs/*"}}}
	is := newTestIssuer(t)
	for _, tc := range []struct {
		name  string
		start func(t *testing.T) (*lrotest.Server, string, string)
	}{
		{"listed", func(t *testing.T) (*lrotest.Server, string, string) {
			srv, _, url := startJobs(t, lrotest.Options{}, &gateway.Options{FrontDoor: gateway.FrontDoorOptions{Toolsets: toolsets}})
			return srv, url, ""
		}},
		{"withheld", func(t *testing.T) (*lrotest.Server, string, string) {
			srv, url := jobsWithAuth(t, is, nil, &gateway.Options{FrontDoor: gateway.FrontDoorOptions{Toolsets: toolsets}})
			return srv, url, is.token(t, zooAudience, "jobs", nil)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, url, token := tc.start(t)
			runner := newSessionClientAs(t, url+"/runner", token)
			id := startTask(runner)
			var got wireTask
			runner.result("tasks/get", map[string]any{"taskId": id}, "", &got)
			if got.Status != "working" {
				t.Errorf("tasks/get through the toolset: %+v", got)
			}
			r := runner.call("tasks/cancel", map[string]any{"taskId": id}, "")
			if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "not supported: this endpoint does not expose backend jobs's Operations method") {
				t.Errorf("tasks/cancel through a toolset without CancelOperation: %+v %s", r.Error, r.Result)
			}
			if len(srv.Cancelled()) != 0 {
				t.Fatalf("the toolset cancelled %v", srv.Cancelled())
			}
			newSessionClientAs(t, url, token).result("tasks/cancel", map[string]any{"taskId": id}, "", &got)
			if len(srv.Cancelled()) != 1 {
				t.Error("tasks/cancel through the whole catalog did not reach the backend")
			}
		})
	}
}

// TestToolsetSessionTokens: in the scale-out mode a session token says
// which endpoint issued it: one of /mcp is not a session at /mcp/NAME,
// nor one of a toolset at /mcp or at another toolset, for a request or a
// DELETE (404, as an unknown session), and the session goes on where it
// was issued.
func TestToolsetSessionTokens(t *testing.T) {
	_, base := toolsetGateway(t, &gateway.Options{Transports: gateway.TransportOptions{HTTP: &mcp.StreamableHTTPOptions{SessionSecret: []byte(strings.Repeat("s", 32))}}})
	paths := []string{"/mcp", "/mcp/zoo-read", "/mcp/shop"}
	clients := make([]*rpcClient, len(paths))
	for i, p := range paths {
		clients[i] = newSessionClient(t, base+p)
	}
	for i, issued := range clients {
		for j, at := range clients {
			if i == j {
				continue
			}
			elsewhere := *at
			elsewhere.session = issued.session
			if r := elsewhere.call("tools/list", map[string]any{}, ""); r.status != http.StatusNotFound {
				t.Errorf("a session of %s at %s: HTTP %d, want 404", paths[i], paths[j], r.status)
			}
			resp, err := (&testkit.Client{URL: base + paths[j], SessionID: issued.session}).Do(t.Context(), http.MethodDelete, nil, nil)
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != http.StatusNotFound {
				t.Errorf("DELETE of a session of %s at %s: HTTP %d, want 404", paths[i], paths[j], resp.Status)
			}
		}
	}
	for i, c := range clients {
		if r := c.call("tools/list", map[string]any{}, ""); r.status != http.StatusOK || r.Error != nil {
			t.Errorf("the session of %s after the others' attempts: HTTP %d %+v", paths[i], r.status, r.Error)
		}
	}
}
