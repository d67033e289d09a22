package gateway_test

import (
	"context"
	"encoding/json"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
)

// TestSchemasOnFirstUse: a search-mode catalog is built without its tools'
// schemas (toolschemas.go) and builds a tool's on the first answer that
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
			typedG, typedURL := b.start(t, &gateway.Options{ToolMode: gateway.ToolModeTyped, MaxResultBytes: budget})
			searchG, searchURL := b.start(t, gateway.NoWarmSchemas(&gateway.Options{ToolMode: gateway.ToolModeSearch, MaxResultBytes: budget}))
			autoG, _ := b.start(t, gateway.NoWarmSchemas(&gateway.Options{ToolBudget: 10, MaxResultBytes: budget}))
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
	_, g, url := startGateway(t, &gateway.Options{ToolMode: gateway.ToolModeSearch})
	g.WaitWarmSchemas()
	if built, n := g.SchemasBuilt(); built != n || n == 0 {
		t.Fatalf("after the warm-up, %d of %d tools' schemas are built", built, n)
	}
	_, _, lazyURL := startGateway(t, gateway.NoWarmSchemas(&gateway.Options{ToolMode: gateway.ToolModeSearch}))
	warm, lazy := connect(t, url, "2025-11-25"), connect(t, lazyURL, "2025-11-25")
	for _, q := range []string{"list animals", "feed an animal", "zoo"} {
		args := map[string]any{"query": q, "limit": 10}
		if w, l := text(t, call(t, warm, gateway.SearchToolsName, args)), text(t, call(t, lazy, gateway.SearchToolsName, args)); w != l {
			t.Errorf("search %q after the warm-up:\n%s\non first use:\n%s", q, w, l)
		}
	}

	// Once stopped (Close), a warm-up builds nothing more; else it builds
	// every schema no answer has built.
	_, lazyG, _ := startGateway(t, gateway.NoWarmSchemas(&gateway.Options{ToolMode: gateway.ToolModeSearch}))
	lazyG.ForceSchemas(true)
	if built, n := lazyG.SchemasBuilt(); built != 0 {
		t.Errorf("a stopped warm-up built %d of %d tools' schemas", built, n)
	}
	lazyG.ForceSchemas(false)
	if built, n := lazyG.SchemasBuilt(); built != n {
		t.Errorf("a warm-up built %d of %d tools' schemas", built, n)
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
