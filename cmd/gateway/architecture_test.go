package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPackageBoundaries holds the layering README.md's Architecture
// section describes: reflection knows nothing of the MCP side, gateway/mcp
// nothing of gRPC or protobuf, gateway/results nothing but JSON,
// gateway/search (and its embeddings client) nothing of tools, gRPC or
// MCP, gateway/describe nothing of MCP, and the binary does not link the
// official MCP SDK (used by tests only).
func TestPackageBoundaries(t *testing.T) {
	t.Parallel()
	const mod = "github.com/grpc-mcp-gateway/gateway/"
	for pkg, forbidden := range map[string][]string{
		mod + "reflection":                {mod + "gateway", "github.com/modelcontextprotocol/"},
		mod + "gateway/mcp":               {"google.golang.org/grpc", "google.golang.org/protobuf", mod + "reflection", "github.com/modelcontextprotocol/"},
		mod + "gateway/results":           {"google.golang.org/grpc", "google.golang.org/protobuf", mod + "gateway/mcp", mod + "reflection"},
		mod + "cmd/gateway":               {"github.com/modelcontextprotocol/"},
		mod + "gateway/search":            {"google.golang.org/grpc", "google.golang.org/protobuf", mod + "gateway/mcp", mod + "reflection", mod + "gateway/describe"},
		mod + "gateway/search/embeddings": {"google.golang.org/grpc", "google.golang.org/protobuf", mod + "gateway/mcp", mod + "reflection"},
		mod + "gateway/describe":          {mod + "gateway/mcp", mod + "gateway/search", "github.com/modelcontextprotocol/"},
	} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for dep := range strings.Lines(string(out)) {
			dep = strings.TrimSpace(dep)
			for _, f := range forbidden {
				if strings.HasPrefix(dep, f) {
					t.Errorf("%s depends on %s", pkg, dep)
				}
			}
		}
	}
}
