package compiled

import (
	"encoding/json"
	"strings"
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
	packSchemas(tools, false)
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

// TestPackSchemasDeflated: packed for search mode, input schemas are held
// deflated, inflate to the same bytes, and stay shared; output schemas
// stay plain.
func TestPackSchemasDeflated(t *testing.T) {
	shared := json.RawMessage(strings.Repeat(`{"type":"object","properties":{"name":{"type":"string","description":"The name."}}}`, 20))
	tools := []builtSchemas{
		{in: shared, out: json.RawMessage(`{"type":"object"}`)},
		{in: shared},
		{in: json.RawMessage(`{"type":"object","properties":{}}`)},
	}
	want := make([]string, len(tools))
	for i, tl := range tools {
		want[i] = string(tl.in)
	}
	packSchemas(tools, true)
	for i, tl := range tools {
		if tl.in != nil || tl.inZ == nil {
			t.Fatalf("tool %d: input schema not held deflated", i)
		}
		got, err := tl.inputSchema()
		if err != nil || string(got) != want[i] {
			t.Errorf("tool %d: inflated %q (%v), want %q", i, got, err, want[i])
		}
		// An answer appends it after what it has written.
		if got, err := AppendInflated([]byte("x"), tl.inZ, tl.inLen); err != nil || string(got) != "x"+want[i] {
			t.Errorf("tool %d: appended %q (%v)", i, got, err)
		}
	}
	if &tools[0].inZ[0] != &tools[1].inZ[0] {
		t.Error("a shared input schema is no longer shared")
	}
	if len(tools[0].inZ) >= len(shared)/4 {
		t.Errorf("deflated to %d of %d bytes", len(tools[0].inZ), len(shared))
	}
	if string(tools[0].out) != `{"type":"object"}` {
		t.Errorf("output schema %q", tools[0].out)
	}
	if !tools[0].sameInput(tools[1]) || tools[0].sameInput(tools[2]) {
		t.Error("sameInput compares deflated schemas wrongly")
	}
}
