package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zootest"
)

// TestToolsetsCommandLine: toolsets: in the config file reach the real
// binary: /mcp/zoo-read lists the zoo's reads only, answers a tool of
// the whole catalog outside it as unknown, and asks a token without its
// required scope to step up; /mcp still lists every tool.
func TestToolsetsCommandLine(t *testing.T) {
	is := newIssuer(t)
	cfg := writeFile(t, "gateway.yaml", `
tool_mode: typed
toolsets:
  - name: zoo-read
    description: "Look up the zoo's animals."
    include: ["zoo.v1.ZooService/Get*", "zoo.v1.ZooService/List*"]
  - name: keepers
    required_scope: [zoo:keeper]
`)
	p := startGatewayProcess(t, append(is.args(), "--config", cfg, "--backend", "zoo="+zootest.Start(t))...)
	user := is.token(t, "zoo")
	read := statelessList(t, p.base+"/mcp/zoo-read", user)
	if !strings.Contains(read, `"ZooService_GetAnimal"`) || strings.Contains(read, `"ZooService_DeleteAnimal"`) {
		t.Errorf("/mcp/zoo-read lists %s, want GetAnimal and not DeleteAnimal", read)
	}
	if all := statelessList(t, p.base+"/mcp", user); !strings.Contains(all, `"ZooService_DeleteAnimal"`) {
		t.Errorf("/mcp lists %s, want the whole catalog", all)
	}
	if _, body := statelessCallAt(t, p.base+"/mcp/zoo-read", user, "ZooService_DeleteAnimal", `{"id":"leo"}`); !strings.Contains(body, `unknown tool \"ZooService_DeleteAnimal\"`) {
		t.Errorf("DeleteAnimal through /mcp/zoo-read: %s, want unknown tool", body)
	}
	if resp, body := statelessCallAt(t, p.base+"/mcp/keepers", user, "ZooService_GetAnimal", `{"id":"leo"}`); resp.StatusCode != http.StatusForbidden ||
		!strings.Contains(resp.Header.Get("WWW-Authenticate"), `scope="zoo:keeper"`) {
		t.Errorf("/mcp/keepers without zoo:keeper: %d %q %s, want 403 asking for zoo:keeper", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	if resp, body := statelessCallAt(t, p.base+"/mcp/keepers", is.token(t, "zoo zoo:keeper"), "ZooService_GetAnimal", `{"id":"leo"}`); resp.StatusCode != http.StatusOK ||
		strings.Contains(body, `"isError":true`) {
		t.Errorf("/mcp/keepers with zoo:keeper: %d %s", resp.StatusCode, body)
	}
}
