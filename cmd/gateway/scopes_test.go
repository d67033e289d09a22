package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zootest"
	"github.com/grpc-mcp-gateway/gateway/internal/oauthtest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// issuer signs ES256 tokens for issuer "i" and audience "a", and serves
// its JWKS on a loopback URL the gateway may fetch over plain http.
type issuer struct{ *oauthtest.Issuer }

func newIssuer(t *testing.T) *issuer {
	return &issuer{oauthtest.NewIssuer(t)}
}

// args are the flags of an OAuth front door trusting the issuer.
func (is *issuer) args() []string {
	return []string{"--oauth-jwks-url", is.URL + "/jwks", "--oauth-issuer", "i", "--oauth-audience", "a"}
}

func (is *issuer) token(t *testing.T, scope string) string {
	t.Helper()
	return is.Token(t, "i", "a", scope, nil)
}

// statelessCall POSTs a 2026-07-28 stateless tools/call of tool as token.
func statelessCall(t *testing.T, base, token, tool string, args string) (*http.Response, string) {
	t.Helper()
	return statelessCallAt(t, base+"/mcp", token, tool, args)
}

// statelessCallAt is statelessCall to the Streamable HTTP endpoint url.
func statelessCallAt(t *testing.T, url, token, tool string, args string) (*http.Response, string) {
	t.Helper()
	raw := &testkit.Client{URL: url, Version: "2026-07-28", Header: testkit.Bearer(token)}
	resp, err := raw.Send(t.Context(), http.MethodPost, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+tool+`","arguments":`+args+`,`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`), testkit.MethodHeaders("tools/call", tool))
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(body)
}

// TestToolScopeRulesCommandLine: --oauth-tool-scope with a method pattern
// reaches the real binary's authorization: with two backends serving the
// zoo, DeleteAnimal is refused on both renamed tools without the scope
// (403 and the step-up challenge) and allowed with it; a rule that matches
// no tool is a warning at start naming the rule, and the gateway serves.
func TestToolScopeRulesCommandLine(t *testing.T) {
	is := newIssuer(t)
	zooA, zooB := zootest.Start(t), zootest.Start(t)
	p := startGatewayProcess(t, append(is.args(), "--backend", "zoo="+zooA, "--backend", "zoo2="+zooB, "--oauth-required-scope", "zoo",
		"--oauth-tool-scope", "zoo.v1.ZooService/DeleteAnimal=zoo:admin", "--oauth-tool-scope", "zoo.v1.ZooService/Nope=zoo:never")...)
	user, admin := is.token(t, "zoo"), is.token(t, "zoo zoo:admin")
	for _, tool := range []string{"zoo_ZooService_DeleteAnimal", "zoo2_ZooService_DeleteAnimal"} {
		resp, body := statelessCall(t, p.base, user, tool, `{"id":"leo"}`)
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Header.Get("WWW-Authenticate"), `error="insufficient_scope"`) ||
			!strings.Contains(resp.Header.Get("WWW-Authenticate"), `scope="zoo zoo:admin"`) {
			t.Errorf("%s without zoo:admin: %d %q %s, want 403 asking for zoo zoo:admin", tool, resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
		}
		resp, body = statelessCall(t, p.base, admin, tool, `{"id":"leo"}`)
		if resp.StatusCode != http.StatusOK || !strings.Contains(body, `"result"`) || strings.Contains(body, `"isError":true`) {
			t.Errorf("%s with zoo:admin: %d %s", tool, resp.StatusCode, body)
		}
	}
	if resp, body := statelessCall(t, p.base, user, "zoo_ZooService_GetAnimal", `{"id":"gerry"}`); resp.StatusCode != http.StatusOK || strings.Contains(body, `"isError":true`) {
		t.Errorf("GetAnimal with zoo: %d %s", resp.StatusCode, body)
	}
	var warned bool
	for _, line := range strings.Split(p.logs.String(), "\n") {
		warned = warned || strings.Contains(line, "level=WARN") && strings.Contains(line, `msg="tool scope rule matches no tool`) &&
			strings.Contains(line, "rule=zoo.v1.ZooService/Nope")
	}
	if !warned {
		t.Errorf("no warning naming the rule that matches no tool:\n%s", p.logs.String())
	}
}

// statelessList POSTs a 2026-07-28 stateless tools/list as token to the
// Streamable HTTP endpoint url and returns the body.
func statelessList(t *testing.T, url, token string) string {
	t.Helper()
	raw := &testkit.Client{URL: url, Version: "2026-07-28", Header: testkit.Bearer(token)}
	resp, err := raw.Do(t.Context(), http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`), testkit.MethodHeaders("tools/list", ""))
	if err != nil {
		t.Fatal(err)
	}
	return resp.Body
}

// TestListVisibleOnlyCommandLine: with --list-visible-only the real
// binary lists DeleteAnimal only to a token holding the scope its rule
// asks for, privately, and still refuses the hidden tool's call with
// the step-up challenge.
func TestListVisibleOnlyCommandLine(t *testing.T) {
	is := newIssuer(t)
	p := startGatewayProcess(t, append(is.args(), "--backend", "zoo="+zootest.Start(t), "--tool-mode", "typed", "--list-visible-only",
		"--oauth-tool-scope", "zoo.v1.ZooService/DeleteAnimal=zoo:admin")...)
	user, admin := is.token(t, "zoo"), is.token(t, "zoo zoo:admin")
	if body := statelessList(t, p.base+"/mcp", admin); !strings.Contains(body, `"ZooService_DeleteAnimal"`) || !strings.Contains(body, `"cacheScope":"private"`) {
		t.Errorf("admin's list: %s, want DeleteAnimal, privately", body)
	}
	if body := statelessList(t, p.base+"/mcp", user); strings.Contains(body, `"ZooService_DeleteAnimal"`) || !strings.Contains(body, `"ZooService_GetAnimal"`) {
		t.Errorf("user's list: %s, want GetAnimal and no DeleteAnimal", body)
	}
	if resp, body := statelessCall(t, p.base, user, "ZooService_DeleteAnimal", `{"id":"leo"}`); resp.StatusCode != http.StatusForbidden ||
		!strings.Contains(resp.Header.Get("WWW-Authenticate"), `scope="zoo:admin"`) {
		t.Errorf("user calls the hidden DeleteAnimal: %d %q %s, want 403 asking for zoo:admin", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
}
