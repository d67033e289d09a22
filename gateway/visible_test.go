package gateway_test

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// scopedShop is a backend whose API declares scopes: ShopService's
// DeleteItem needs shop:admin by its (mcpgateway.v1.tool) option, every
// AuditService method audit by its (mcpgateway.v1.service) option, and
// RenameItem declares a scope no token can hold (a space in it), which
// leaves it out of the catalog. UpdateItem is scoped by the operator's
// rule instead (visibleRules).
func scopedShop(t *testing.T) string {
	t.Helper()
	audit := apiFile("shop.v1.audit", "AuditService", method("ReadLog"))
	so := &descriptorpb.ServiceOptions{}
	proto.SetExtension(so, mcpgatewayv1.E_Service, &mcpgatewayv1.Service{Scopes: []string{"audit"}})
	audit.Service[0].Options = so
	api := &fakeAPI{}
	api.set(t, apiFile("shop.v1", "ShopService", method("GetItem"), methodWith("DeleteItem", &mcpgatewayv1.Tool{Scopes: []string{"shop:admin"}}),
		method("UpdateItem"), methodWith("RenameItem", &mcpgatewayv1.Tool{Scopes: []string{"shop admin"}})), audit)
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	return addr
}

var visibleRules = map[string][]string{"shop.v1.ShopService/Update*": {"shop:write"}}

// TestListVisibleOnly: with ListVisibleOnly, tools/list (typed mode) and
// search_tools (search mode) show each caller the tools its token's
// scopes allow, whether the scopes come from the API's options (a
// method's, a service's) or the operator's rules, over Streamable HTTP
// and WebSocket; a hidden tool's call is still refused with the scopes to
// ask for; a method whose declared scope is not a scope token is left
// out, and logged. Without the option every caller sees every tool.
func TestListVisibleOnly(t *testing.T) {
	everything := []string{"AuditService_ReadLog", "ShopService_DeleteItem", "ShopService_GetItem", "ShopService_UpdateItem"}
	callers := []struct {
		scope string
		sees  []string
	}{
		{"zoo", []string{"ShopService_GetItem"}},
		{"zoo shop:admin", []string{"ShopService_DeleteItem", "ShopService_GetItem"}},
		{"zoo audit shop:write", []string{"AuditService_ReadLog", "ShopService_GetItem", "ShopService_UpdateItem"}},
		{"zoo audit shop:admin shop:write", everything},
	}
	for _, mode := range []gateway.ToolMode{gateway.ToolModeTyped, gateway.ToolModeSearch} {
		for _, transport := range []string{"streamable", "websocket"} {
			t.Run(map[gateway.ToolMode]string{gateway.ToolModeTyped: "typed", gateway.ToolModeSearch: "search"}[mode]+"/"+transport, func(t *testing.T) {
				is := newTestIssuer(t)
				var logs scopeLogs
				_, base := newGateway(t, []gateway.Backend{dialBackend(t, "shop", scopedShop(t))},
					&gateway.Options{Auth: oauthWithRules(t, is, visibleRules), Search: gateway.SearchOptions{ToolMode: mode}, Scopes: gateway.ScopeOptions{ListVisibleOnly: true}, Logger: logs.logger()})
				ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
				defer cancel()
				for _, c := range callers {
					cs := connectAs(ctx, t, base, transport, is.token(t, zooAudience, c.scope, nil))
					if got := visibleTools(ctx, t, cs, mode); !slices.Equal(got, c.sees) {
						t.Errorf("scope %q sees %v, want %v", c.scope, got, c.sees)
					}
				}
				user := connectAs(ctx, t, base, transport, is.token(t, zooAudience, "zoo", nil))
				if got := tryCall(ctx, t, user, mode, "ShopService_DeleteItem", map[string]any{}); got != "zoo shop:admin" {
					t.Errorf("hidden DeleteItem called with scope zoo: refusal asks for %q, want \"zoo shop:admin\"", got)
				}
				if got := tryCall(ctx, t, user, mode, "AuditService_ReadLog", map[string]any{}); got != "zoo audit" {
					t.Errorf("hidden ReadLog called with scope zoo: refusal asks for %q, want \"zoo audit\"", got)
				}
				if r := logs.records(t, "method left out of the tool list: its scopes option is invalid"); len(r) == 0 || r[0]["method"] != "shop.v1.ShopService.RenameItem" {
					t.Errorf("RenameItem's invalid scope: logged %v", r)
				}
			})
		}
	}
	t.Run("off", func(t *testing.T) {
		is := newTestIssuer(t)
		_, base := newGateway(t, []gateway.Backend{dialBackend(t, "shop", scopedShop(t))},
			&gateway.Options{Auth: oauthWithRules(t, is, visibleRules), Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
		cs := connectAs(t.Context(), t, base, "streamable", is.token(t, zooAudience, "zoo", nil))
		if got := visibleTools(t.Context(), t, cs, gateway.ToolModeTyped); !slices.Equal(got, everything) {
			t.Errorf("without ListVisibleOnly scope zoo sees %v, want %v", got, everything)
		}
	})
}

// visibleTools are the catalog tools the session is shown, sorted: its
// tools/list in typed mode, its search_tools matches in search mode.
func visibleTools(ctx context.Context, t *testing.T, cs *sdk.ClientSession, mode gateway.ToolMode) []string {
	t.Helper()
	var got []string
	if mode == gateway.ToolModeTyped {
		for tl, err := range cs.Tools(ctx, nil) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, tl.Name)
		}
	} else {
		for _, q := range []string{"item", "log"} {
			got = append(got, names(searchTools(t, cs, map[string]any{"query": q}))...)
		}
		got = slices.Compact(slices.Sorted(slices.Values(got)))
	}
	slices.Sort(got)
	return got
}

