package gateway

import (
	"encoding/json"
	"testing"
)

// TestPackSchemas: packed, every tool keeps its schemas byte for byte,
// tools that shared a schema still share one copy, and the copies sit in
// one block whose slices cannot grow into each other.
func TestPackSchemas(t *testing.T) {
	shared := json.RawMessage(`{"type":"object","properties":{"name":{"type":"string"}}}`)
	out := json.RawMessage(`{"type":"object"}`)
	tools := []builtSchemas{
		{in: shared, out: out},
		{in: shared},
		{in: json.RawMessage(`{"type":"object","properties":{}}`)},
	}
	want := make([][2]string, len(tools))
	for i, tl := range tools {
		want[i] = [2]string{string(tl.in), string(tl.out)}
	}
	packSchemas(tools)
	for i, tl := range tools {
		if got := [2]string{string(tl.in), string(tl.out)}; got != want[i] {
			t.Errorf("tool %d: schemas %q, want %q", i, got, want[i])
		}
	}
	a, b, c := tools[0].in, tools[1].in, tools[2].in
	if &a[0] != &b[0] {
		t.Error("a and b shared their input schema before packing, not after")
	}
	if &a[0] == &shared[0] {
		t.Error("the shared schema was not copied")
	}
	if cap(a) != len(a) || cap(c) != len(c) {
		t.Errorf("packed schemas have room to grow into the next: cap %d len %d, cap %d len %d", cap(a), len(a), cap(c), len(c))
	}
	if tools[1].out != nil {
		t.Error("a missing output schema became one")
	}
}
