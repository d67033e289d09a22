package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// scopeLogs captures a gateway's log as JSON records.
type scopeLogs struct{ buf testkit.SyncBuffer }

func (l *scopeLogs) logger() *slog.Logger {
	return slog.New(slog.NewJSONHandler(&l.buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// records returns the records logged so far whose message starts with msg.
func (l *scopeLogs) records(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(l.buf.String()))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r map[string]any
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		if m, _ := r["msg"].(string); strings.HasPrefix(m, msg) {
			out = append(out, r)
		}
	}
	return out
}

// unmatched returns, for each rule logged as matching no tool, the levels
// it was logged at, in order.
func (l *scopeLogs) unmatched(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, r := range l.records(t, "tool scope rule matches no tool") {
		rule, _ := r["rule"].(string)
		level, _ := r["level"].(string)
		out[rule] = append(out[rule], level)
	}
	return out
}

// oauthWithRules starts an OAuth front door: scope "zoo" for everything,
// and rules as the tool scope rules.
func oauthWithRules(t *testing.T, is *testIssuer, rules map[string][]string) *auth.Authenticator {
	t.Helper()
	a, err := auth.New(context.Background(), auth.Config{OAuth: &auth.OAuthConfig{
		JWKSURL: is.URL, Issuer: "https://as.example.com", Resource: zooAudience,
		RequiredScopes: []string{"zoo"}, ToolScopes: rules,
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

// callsTo is how many calls of method ("/zoo.v1.ZooService/GetAnimal")
// reached the backend.
func (b *recordingBackend) callsTo(method string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.calls[method]
}

// tryCall calls tool with args over cs, directly in typed mode and through
// call_tool in search mode. It returns the scopes a refusal asked for
// (those of the WWW-Authenticate challenge, as JSON-RPC error data on
// WebSocket), or "" when the call was let through to the backend.
func tryCall(ctx context.Context, t *testing.T, cs *sdk.ClientSession, mode gateway.ToolMode, tool string, args map[string]any) string {
	t.Helper()
	p := &sdk.CallToolParams{Name: tool, Arguments: args}
	if mode == gateway.ToolModeSearch {
		p = &sdk.CallToolParams{Name: gateway.CallToolName, Arguments: map[string]any{"name": tool, "arguments": args}}
	}
	res, err := cs.CallTool(ctx, p)
	if err == nil {
		if mode == gateway.ToolModeSearch && res.IsError && strings.Contains(res.Content[0].(*sdk.TextContent).Text, "unknown tool") {
			t.Fatalf("%s: not in the catalog", tool)
		}
		return ""
	}
	var je *jsonrpc.Error
	if !errors.As(err, &je) || je.Code != -32010 {
		t.Fatalf("%s: %v, want a result or a -32010 refusal", tool, err)
	}
	var data struct {
		Error string `json:"error"`
		Scope string `json:"scope"`
	}
	if err := json.Unmarshal(je.Data, &data); err != nil || data.Error != "insufficient_scope" {
		t.Fatalf("%s: refusal data %s, want insufficient_scope", tool, je.Data)
	}
	return data.Scope
}

// TestToolScopeRules: rules naming methods apply to every tool those
// methods become, here two zoos serving the same service (so every
// ZooService tool is renamed zoo_... and zoo2_...), in typed mode and
// through search mode's call_tool. A service wildcard covers all its
// methods, a package wildcard its services, a tool-name rule its tool; a
// tool matched by several rules needs all their scopes; a refused call
// never reaches the backend, and a token holding the scopes gets through.
// On the old code, which read every key as a tool name, the method rules
// matched nothing and every one of these calls went through.
func TestToolScopeRules(t *testing.T) {
	rules := map[string][]string{
		"zoo.v1.ZooService/DeleteAnimal": {"zoo:delete"},
		"zoo.v1.ZooService/*":            {"zoo:all"},
		"zoo.v1.ZooService/Get*":         {"zoo:read"},
		"ShopService_GetItem":            {"shop:read"},
		"shop.v1.*":                      {"shop"},
		"zoo.v1.ZooService/Nope":         {"zoo:never"},
	}
	cases := []struct {
		tool string
		args map[string]any
		// method is the call the backend sees, "" for the shop.
		method string
		want   string // the scopes a refusal of a "zoo" token asks for
	}{
		{"zoo_ZooService_DeleteAnimal", map[string]any{"id": "leo"}, "/zoo.v1.ZooService/DeleteAnimal", "zoo zoo:all zoo:delete"},
		{"zoo2_ZooService_DeleteAnimal", map[string]any{"id": "leo"}, "/zoo.v1.ZooService/DeleteAnimal", "zoo zoo:all zoo:delete"},
		{"zoo_ZooService_GetAnimal", map[string]any{"id": "leo"}, "/zoo.v1.ZooService/GetAnimal", "zoo zoo:all zoo:read"},
		{"zoo2_ZooService_GetAnimal", map[string]any{"id": "leo"}, "/zoo.v1.ZooService/GetAnimal", "zoo zoo:all zoo:read"},
		{"zoo2_ZooService_ListAnimals", map[string]any{}, "/zoo.v1.ZooService/ListAnimals", "zoo zoo:all"},
		{"ShopService_GetItem", map[string]any{"text": "x"}, "", "zoo shop shop:read"},
	}
	for _, mode := range []gateway.ToolMode{gateway.ToolModeTyped, gateway.ToolModeSearch} {
		t.Run(map[gateway.ToolMode]string{gateway.ToolModeTyped: "typed", gateway.ToolModeSearch: "search"}[mode], func(t *testing.T) {
			is := newTestIssuer(t)
			zooA, zooB := startRecordingBackend(t), startRecordingBackend(t)
			shopAPI := &fakeAPI{}
			shopAPI.set(t, apiFile("shop.v1", "ShopService", method("GetItem")))
			shop, _ := serveFake(t, shopAPI, "127.0.0.1:0")
			var logs scopeLogs
			g, base := newGateway(t, []gateway.Backend{
				dialBackend(t, "zoo", zooA.addr), dialBackend(t, "zoo2", zooB.addr), dialBackend(t, "shop", shop),
			}, &gateway.Options{Auth: oauthWithRules(t, is, rules), Search: gateway.SearchOptions{ToolMode: mode}, Logger: logs.logger()})
			if names := toolNames(g); mode == gateway.ToolModeTyped && (!slices.Contains(names, "zoo2_ZooService_DeleteAnimal") || slices.Contains(names, "ZooService_DeleteAnimal")) {
				t.Fatalf("tools %v: want the ZooService tools renamed per backend", names)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			user := connectAs(ctx, t, base, "websocket", is.token(t, zooAudience, "zoo", nil))
			for _, c := range cases {
				b := zooA
				if strings.HasPrefix(c.tool, "zoo2_") {
					b = zooB
				}
				before := b.callsTo(c.method)
				if got := tryCall(ctx, t, user, mode, c.tool, c.args); got != c.want {
					t.Errorf("%s with scope zoo: refusal asks for %q, want %q", c.tool, got, c.want)
				}
				if c.method != "" && b.callsTo(c.method) != before {
					t.Errorf("%s: the refused call reached the backend", c.tool)
				}
				granted := connectAs(ctx, t, base, "websocket", is.token(t, zooAudience, c.want, nil))
				if got := tryCall(ctx, t, granted, mode, c.tool, c.args); got != "" {
					t.Errorf("%s with scopes %q: refused, asking for %q", c.tool, c.want, got)
				}
				if c.method != "" && b.callsTo(c.method) != before+1 {
					t.Errorf("%s with its scopes: %d calls reached the backend, want 1", c.tool, b.callsTo(c.method)-before)
				}
			}
			if got := logs.unmatched(t); len(got) != 1 || !slices.Equal(got["zoo.v1.ZooService/Nope"], []string{"WARN"}) {
				t.Errorf("rules logged as matching nothing: %v, want zoo.v1.ZooService/Nope once, at WARN", got)
			}
		})
	}
}

// TestToolNameRuleFollowsCollision: a rule naming a tool keeps applying
// when a backend that appears later serves a tool of the same name and
// both are renamed (the hole of issue 20: the scope silently stopped
// applying); a method rule does too. The tool-name rule's reach over the
// renamed tools is logged, with the advice to name the method.
func TestToolNameRuleFollowsCollision(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	lateAddr := lis.Addr().String()
	lis.Close()

	is := newTestIssuer(t)
	first := &fakeAPI{}
	first.set(t, apiFile("svc.v1", "S", method("A"), method("B")))
	firstAddr, _ := serveFake(t, first, "127.0.0.1:0")
	rules := map[string][]string{"S_A": {"s:name"}, "svc.v1.S/B": {"s:method"}}
	var logs scopeLogs
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "a", firstAddr), dialBackend(t, "b", lateAddr)},
		&gateway.Options{Auth: oauthWithRules(t, is, rules), Catalog: gateway.CatalogOptions{Refresh: -1}, Logger: logs.logger()})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	user := connectAs(ctx, t, base, "websocket", is.token(t, zooAudience, "zoo", nil))
	for tool, want := range map[string]string{"S_A": "zoo s:name", "S_B": "zoo s:method"} {
		if got := tryCall(ctx, t, user, gateway.ToolModeTyped, tool, map[string]any{}); got != want {
			t.Errorf("before the collision, %s: refusal asks for %q, want %q", tool, got, want)
		}
	}

	late := &fakeAPI{}
	late.set(t, apiFile("svc.v1", "S", method("A"), method("B")))
	serveFake(t, late, lateAddr)
	want := []string{"a_S_A", "a_S_B", "b_S_A", "b_S_B"}
	testkit.WaitFor(t, "the colliding tools renamed", func() bool { return slices.Equal(toolNames(g), want) })
	user = connectAs(ctx, t, base, "websocket", is.token(t, zooAudience, "zoo", nil))
	for tool, want := range map[string]string{"a_S_A": "zoo s:name", "b_S_A": "zoo s:name", "a_S_B": "zoo s:method", "b_S_B": "zoo s:method"} {
		if got := tryCall(ctx, t, user, gateway.ToolModeTyped, tool, map[string]any{}); got != want {
			t.Errorf("after the collision, %s: refusal asks for %q, want %q", tool, got, want)
		}
	}
	granted := connectAs(ctx, t, base, "websocket", is.token(t, zooAudience, "zoo s:name", nil))
	if got := tryCall(ctx, t, granted, gateway.ToolModeTyped, "b_S_A", map[string]any{}); got != "" {
		t.Errorf("b_S_A with s:name: refused, asking for %q", got)
	}
	renamed := logs.records(t, "tool scope rule names a tool that a name collision renamed")
	if len(renamed) != 1 || renamed[0]["rule"] != "S_A" || renamed[0]["level"] != "WARN" || !slices.Equal(toStrings(renamed[0]["tools"]), []string{"a_S_A", "b_S_A"}) {
		t.Errorf("the renamed tools of rule S_A logged as %v, want one warning naming a_S_A and b_S_A", renamed)
	}
	if got := logs.unmatched(t); len(got) != 0 {
		t.Errorf("rules logged as matching nothing: %v", got)
	}
}

// TestToolNameRuleFollowsPackageCollision: the same within one backend,
// when a refresh brings a second package with a service of the same name
// and both tools are qualified with their package (S_A becomes v1_S_A and
// v2_S_A).
func TestToolNameRuleFollowsPackageCollision(t *testing.T) {
	is := newTestIssuer(t)
	api := &fakeAPI{}
	api.set(t, apiFile("svc.v1", "S", method("A")))
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	var logs scopeLogs
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "s", addr)},
		&gateway.Options{Auth: oauthWithRules(t, is, map[string][]string{"S_A": {"s:name"}}), Catalog: gateway.CatalogOptions{Refresh: 20 * time.Millisecond}, Logger: logs.logger()})
	api.set(t, apiFile("svc.v1", "S", method("A")), apiFile("svc.v2", "S", method("A")))
	testkit.WaitFor(t, "the tools qualified with their package", func() bool { return slices.Equal(toolNames(g), []string{"v1_S_A", "v2_S_A"}) })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	user := connectAs(ctx, t, base, "websocket", is.token(t, zooAudience, "zoo", nil))
	for _, tool := range []string{"v1_S_A", "v2_S_A"} {
		if got := tryCall(ctx, t, user, gateway.ToolModeTyped, tool, map[string]any{}); got != "zoo s:name" {
			t.Errorf("%s: refusal asks for %q, want \"zoo s:name\"", tool, got)
		}
	}
	renamed := logs.records(t, "tool scope rule names a tool that a name collision renamed")
	if len(renamed) != 1 || renamed[0]["rule"] != "S_A" || !slices.Equal(toStrings(renamed[0]["tools"]), []string{"v1_S_A", "v2_S_A"}) {
		t.Errorf("the renamed tools of rule S_A logged as %v, want one warning naming v1_S_A and v2_S_A", renamed)
	}
}

