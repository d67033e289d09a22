package gateway_test

import (
	"context"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// swappingHandler is the gateway's own handler, with between run after
// the MCP layer resolved a tools/call and before the gateway runs it.
type swappingHandler struct {
	*gateway.Gateway
	between func()
}

func (h swappingHandler) CallTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	h.between()
	return h.Gateway.CallTool(ctx, req)
}

// TestCallResolvedOnce: a refresh that removes a tool after the MCP layer
// resolved a call of it, but before the gateway runs it, does not turn
// the call into an unknown tool: the call runs the tool of the list it
// was resolved in.
func TestCallResolvedOnce(t *testing.T) {
	t.Parallel()
	api := &fakeAPI{}
	api.set(t, apiFile("svc.v1", "S", method("A")))
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	g, _ := newGateway(t, []gateway.Backend{dialBackend(t, "s", addr)}, &gateway.Options{Catalog: gateway.CatalogOptions{Refresh: 50 * time.Millisecond}})
	h := swappingHandler{Gateway: g, between: func() {
		api.set(t, apiFile("svc.v1", "S", method("Other")))
		testkit.WaitFor(t, "the swap", func() bool { return slices.Equal(toolNames(g), []string{"S_Other"}) })
	}}
	streamable, err := mcp.NewServer(mcp.Implementation{Name: "swapping", Version: "1"}, h, nil).StreamableHTTPHandler(nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(streamable)
	t.Cleanup(srv.Close)
	cs := connect(t, srv.URL, "2025-11-25")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "S_A", Arguments: map[string]any{}})
	if err != nil {
		t.Fatalf("a call of a tool removed after it was resolved: %v", err)
	}
	if res.IsError {
		t.Errorf("a call of a tool removed after it was resolved: %+v", res.Content[0])
	}
}
