package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// TestSchemasOnFirstUse: a search-mode catalog is built without its tools'
// schemas (gateway/internal/compiled/schemas.go) and builds a tool's on the first answer that
// carries it, while calls, cut results and long-running tools work
// before; what search shows of every tool (its description and input
// schema) is byte for byte what typed mode lists. ToolModeAuto decides
// search on a lower bound without building a schema, and typed mode
// builds them all before it is ready. (The background warm-up, which
// would build them soon after, is off here; TestSchemasWarmUp.)
func TestSchemasOnFirstUse(t *testing.T) {
	const budget = 1500
	for _, b := range []struct {
		name  string
		start func(t *testing.T, opts *gateway.Options) (*gateway.Gateway, string)
		call  string
		args  map[string]any
	}{
		{"zoo", func(t *testing.T, opts *gateway.Options) (*gateway.Gateway, string) {
			_, g, url := startGateway(t, opts)
			return g, url
		}, "ZooService_ListAnimals", map[string]any{"pageSize": 17}},
		{"jobs", func(t *testing.T, opts *gateway.Options) (*gateway.Gateway, string) {
			srv, stop, err := lrotest.Start(lrotest.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(stop)
			g, base := newGateway(t, []gateway.Backend{dialBackend(t, "jobs", srv.Addr)}, opts)
			return g, base + "/mcp"
		}, "", nil},
	} {
		t.Run(b.name, func(t *testing.T) {
			typedG, typedURL := b.start(t, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}, Results: gateway.ResultOptions{MaxBytes: budget}})
			searchG, searchURL := b.start(t, gateway.NoWarmSchemas(&gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}, Results: gateway.ResultOptions{MaxBytes: budget}}))
			autoG, _ := b.start(t, gateway.NoWarmSchemas(&gateway.Options{Search: gateway.SearchOptions{ToolBudget: 10}, Results: gateway.ResultOptions{MaxBytes: budget}}))
			if built, n := typedG.SchemasBuilt(); built != n || n == 0 {
				t.Fatalf("typed mode ready with %d of %d tools' schemas built", built, n)
			}
			for name, g := range map[string]*gateway.Gateway{"search": searchG, "auto over its budget": autoG} {
				if built, n := g.SchemasBuilt(); built != 0 {
					t.Errorf("%s: ready with %d of %d tools' schemas built, want none", name, built, n)
				}
			}
			typed, search := connect(t, typedURL, "2025-11-25"), connect(t, searchURL, "2025-11-25")

			if b.call != "" {
				// A cut needs the output schema's root (where the cuts go):
				// the same cut whether the schema is built or not.
				want := call(t, typed, b.call, b.args)
				got := call(t, search, gateway.CallToolName, viaCallTool(b.call, b.args))
				if w, g := structuredJSON(t, want), structuredJSON(t, got); w != g {
					t.Errorf("%s cut through call_tool before its schema was built:\n got %s\nwant %s", b.call, g, w)
				}
				if built, _ := searchG.SchemasBuilt(); built != 0 {
					t.Errorf("a call built %d tools' schemas; calls need none", built)
				}
			}

			list, err := typed.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, tool := range list.Tools {
				got := searchTools(t, search, map[string]any{"query": tool.Name, "limit": 1})
				if len(got) != 1 || got[0].Name != tool.Name {
					t.Fatalf("exact-name search for %s: %v", tool.Name, names(got))
				}
				wantSchema, _ := json.Marshal(tool.InputSchema)
				if got[0].Description != tool.Description || !jsonSame(t, got[0].InputSchema, wantSchema) {
					t.Errorf("%s: search shows\n%s\n%s\ntyped lists\n%s\n%s", tool.Name, got[0].Description, got[0].InputSchema, tool.Description, wantSchema)
				}
				if built, _ := searchG.SchemasBuilt(); built > i+1 {
					t.Errorf("after %d exact-name searches, %d tools' schemas are built", i+1, built)
				}
			}
			if built, n := searchG.SchemasBuilt(); built != n {
				t.Errorf("every tool was searched by name, and %d of %d have their schemas built", built, n)
			}
		})
	}
}