// TestToolNameRuleOnQualifiedName: a tool-name rule written against the
// name a collision gave a tool (v1_S_A) keeps covering that method when a
// refresh ends the collision (the tool becomes S_A) or makes the name
// longer (svc_v1_S_A): the rule is pinned to the methods it matched.
func TestToolNameRuleOnQualifiedName(t *testing.T) {
	for _, tc := range []struct {
		name  string
		after []*descriptorpb.FileDescriptorProto
		tools []string
		want  string // the tool of svc.v1.S/A after the refresh
	}{
		{"collision ends", []*descriptorpb.FileDescriptorProto{apiFile("svc.v1", "S", method("A"))}, []string{"S_A"}, "S_A"},
		{"name grows", []*descriptorpb.FileDescriptorProto{apiFile("svc.v1", "S", method("A")), apiFile("svc.v2", "S", method("A")), apiFile("other.v1", "S", method("A"))},
			[]string{"other_v1_S_A", "svc_v1_S_A", "v2_S_A"}, "svc_v1_S_A"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			is := newTestIssuer(t)
			api := &fakeAPI{}
			api.set(t, apiFile("svc.v1", "S", method("A")), apiFile("svc.v2", "S", method("A")))
			addr, _ := serveFake(t, api, "127.0.0.1:0")
			g, base := newGateway(t, []gateway.Backend{dialBackend(t, "s", addr)},
				&gateway.Options{Auth: oauthWithRules(t, is, map[string][]string{"v1_S_A": {"s:admin"}}), Catalog: gateway.CatalogOptions{Refresh: 20 * time.Millisecond}, Scopes: gateway.ScopeOptions{Strict: true}})
			if !slices.Equal(toolNames(g), []string{"v1_S_A", "v2_S_A"}) {
				t.Fatalf("tools at start: %v", toolNames(g))
			}
			api.set(t, tc.after...)
			testkit.WaitFor(t, "the refreshed names", func() bool { return slices.Equal(toolNames(g), tc.tools) })
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			user := connectAs(ctx, t, base, "websocket", is.token(t, zooAudience, "zoo", nil))
			if got := tryCall(ctx, t, user, gateway.ToolModeTyped, tc.want, map[string]any{}); got != "zoo s:admin" {
				t.Errorf("%s (svc.v1.S/A, scoped as v1_S_A): refusal asks for %q, want \"zoo s:admin\"", tc.want, got)
			}
		})
	}
}