// TestListVisibleOnlyPrivate: a caller's list is its own on the
// 2026-07-28 wire: cacheScope "private", so no intermediary serves it to
// another caller. (Its cursors are its own too: TestToolSetSubset.)
func TestListVisibleOnlyPrivate(t *testing.T) {
	is := newTestIssuer(t)
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "shop", scopedShop(t))},
		&gateway.Options{Auth: oauthWithRules(t, is, visibleRules), Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}, Scopes: gateway.ScopeOptions{ListVisibleOnly: true}})
	list := func(token string) string {
		t.Helper()
		params := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
		raw := &testkit.Client{URL: base + "/mcp", Version: "2026-07-28", Header: testkit.Bearer(token)}
		resp, err := raw.Do(t.Context(), http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+params+`}}`), testkit.MethodHeaders("tools/list", ""))
		if err != nil {
			t.Fatal(err)
		}
		return resp.Body
	}
	admin := list(is.token(t, zooAudience, "zoo audit shop:admin shop:write", nil))
	user := list(is.token(t, zooAudience, "zoo", nil))
	for who, body := range map[string]string{"admin": admin, "user": user} {
		if !strings.Contains(body, `"cacheScope":"private"`) {
			t.Errorf("%s's list: %s, want cacheScope private", who, body)
		}
	}
	if !strings.Contains(admin, "ShopService_DeleteItem") || strings.Contains(user, "ShopService_DeleteItem") {
		t.Errorf("admin's list %s, user's %s: want DeleteItem in the admin's only", admin, user)
	}
}

// TestDeclaredScopesNeedOAuth: scopes the API declares apply only with an
// OAuth front door; static bearer tokens, which hold no scopes, still
// call a method that declares one.
func TestDeclaredScopesNeedOAuth(t *testing.T) {
	a, _ := bearerAuth(t, "static-token\n")
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "shop", scopedShop(t))}, &gateway.Options{Auth: a, Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
	cs := connectAs(t.Context(), t, base, "streamable", "static-token")
	if got := tryCall(t.Context(), t, cs, gateway.ToolModeTyped, "ShopService_DeleteItem", map[string]any{}); got != "" {
		t.Errorf("DeleteItem with a static token: refused, asking for %q", got)
	}
}
