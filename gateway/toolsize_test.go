package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

const bigLevels, bigFields = 40, 40

// deepFile is a service whose Deep method takes and returns a chain of
// bigLevels messages of bigFields int64 fields each (about 280 KB of
// schema written out), beside a small method.
func deepFile() *descriptorpb.FileDescriptorProto {
	fdp := apiFile("big.v1", "Big", method("Small"))
	for l := range bigLevels {
		m := &descriptorpb.DescriptorProto{Name: proto.String(fmt.Sprintf("Level%d", l))}
		for i := range bigFields {
			m.Field = append(m.Field, &descriptorpb.FieldDescriptorProto{
				Name: proto.String(fmt.Sprintf("count_%d", i)), Number: proto.Int32(int32(i + 1)),
				Type: descriptorpb.FieldDescriptorProto_TYPE_INT64.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			})
		}
		if l+1 < bigLevels {
			m.Field = append(m.Field, &descriptorpb.FieldDescriptorProto{
				Name: proto.String("next"), Number: proto.Int32(100), TypeName: proto.String(fmt.Sprintf(".big.v1.Level%d", l+1)),
				Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			})
		}
		fdp.MessageType = append(fdp.MessageType, m)
	}
	fdp.Service[0].Method = append(fdp.Service[0].Method, &descriptorpb.MethodDescriptorProto{
		Name: proto.String("Deep"), InputType: proto.String(".big.v1.Level0"), OutputType: proto.String(".big.v1.Level0"),
	})
	return fdp
}

func bigArgs(l int) map[string]any {
	v := map[string]any{}
	for i := range bigFields {
		v[fmt.Sprintf("count%d", i)] = fmt.Sprint(l*1000 + i)
	}
	if l+1 < bigLevels {
		v["next"] = bigArgs(l + 1)
	}
	return v
}

// TestToolSizeBound: a tool whose schemas written out would take its entry
// over gateway.MaxToolBytes is listed within it, its escapes name
// resources that serve the messages left out, arguments valid for the
// whole message still reach the backend, and a small tool is untouched.
func TestToolSizeBound(t *testing.T) {
	t.Parallel()
	api := &fakeAPI{}
	api.set(t, deepFile())
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "big", addr)}, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
	var deep mcp.Tool
	for _, tl := range g.Tools().Tools() {
		if n := mcp.EntryBytes(tl); n > gateway.MaxToolBytes {
			t.Errorf("%s: %d bytes, over %d", tl.Name, n, gateway.MaxToolBytes)
		}
		switch tl.Name {
		case "Big_Deep":
			deep = tl
		case "Big_Small":
			if want := `{"type":"object","properties":{"text":{"type":"string"}},"additionalProperties":false}`; string(tl.InputSchema) != want {
				t.Errorf("Small: input schema %s, want %s", tl.InputSchema, want)
			}
		}
	}
	t.Logf("Big_Deep: %d bytes (input %d, output %d)", mcp.EntryBytes(deep), len(deep.InputSchema), len(deep.OutputSchema))
	uris := regexp.MustCompile(`see resource (grpc://big/big\.v1\.Level[0-9]+)`).FindAllStringSubmatch(string(deep.InputSchema), -1)
	if len(uris) == 0 {
		t.Fatalf("Deep's input schema names no resource:\n%s", deep.InputSchema)
	}
	if len(deep.OutputSchema) == 0 {
		t.Error("Deep's output schema was dropped; a bounded one fits")
	}
	cs := connect(t, base+"/mcp", "2025-11-25")
	ctx := context.Background()
	read, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uris[0][1]})
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(uris[0][1], "grpc://big/big.v1.")
	if src := read.Contents[0].Text; !strings.Contains(src, "message "+name+" {") || !strings.Contains(src, "int64 count_39 = 40;") {
		t.Errorf("%s: source\n%s", uris[0][1], src)
	}
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "Big_Deep", Arguments: bigArgs(0)})
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		b, _ := json.Marshal(res.Content)
		t.Errorf("a call with every level set: %s", b)
	}
	// The validator still checks what the schema leaves out.
	bad := bigArgs(0)
	at := bad
	for range bigLevels - 1 {
		at = at["next"].(map[string]any)
	}
	at["count0"] = "not a number"
	res, err = cs.CallTool(ctx, &sdk.CallToolParams{Name: "Big_Deep", Arguments: bad})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res.Content); !res.IsError || !strings.Contains(string(b), "count0") {
		t.Errorf("a wrong value at the last level: isError %v, %s", res.IsError, b)
	}
}

// TestToolSizeBoundKeepsOverrides: a tool whose input schema the bound
// rebuilds from its message (a request of 2,000 fields) still leaves out
// the argument an operator hid or fixed, and shows the default set; a
// watch of that size keeps its window arguments and result, within the
// bound.
func TestToolSizeBoundKeepsOverrides(t *testing.T) {
	t.Parallel()
	api := &fakeAPI{}
	f := bigFile("huge.v1", 2000, "GetWidget", "WatchWidgets")
	f.Service[0].Method[1].ServerStreaming = proto.Bool(true)
	api.set(t, f)
	addr, _ := serveFake(t, api, "127.0.0.1:0")
	const hidden, fixed, dflt = "an_uncommonly_long_field_name_number_0000", "an_uncommonly_long_field_name_number_0001", "an_uncommonly_long_field_name_number_0002"
	g, _ := newGateway(t, []gateway.Backend{dialBackend(t, "huge", addr)}, &gateway.Options{Search: gateway.SearchOptions{
		ToolMode: gateway.ToolModeTyped,
	}, Catalog: gateway.CatalogOptions{
		Tools: []gateway.ToolOverride{{
			Match: "huge.v1.Widgets/GetWidget",
			Arguments: map[string]gateway.ArgumentOverride{
				hidden: {Hidden: true},
				fixed:  {Fixed: json.RawMessage(`"tenant-7"`)},
				dflt:   {Default: json.RawMessage(`"d"`)},
			},
		}},
	}})
	tl := toolByName(t, g, "Widgets_GetWidget")
	in := string(tl.InputSchema)
	if !strings.Contains(in, "more fields are not listed here") {
		t.Fatalf("the input schema was not bounded (%d bytes)", len(in))
	}
	for _, f := range []string{hidden, fixed} {
		if strings.Contains(in, `"`+f+`"`) || strings.Contains(in, `"anUncommonlyLongFieldNameNumber`+f[len(f)-4:]+`"`) {
			t.Errorf("%s is in the bounded schema", f)
		}
	}
	if !strings.Contains(in, `"default":"d"`) {
		t.Errorf("the bounded schema lost the default of %s", dflt)
	}
	if n := mcp.EntryBytes(tl); n > gateway.MaxToolBytes {
		t.Errorf("%d bytes, over %d", n, gateway.MaxToolBytes)
	}
	w := toolByName(t, g, "Widgets_WatchWidgets")
	if !strings.Contains(string(w.InputSchema), "more fields are not listed here") || !strings.Contains(string(w.InputSchema), `"window-seconds"`) || !strings.Contains(string(w.OutputSchema), `"window"`) {
		t.Errorf("the bounded watch lost its window: input %.200s... output %.200s...", w.InputSchema, w.OutputSchema)
	}
	if n := mcp.EntryBytes(w); n > gateway.MaxToolBytes {
		t.Errorf("the watch: %d bytes, over %d (input %d, output %d, description %d)", n, gateway.MaxToolBytes, len(w.InputSchema), len(w.OutputSchema), len(w.Description))
	}
}