func toStrings(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		out = append(out, e.(string))
	}
	return out
}

// TestScopeRuleUnmatchedLogged: a rule that matches no tool is logged as a
// warning at start, naming it, and again after each refresh that leaves
// it matching nothing; a rule whose tool a refresh removes is logged
// then. With StrictScopes the same after start is logged as an error,
// and the rule stays in force: its tool, back, needs its scope again.
func TestScopeRuleUnmatchedLogged(t *testing.T) {
	for _, strict := range []bool{false, true} {
		t.Run(map[bool]string{false: "warn", true: "strict"}[strict], func(t *testing.T) {
			is := newTestIssuer(t)
			api := &fakeAPI{}
			api.set(t, apiFile("svc.v1", "S", method("A"), method("B")))
			addr, _ := serveFake(t, api, "127.0.0.1:0")
			rules := map[string][]string{"svc.v1.S/B": {"s:b"}}
			if !strict {
				rules["svc.v1.Gone/*"] = []string{"s:gone"}
			}
			var logs scopeLogs
			g, base := newGateway(t, []gateway.Backend{dialBackend(t, "s", addr)},
				&gateway.Options{Auth: oauthWithRules(t, is, rules), Catalog: gateway.CatalogOptions{Refresh: 20 * time.Millisecond}, Logger: logs.logger(), Scopes: gateway.ScopeOptions{Strict: strict}})
			level := "WARN"
			want := map[string][]string{"svc.v1.Gone/*": {level}}
			if strict {
				level, want = "ERROR", map[string][]string{}
			}
			if got := logs.unmatched(t); !equalLevels(got, want) {
				t.Errorf("at start: %v, want %v", got, want)
			}

			api.set(t, apiFile("svc.v1", "S", method("A")))
			testkit.WaitFor(t, "S_B removed", func() bool { return slices.Equal(toolNames(g), []string{"S_A"}) })
			want["svc.v1.S/B"] = []string{level}
			if !strict {
				want["svc.v1.Gone/*"] = append(want["svc.v1.Gone/*"], level)
			}
			if got := logs.unmatched(t); !equalLevels(got, want) {
				t.Errorf("after the refresh that removed S_B: %v, want %v", got, want)
			}

			api.set(t, apiFile("svc.v1", "S", method("A"), method("B")))
			testkit.WaitFor(t, "S_B back", func() bool { return slices.Equal(toolNames(g), []string{"S_A", "S_B"}) })
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			user := connectAs(ctx, t, base, "websocket", is.token(t, zooAudience, "zoo", nil))
			if got := tryCall(ctx, t, user, gateway.ToolModeTyped, "S_B", map[string]any{}); got != "zoo s:b" {
				t.Errorf("S_B back: refusal asks for %q, want \"zoo s:b\"", got)
			}
			if got := logs.unmatched(t)["svc.v1.S/B"]; len(got) != 1 {
				t.Errorf("svc.v1.S/B logged as matching nothing %d times, want once (only while S_B was gone)", len(got))
			}
		})
	}
}

