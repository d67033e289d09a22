package main

import (
	"os/exec"
	"slices"
	"strings"
	"testing"
)

// TestPackageBoundaries holds the layering README.md's Architecture
// section describes: reflection knows nothing of the MCP side, gateway/mcp
// nothing of gRPC or protobuf, gateway/results nothing but JSON,
// internal/search (and its embeddings client) nothing of tools, gRPC or
// MCP, gateway/internal/describe nothing of MCP, gateway/backendconn nothing of the
// gateway or MCP (of this module it uses internal packages only) while
// gateway uses it, and the binary does not link the official MCP SDK or
// the test helpers (internal/testkit), used by tests only; testkit uses
// none of the gateway's packages, so any package's tests may import it.
func TestPackageBoundaries(t *testing.T) {
	t.Parallel()
	const mod = "github.com/grpc-mcp-gateway/gateway/"
	deps := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	// The connection layer: gateway → backendconn, never the reverse.
	const conn = mod + "gateway/backendconn"
	if !slices.Contains(deps(mod+"gateway"), conn) {
		t.Errorf("%sgateway does not depend on %s: backend connections are made there", mod, conn)
	}
	for _, dep := range deps(conn) {
		if strings.HasPrefix(dep, mod) && dep != conn && !strings.HasPrefix(dep, mod+"internal/") {
			t.Errorf("%s depends on %s: of this module it may use internal packages only, never gateway or gateway/mcp", conn, dep)
		}
	}
	// The gateway's concept packages under gateway/internal sit below the
	// assembler (gateway): of this module each imports only the packages
	// its entry names, and none reaches gateway itself, so imports run
	// one way, down.
	imports := func(pkg string) []string {
		out, err := exec.Command("go", "list", "-f", `{{join .Imports "\n"}}`, pkg).Output()
		if err != nil {
			t.Fatalf("go list -f {{.Imports}} %s: %v", pkg, err)
		}
		return strings.Fields(string(out))
	}
	for pkg, allowed := range map[string][]string{
		mod + "gateway/internal/taskid":    nil,
		mod + "gateway/internal/callwire":  nil,
		mod + "gateway/internal/forward":   {mod + "internal/grpcmeta", mod + "internal/option"},
		mod + "gateway/internal/anytypes":  {mod + "descriptors", mod + "internal/schema", mod + "gateway/internal/transcode"},
		mod + "gateway/internal/rpcstatus": {mod + "gateway/internal/anytypes", mod + "gateway/mcp", mod + "gateway/telemetry"},
		mod + "gateway/internal/toolname":  {mod + "proto/mcpgateway/v1"},
		mod + "gateway/internal/scopes":    {mod + "gateway/internal/toolname", mod + "internal/option"},
		mod + "gateway/internal/toolsets":  {mod + "gateway/auth", mod + "internal/option"},
		mod + "gateway/internal/overrides": {mod + "gateway/internal/toolname", mod + "internal/schema", mod + "internal/jsonstr",
			mod + "internal/methodglob", mod + "internal/option", mod + "proto/mcpgateway/v1"},
		mod + "gateway/internal/paging":     {mod + "gateway/mcp", mod + "internal/jsonstr"},
		mod + "gateway/internal/watch":      {mod + "internal/schema", mod + "internal/jsonstr", mod + "internal/methodglob", mod + "internal/wordsplit", mod + "proto/mcpgateway/v1"},
		mod + "gateway/internal/collect":    {mod + "gateway/internal/watch", mod + "gateway/results", mod + "internal/schema", mod + "internal/jsonstr"},
		mod + "gateway/internal/searchdoc":  {mod + "gateway/internal/describe", mod + "gateway/mcp", mod + "internal/search"},
		mod + "gateway/internal/searchmode": {mod + "gateway/internal/searchdoc", mod + "gateway/mcp", mod + "internal/search", mod + "internal/search/embeddings"},
		mod + "gateway/internal/longrunning": {mod + "descriptors", mod + "gateway/internal/anytypes", mod + "gateway/internal/callwire",
			mod + "gateway/internal/rpcstatus", mod + "gateway/mcp", mod + "internal/schema", mod + "gateway/telemetry", mod + "gateway/internal/transcode",
			mod + "internal/jsonstr"},
		// Catalog compilation: the compiled tool and what makes it, below
		// the call path (the gateway hands it the invokers).
		mod + "gateway/internal/compiled": {mod + "descriptors", mod + "gateway/auth", mod + "gateway/internal/describe", mod + "gateway/exchange",
			mod + "gateway/internal/anytypes", mod + "gateway/internal/longrunning", mod + "gateway/internal/overrides",
			mod + "gateway/internal/paging", mod + "gateway/internal/searchdoc", mod + "gateway/internal/toolname",
			mod + "gateway/internal/watch", mod + "gateway/mcp", mod + "gateway/results", mod + "internal/schema",
			mod + "gateway/telemetry", mod + "gateway/internal/transcode", mod + "proto/mcpgateway/v1"},
		// The call path's core: above compilation, below the gateway; it
		// does not import gateway/internal/longrunning: the long-running
		// invoker and the tasks stay the gateway's.
		mod + "gateway/internal/call": {mod + "gateway/backendconn", mod + "gateway/internal/anytypes", mod + "gateway/internal/callwire",
			mod + "gateway/internal/collect", mod + "gateway/internal/compiled", mod + "gateway/internal/rpcstatus",
			mod + "gateway/internal/watch", mod + "gateway/mcp", mod + "internal/schema", mod + "gateway/telemetry"},
	} {
		for _, dep := range imports(pkg) {
			if strings.HasPrefix(dep, mod) && !slices.Contains(allowed, dep) {
				t.Errorf("%s imports %s: of this module it may import only %v", pkg, dep, allowed)
			}
		}
		if slices.Contains(deps(pkg), mod+"gateway") {
			t.Errorf("%s depends on %sgateway: the assembler imports it, never the reverse", pkg, mod)
		}
	}
	for pkg, forbidden := range map[string][]string{
		mod + "descriptors":                {mod + "gateway", "github.com/modelcontextprotocol/"},
		mod + "gateway/mcp":                {"google.golang.org/grpc", "google.golang.org/protobuf", mod + "descriptors", "github.com/modelcontextprotocol/"},
		mod + "gateway/results":            {"google.golang.org/grpc", "google.golang.org/protobuf", mod + "gateway/mcp", mod + "descriptors"},
		mod + "cmd/gateway":                {"github.com/modelcontextprotocol/", mod + "internal/testkit"},
		mod + "internal/testkit":           {mod + "gateway", mod + "descriptors", mod + "cmd"},
		mod + "internal/search":            {"google.golang.org/grpc", "google.golang.org/protobuf", mod + "gateway/mcp", mod + "descriptors", mod + "gateway/internal/describe"},
		mod + "internal/search/embeddings": {"google.golang.org/grpc", "google.golang.org/protobuf", mod + "gateway/mcp", mod + "descriptors"},
		mod + "gateway/internal/describe":  {mod + "gateway/mcp", mod + "internal/search", "github.com/modelcontextprotocol/"},
		conn:                               {"github.com/modelcontextprotocol/"},
	} {
		for _, dep := range deps(pkg) {
			for _, f := range forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