// TestSchemasWarmUp: a search-mode gateway builds its tools' schemas in
// the background once it is ready, the same schemas as first use builds,
// and a stopped warm-up builds no more (goleak in TestMain checks that
// Close leaves none running).
func TestSchemasWarmUp(t *testing.T) {
	_, g, url := startGateway(t, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}})
	g.WaitWarmSchemas()
	if built, n := g.SchemasBuilt(); built != n || n == 0 {
		t.Fatalf("after the warm-up, %d of %d tools' schemas are built", built, n)
	}
	_, _, lazyURL := startGateway(t, gateway.NoWarmSchemas(&gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}}))
	warm, lazy := connect(t, url, "2025-11-25"), connect(t, lazyURL, "2025-11-25")
	for _, q := range []string{"list animals", "feed an animal", "zoo"} {
		args := map[string]any{"query": q, "limit": 10}
		if w, l := text(t, call(t, warm, gateway.SearchToolsName, args)), text(t, call(t, lazy, gateway.SearchToolsName, args)); w != l {
			t.Errorf("search %q after the warm-up:\n%s\non first use:\n%s", q, w, l)
		}
	}

	// Once stopped (Close), a warm-up builds nothing more; else it builds
	// every schema no answer has built.
	_, lazyG, _ := startGateway(t, gateway.NoWarmSchemas(&gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}}))
	lazyG.ForceSchemas(true)
	if built, n := lazyG.SchemasBuilt(); built != 0 {
		t.Errorf("a stopped warm-up built %d of %d tools' schemas", built, n)
	}
	lazyG.ForceSchemas(false)
	if built, n := lazyG.SchemasBuilt(); built != n {
		t.Errorf("a warm-up built %d of %d tools' schemas", built, n)
	}
}

// TestSearchDropsOutputSchemas: search mode keeps its tools' input
// schemas only, and when a refresh makes ToolModeAuto list the same tools
// typed (another backend shrank), their output schemas are built again,
// the same as a typed gateway lists.
func TestSearchDropsOutputSchemas(t *testing.T) {
	zooAddr := startBackend(t).addr
	_, typedURL := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", zooAddr)}, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
	want, err := connect(t, typedURL+"/mcp", "2025-11-25").ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	outputs := make(map[string]any)
	for _, tool := range want.Tools {
		if tool.OutputSchema != nil {
			outputs[tool.Name] = tool.OutputSchema
		}
	}
	if len(outputs) == 0 {
		t.Fatal("the typed zoo catalog has no output schema to compare")
	}
	listed, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}

	// The budget holds the zoo and one more tool, not 400 more.
	var many []*descriptorpb.MethodDescriptorProto
	for i := range 400 {
		many = append(many, method(fmt.Sprintf("Method%03d", i)))
	}
	api := &fakeAPI{}
	api.set(t, apiFile("svc.v1", "S", many...))
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", zooAddr), dialBackend(t, "s", addr)},
		&gateway.Options{Catalog: gateway.CatalogOptions{Refresh: 50 * time.Millisecond}, Search: gateway.SearchOptions{ToolBudget: len(listed)/4 + 1000}})
	var lc listChanges
	cs := connectWSNotified(t, base+"/mcp", lc.options())
	if got := testkit.ToolNames(t, context.Background(), cs); !slices.Equal(got, []string{gateway.SearchToolsName, gateway.CallToolName}) {
		t.Fatalf("zoo and 400 tools over the budget: %v, want search mode", got)
	}
	g.WaitWarmSchemas()
	if built, n := g.SchemasBuilt(); built != n {
		t.Fatalf("after the warm-up, %d of %d tools' schemas are built", built, n)
	}
	if held := g.OutputSchemasHeld(); held != 0 {
		t.Errorf("search mode holds %d output schemas, want none", held)
	}

	api.set(t, apiFile("svc.v1", "S", method("A")))
	select {
	case <-lc.kick:
	case <-time.After(10 * time.Second):
		t.Fatal("no list_changed once the catalog shrank under the budget")
	}
	got, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, tool := range got.Tools {
		w, ok := outputs[tool.Name]
		if !ok {
			continue
		}
		seen++
		ws, _ := json.Marshal(w)
		gs, _ := json.Marshal(tool.OutputSchema)
		if !jsonSame(t, gs, ws) {
			t.Errorf("%s: typed after search lists the output schema\n%s\nwant\n%s", tool.Name, gs, ws)
		}
	}
	if seen != len(outputs) {
		t.Errorf("typed after search lists %d of the zoo's %d tools with output schemas", seen, len(outputs))
	}
}

// structuredJSON is a result's structuredContent.
func structuredJSON(t *testing.T, res *sdk.CallToolResult) string {
	t.Helper()
	if res.IsError {
		t.Fatalf("isError: %s", text(t, res))
	}
	js, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	return string(js)
}

func jsonSame(t *testing.T, a, b []byte) bool {
	t.Helper()
	var x, y any
	if err := json.Unmarshal(a, &x); err != nil {
		return false
	}
	if err := json.Unmarshal(b, &y); err != nil {
		t.Fatal(err)
	}
	return jsonEqual(x, y)
}