func equalLevels(a, b map[string][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return true
}

// TestStrictScopesAtStart: with StrictScopes, a rule that matches no tool
// of the first catalog fails New, naming the rule and the backends not
// yet discovered whose tools it might have matched; errors.Is finds
// ErrUnmatchedScopeRule. Without StrictScopes the gateway starts.
func TestStrictScopesAtStart(t *testing.T) {
	is := newTestIssuer(t)
	api := &fakeAPI{}
	api.set(t, apiFile("svc.v1", "S", method("A")))
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	rules := map[string][]string{"svc.v1.S/A": {"s:a"}, "svc.v1.Late/*": {"s:late"}, "Late_Hello": {"s:late"}}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	backends := []gateway.Backend{dialBackend(t, "s", addr), dialBackend(t, "late", "127.0.0.1:1")}
	_, err := gateway.New(ctx, backends, &gateway.Options{Auth: oauthWithRules(t, is, rules), Scopes: gateway.ScopeOptions{Strict: true}, Catalog: gateway.CatalogOptions{Refresh: -1}})
	const want = `OAuthConfig.ToolScopes: "Late_Hello", "svc.v1.Late/*": tool scope rule matches no tool (backends not discovered at start: late), and strict scopes refuse to start with it`
	var oe *gateway.OptionError
	if !errors.Is(err, gateway.ErrUnmatchedScopeRule) || err.Error() != want || !errors.As(err, &oe) || oe.Option != "OAuthConfig.ToolScopes" {
		t.Errorf("New: %v\nwant: %s, an OptionError naming OAuthConfig.ToolScopes", err, want)
	}
	g, err := gateway.New(ctx, backends, &gateway.Options{Auth: oauthWithRules(t, is, rules), Catalog: gateway.CatalogOptions{Refresh: -1}})
	if err != nil {
		t.Fatalf("without StrictScopes: %v", err)
	}
	_ = g.Shutdown(ctx)
}

// TestScopeRuleSyntax: every rule is checked when the gateway starts, and
// a malformed one is refused naming the setting, the rule, what is wrong
// and what a rule may be.
func TestScopeRuleSyntax(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		rule, err string // err "" for a valid rule
	}{
		{"ZooService_DeleteAnimal", ""},
		{"zoo2_Zoo-WhoAmI", ""},
		{"zoo.v1.ZooService/DeleteAnimal", ""},
		{"zoo.v1.ZooService/*", ""},
		{"zoo.v1.ZooService/Get*", ""},
		{"zoo.v1.ZooService", ""},
		{"zoo.v1.*", ""},
		{"zoo.v1.*/*", ""},
		{"*/Delete*", ""},
		{"Greeter/*", ""},
		{"zoo.v[12].ZooService/[^D]*", ""},
		{"", "empty rule"},
		{"ZooService_*", "not a tool name, and without '/' or '.' not a method pattern either"},
		{"Zoo Service", "not a tool name"},
		{strings.Repeat("x", 65), "not a tool name"},
		{"zoo.v1.[/*", "syntax error in pattern"},
		{"zoo.v1.ZooService/Get/Animal", "more than one '/'"},
		{"/DeleteAnimal", "no service before '/'"},
		{"zoo.v1.ZooService/", "no method after '/'"},
		{"zoo.v1.ZooService/zoo.v1.Delete", "a '.' after '/'"},
		{"zoo.v1.Zoo Service/*", `" " cannot appear in a method name or a glob`},
		{"zoo.v1.ZooService/Delete=x", `"=" cannot appear`},
	} {
		err := gateway.CheckScopeRule(c.rule)
		var oe *gateway.OptionError
		switch {
		case c.err == "" && err != nil:
			t.Errorf("%q: %v, want valid", c.rule, err)
		case c.err != "" && (!errors.As(err, &oe) || oe.Option != "OAuthConfig.ToolScopes" || !strings.HasPrefix(oe.Err.Error(), fmt.Sprintf("%q: ", c.rule)) ||
			!strings.Contains(oe.Err.Error(), c.err) ||
			!strings.Contains(oe.Err.Error(), "want a tool name (1-64 of A-Z a-z 0-9 _ -, e.g. ZooService_DeleteAnimal) or a method pattern on package.Service/Method")):
			t.Errorf("%q: %v, want an *OptionError on OAuthConfig.ToolScopes quoting the rule, saying %q and what a rule may be", c.rule, err, c.err)
		}
	}

	is := newTestIssuer(t)
	b := startBackend(t)
	_, err := gateway.New(context.Background(), []gateway.Backend{dialBackend(t, "zoo", b.addr)},
		&gateway.Options{Auth: oauthWithRules(t, is, map[string][]string{"zoo.v1.[/*": {"zoo:admin"}})})
	var oe *gateway.OptionError
	if !errors.As(err, &oe) || oe.Option != "OAuthConfig.ToolScopes" || !strings.HasPrefix(oe.Err.Error(), `"zoo.v1.[/*": syntax error in pattern`) {
		t.Errorf("New with a malformed rule: %v", err)
	}
}

