package gateway

import (
	"encoding/json"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// TestPackSchemas: packed, every tool keeps its schemas byte for byte,
// tools that shared a schema still share one copy, and the copies sit in
// one block whose slices cannot grow into each other.
func TestPackSchemas(t *testing.T) {
	shared := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)
	out := json.RawMessage(`{"type":"object"}`)
	tools := []*tool{
		{def: mcp.Tool{Name: "a", InputSchema: shared, OutputSchema: out}},
		{def: mcp.Tool{Name: "b", InputSchema: shared}},
		{def: mcp.Tool{Name: "c", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}},
	}
	want := make([][2]string, len(tools))
	for i, tl := range tools {
		want[i] = [2]string{string(tl.def.InputSchema), string(tl.def.OutputSchema)}
	}
	packSchemas(tools)
	for i, tl := range tools {
		if got := [2]string{string(tl.def.InputSchema), string(tl.def.OutputSchema)}; got != want[i] {
			t.Errorf("%s: schemas %q, want %q", tl.def.Name, got, want[i])
		}
	}
	a, b, c := tools[0].def.InputSchema, tools[1].def.InputSchema, tools[2].def.InputSchema
	if &a[0] != &b[0] {
		t.Error("a and b shared their input schema before packing, not after")
	}
	if &a[0] == &shared[0] {
		t.Error("the shared schema was not copied")
	}
	if cap(a) != len(a) || cap(c) != len(c) {
		t.Errorf("packed schemas have room to grow into the next: cap %d len %d, cap %d len %d", cap(a), len(a), cap(c), len(c))
	}
	if tools[1].def.OutputSchema != nil {
		t.Error("a missing output schema became one")
	}
}
