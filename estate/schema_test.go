package estate_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/grpc-mcp-gateway/gateway/estate"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

// maxToolBytes is issue 10's bound on one tool's definition on the estate.
const maxToolBytes = 48 << 10

// TestToolSizes: on the estate, in typed mode, no tool's definition is over
// 48 KiB, every input and output schema passes schema.Lint and compiles
// under a JSON Schema 2020-12 validator ($defs and $ref included), and the
// HTTP rules' hints are there.
func TestToolSizes(t *testing.T) {
	g := newEstateGateway(t, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
	l := listTools(t, g)
	if len(l.tools) != estate.NumMethods {
		t.Fatalf("listed %d tools, want %d", len(l.tools), estate.NumMethods)
	}
	compiled := map[string]bool{} // many tools share a schema (Compute's Operation)
	for _, raw := range l.tools {
		var tl struct {
			Name         string
			InputSchema  json.RawMessage
			OutputSchema json.RawMessage
		}
		if err := json.Unmarshal(raw, &tl); err != nil {
			t.Fatal(err)
		}
		if len(raw) > maxToolBytes {
			t.Errorf("%s: %d bytes, over %d", tl.Name, len(raw), maxToolBytes)
		}
		for what, s := range map[string]json.RawMessage{"inputSchema": tl.InputSchema, "outputSchema": tl.OutputSchema} {
			if s == nil {
				continue
			}
			if compiled[string(s)] {
				continue
			}
			compiled[string(s)] = true
			if p := schema.Lint(s); len(p) > 0 {
				t.Errorf("%s %s: lint: %q", tl.Name, what, p)
			}
			if err := compile(s); err != nil {
				t.Errorf("%s %s: %v", tl.Name, what, err)
			}
		}
	}
	// Every tool carries all four hints, from the google.api.http rule or
	// the verb (the table is tested row by row in gateway/internal/describe).
	hints := map[string]string{}
	for _, raw := range l.tools {
		var tl struct {
			Name        string
			Annotations json.RawMessage
		}
		if err := json.Unmarshal(raw, &tl); err != nil {
			t.Fatal(err)
		}
		hints[tl.Name] = string(tl.Annotations)
	}
	for name, want := range map[string]string{
		"Instances_Get":    `{"title":"Get instance (Google Cloud Compute v1)","readOnlyHint":true,"destructiveHint":false,"idempotentHint":true,"openWorldHint":true}`,
		"Instances_Delete": `{"title":"Delete instance (Google Cloud Compute v1)","readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":true}`,
		"Instances_Insert": `{"title":"Create instance (Google Cloud Compute v1)","readOnlyHint":false,"destructiveHint":false,"idempotentHint":false,"openWorldHint":true}`,
		"Instances_Stop":   `{"title":"Stop instance (Google Cloud Compute v1)","readOnlyHint":false,"destructiveHint":true,"idempotentHint":true,"openWorldHint":true}`,
	} {
		if got := hints[name]; got != want {
			t.Errorf("%s annotations %s, want %s", name, got, want)
		}
	}
	for name, h := range hints {
		var a map[string]any
		if err := json.Unmarshal([]byte(h), &a); err != nil {
			t.Fatal(err)
		}
		for _, k := range []string{"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"} {
			if _, ok := a[k]; !ok {
				t.Errorf("%s: annotations without %s: %s", name, k, h)
			}
		}
	}
	s := l.sizes()
	t.Logf("tools/list: %d bytes over all pages; tools: largest %d (%s), p90 %d, p50 %d, total %d",
		l.bytes, s.largest, s.largestName, s.p90, s.p50, s.total)
}

func compile(s json.RawMessage) error {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(s))
	if err != nil {
		return err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem:///schema.json", doc); err != nil {
		return err
	}
	_, err = c.Compile("mem:///schema.json")
	return err
}