// TestTaskMethodsFollowMethodRules: a task method is authorized as the
// tool that started the task and as the Operations tool it amounts to,
// with the scopes method rules resolved for them: without the starting
// method's scope a task cannot even be read, without CancelOperation's it
// cannot be cancelled, and the refused cancel never reaches the backend.
func TestTaskMethodsFollowMethodRules(t *testing.T) {
	is := newTestIssuer(t)
	srv, stop, err := lrotest.Start(lrotest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	a := oauthWithRules(t, is, map[string][]string{
		"lrotest.v1.Jobs/Run": {"jobs:run"}, "google.longrunning.Operations/CancelOperation": {"jobs:admin"},
	})
	url := serveGateway(t, srv.Addr, &gateway.Options{Auth: a}) + "/mcp"

	runner := newSessionClientAs(t, url, is.token(t, zooAudience, "zoo jobs:run", nil))
	var created struct {
		Task wireTask `json:"task"`
	}
	runner.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"never": true}, "task": map[string]any{}}, "", &created)
	var got wireTask
	runner.result("tasks/get", map[string]any{"taskId": created.Task.TaskID}, "", &got)
	if got.Status != "working" {
		t.Errorf("tasks/get with jobs:run: %+v", got)
	}
	refused := func(who *rpcClient, method string) {
		t.Helper()
		r := who.call(method, map[string]any{"taskId": created.Task.TaskID}, "")
		if r.status != http.StatusForbidden || r.Error == nil || r.Error.Code != -32010 {
			t.Errorf("%s: HTTP %d %+v, want 403 and -32010", method, r.status, r.Error)
		}
	}
	refused(newSessionClientAs(t, url, is.token(t, zooAudience, "zoo", nil)), "tasks/get")
	refused(runner, "tasks/cancel")
	if n := len(srv.Cancelled()); n != 0 {
		t.Errorf("the refused cancel reached the backend")
	}
	admin := newSessionClientAs(t, url, is.token(t, zooAudience, "zoo jobs:run jobs:admin", nil))
	admin.result("tasks/cancel", map[string]any{"taskId": created.Task.TaskID}, "", &got)
	if got.Status != "cancelled" || len(srv.Cancelled()) != 1 {
		t.Errorf("tasks/cancel with jobs:admin: %+v, backend cancelled %v", got, srv.Cancelled())
	}
}
