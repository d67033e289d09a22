package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// cutResult is what a test reads from a result cut to its budget.
type cutResult struct {
	structured []byte
	records    []cutRecord
	note       string // the sentence about the cut
	link       *sdk.ResourceLink
}

// readCut checks a cut result the way a client sees it: structuredContent
// within the budget and valid against the tool's outputSchema (2020-12),
// the same JSON in the first text block, a sentence naming the budget,
// and (from 2025-06-18 on) a resource link to the whole result.
func readCut(t *testing.T, g *gateway.Gateway, tool string, budget int, version string, res *sdk.CallToolResult) cutResult {
	t.Helper()
	if res.IsError {
		t.Fatalf("%s: isError: %+v", tool, res.Content)
	}
	var c cutResult
	first := res.Content[0].(*sdk.TextContent).Text
	c.structured = []byte(first)
	if version >= "2025-06-18" {
		var err error
		if c.structured, err = json.Marshal(res.StructuredContent); err != nil || res.StructuredContent == nil {
			t.Fatalf("%s: no structuredContent", tool)
		}
	}
	if len(first) > budget {
		t.Errorf("%s: the JSON is %d bytes, over the budget of %d", tool, len(first), budget)
	}
	var a, b any
	_ = json.Unmarshal(c.structured, &a)
	if err := json.Unmarshal([]byte(first), &b); err != nil || !jsonEqual(a, b) {
		t.Errorf("%s: the first text block is not the structuredContent: %v", tool, err)
	}
	s, err := compileSchema(toolByName(t, g, tool).OutputSchema)
	if err != nil {
		t.Fatal(err)
	}
	inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(first))
	if err := s.Validate(inst); err != nil {
		t.Errorf("%s: a cut result must still match the outputSchema: %v", tool, err)
	}
	var r struct {
		Truncated []cutRecord `json:"truncated"`
	}
	_ = json.Unmarshal([]byte(first), &r)
	c.records = r.Truncated
	for _, blk := range res.Content[1:] {
		switch blk := blk.(type) {
		case *sdk.TextContent:
			c.note += blk.Text
		case *sdk.ResourceLink:
			c.link = blk
		}
	}
	if !strings.Contains(c.note, "result budget of ") {
		t.Errorf("%s: no sentence about the cut: %q", tool, c.note)
	}
	if hasLink := version >= "2025-06-18"; (c.link != nil) != hasLink {
		t.Errorf("%s at %s: resource link %v, want one: %v", tool, version, c.link, hasLink)
	}
	return c
}

func jsonEqual(a, b any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// resultURI is the URI of the kept result, from the link or, before
// 2025-06-18, from the sentence.
func (c cutResult) resultURI(t *testing.T) string {
	t.Helper()
	if c.link != nil {
		return c.link.URI
	}
	i := strings.Index(c.note, gateway.ResultURIPrefix)
	if i < 0 {
		t.Fatalf("the sentence names no resource: %q", c.note)
	}
	return strings.Fields(c.note[i:])[0]
}

func readResource(cs *sdk.ClientSession, uri string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	return rr.Contents[0].Text, nil
}

func notFound(err error) bool {
	var je *jsonrpc.Error
	return errors.As(err, &je) && (je.Code == -32002 || je.Code == -32602)
}

// TestResultBudgetUnary: a list over the budget keeps its first animals,
// says what it cut in structuredContent and in a sentence, still matches
// its outputSchema, and the whole result reads back from the session that
// made the call, and from no other session. Kept results are never listed
// in resources/list, and at 2026-07-28 a read says cacheScope "private"
// with the store's TTL.
func TestResultBudgetUnary(t *testing.T) {
	const budget = 1500
	_, g, url := startGateway(t, &gateway.Options{Results: gateway.ResultOptions{MaxBytes: budget}})
	for _, v := range []string{"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "2026-07-28"} {
		t.Run(v, func(t *testing.T) {
			cs := connect(t, url, v)
			res := call(t, cs, "ZooService_ListAnimals", map[string]any{"pageSize": 17})
			c := readCut(t, g, "ZooService_ListAnimals", budget, v, res)
			if len(c.records) != 1 || c.records[0].Path != "animals" || c.records[0].Total == nil || c.records[0].Kept >= *c.records[0].Total {
				t.Fatalf("records %+v, want animals cut", c.records)
			}
			total := *c.records[0].Total
			var cut struct{ Animals []any }
			_ = json.Unmarshal(c.structured, &cut)
			if len(cut.Animals) != c.records[0].Kept {
				t.Errorf("%d animals kept, the record says %d", len(cut.Animals), c.records[0].Kept)
			}
			uri := c.resultURI(t)
			whole, err := readResource(cs, uri)
			if err != nil {
				t.Fatalf("reading %s: %v", uri, err)
			}
			var all struct {
				Animals       []map[string]any `json:"animals"`
				NextPageToken string           `json:"nextPageToken"`
				Truncated     any              `json:"truncated"`
			}
			if err := json.Unmarshal([]byte(whole), &all); err != nil || len(all.Animals) != total || all.Truncated != nil {
				t.Fatalf("the resource is not the whole result: %d animals, %v: %.200s", len(all.Animals), err, whole)
			}
			if c.link != nil && (c.link.MIMEType != "application/json" || c.link.Size == nil || *c.link.Size != int64(len(whole))) {
				t.Errorf("link %+v for %d bytes", c.link, len(whole))
			}
			if v == "2026-07-28" {
				// Cacheable by the caller only, for as long as the store keeps it.
				rr, err := cs.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
				if err != nil {
					t.Fatal(err)
				}
				if rr.CacheScope != "private" || rr.TTLMs != int((10*time.Minute).Milliseconds()) {
					t.Errorf("read result at 2026-07-28: cacheScope %q, ttlMs %d; want private and the store's TTL (10m)", rr.CacheScope, rr.TTLMs)
				}
			}
			list, err := cs.ListResources(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range list.Resources {
				if strings.HasPrefix(r.URI, gateway.ResultURIPrefix) {
					t.Errorf("a kept result is listed in resources/list: %s", r.URI)
				}
			}

			other := connect(t, url, v)
			_, err = readResource(other, uri)
			if v == "2026-07-28" {
				// Stateless and unauthenticated: no session and no
				// principal, so the unguessable URI is the capability.
				if err != nil {
					t.Errorf("stateless read by URI: %v", err)
				}
			} else if !notFound(err) {
				t.Errorf("another session read the result: %v", err)
			}
			if _, err := readResource(cs, gateway.ResultURIPrefix+"NOTANID"); !notFound(err) {
				t.Errorf("an unknown id: %v", err)
			}
		})
	}
}

// TestResultOwnerPerConnection: on stdio, WebSocket and legacy SSE the
// connection is the session that owns a cut result: it reads the whole
// result back, and another connection of the same transport gets
// resource-not-found.
func TestResultOwnerPerConnection(t *testing.T) {
	const budget = 2000
	sg := startStreamGateway(t, &gateway.Options{Results: gateway.ResultOptions{MaxBytes: budget}})
	sse := func(t *testing.T, sg *streamGateway, _ *sdk.ClientOptions) *sdk.ClientSession {
		t.Helper()
		// The SSE stream lives as long as the context it was opened with.
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "sse", Version: "1"}, nil).Connect(t.Context(),
			&sdk.SSEClientTransport{Endpoint: strings.TrimSuffix(sg.url, "/mcp") + "/sse"}, &sdk.ClientSessionOptions{ProtocolVersion: "2024-11-05"})
		if err != nil {
			t.Fatalf("connect: %v", err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	for _, tr := range []struct {
		transport
		version string
	}{
		{transport{"stdio", stdioTransport}, "2025-11-25"},
		{transport{"websocket", wsTransport("2025-11-25")}, "2025-11-25"},
		{transport{"sse", sse}, "2024-11-05"},
	} {
		t.Run(tr.name, func(t *testing.T) {
			cs := tr.connect(t, sg, nil)
			res := call(t, cs, "ZooService_WatchFeedings", map[string]any{"count": 120, "interval": "0s"})
			uri := readCut(t, sg.gw, "ZooService_WatchFeedings", budget, tr.version, res).resultURI(t)
			if _, err := readResource(cs, uri); err != nil {
				t.Fatalf("the connection that made the call reads %s: %v", uri, err)
			}
			if _, err := readResource(tr.connect(t, sg, nil), uri); !notFound(err) {
				t.Errorf("another %s connection read the result: %v", tr.name, err)
			}
		})
	}
}

// TestResultBudgetStream: a server stream over the budget is cut like any
// result, after a stream limit too, whose entry comes first; the whole
// collected result reads back.
func TestResultBudgetStream(t *testing.T) {
	const budget = 2000
	sg := startStreamGateway(t, &gateway.Options{Results: gateway.ResultOptions{MaxBytes: budget}, Calls: gateway.CallOptions{StreamMaxMessages: 150}})
	cs := httpTransport("2025-11-25")(t, sg, nil)
	for _, c := range []struct {
		name  string
		count int
		limit bool
	}{{"within the stream limit", 120, false}, {"past the stream limit", 400, true}} {
		t.Run(c.name, func(t *testing.T) {
			res := call(t, cs, "ZooService_WatchFeedings", map[string]any{"count": c.count, "interval": "0s"})
			cut := readCut(t, sg.gw, "ZooService_WatchFeedings", budget, "2025-11-25", res)
			kept := min(c.count, 150)
			recs := cut.records
			if c.limit {
				if len(recs) < 2 || recs[0].Path != "messages" || recs[0].Total != nil || !strings.HasPrefix(recs[0].Reason, "message limit") {
					t.Fatalf("the stream limit's entry must come first: %+v", recs)
				}
				recs = recs[1:]
			}
			if len(recs) != 1 || recs[0].Path != "messages" || recs[0].Total == nil || *recs[0].Total != kept {
				t.Fatalf("records %+v, want messages cut from %d", cut.records, kept)
			}
			whole, err := readResource(cs, cut.resultURI(t))
			if err != nil {
				t.Fatal(err)
			}
			var all streamResult
			if err := json.Unmarshal([]byte(whole), &all); err != nil || len(all.Messages) != kept || all.limited() != c.limit {
				t.Fatalf("whole: %d messages (want %d), limited %v: %v", len(all.Messages), kept, all.limited(), err)
			}
			validateOutput(t, sg, "ZooService_WatchFeedings", []byte(whole))
		})
	}
}

// TestResultStoreBounds: kept results expire, the oldest go first when
// the store is full, and a result larger than the store is cut but not
// kept (the sentence says so, and there is no link).
func TestResultStoreBounds(t *testing.T) {
	args := map[string]any{"pageSize": 17}
	const budget = 1500
	t.Run("expiry", func(t *testing.T) {
		_, g, url := startGateway(t, &gateway.Options{Results: gateway.ResultOptions{MaxBytes: budget, TTL: 200 * time.Millisecond}})
		cs := connect(t, url, "2025-11-25")
		uri := readCut(t, g, "ZooService_ListAnimals", budget, "2025-11-25", call(t, cs, "ZooService_ListAnimals", args)).resultURI(t)
		testkit.WaitFor(t, "the result to expire", func() bool {
			_, err := readResource(cs, uri)
			return notFound(err)
		})
	})
	t.Run("count", func(t *testing.T) {
		_, g, url := startGateway(t, &gateway.Options{Results: gateway.ResultOptions{MaxBytes: budget, StoreEntries: 1}})
		cs := connect(t, url, "2025-11-25")
		first := readCut(t, g, "ZooService_ListAnimals", budget, "2025-11-25", call(t, cs, "ZooService_ListAnimals", args)).resultURI(t)
		second := readCut(t, g, "ZooService_ListAnimals", budget, "2025-11-25", call(t, cs, "ZooService_ListAnimals", args)).resultURI(t)
		if _, err := readResource(cs, first); !notFound(err) {
			t.Errorf("the oldest result must go first: %v", err)
		}
		if _, err := readResource(cs, second); err != nil {
			t.Error(err)
		}
	})
	t.Run("bytes", func(t *testing.T) {
		_, g, url := startGateway(t, &gateway.Options{Results: gateway.ResultOptions{MaxBytes: budget, StoreBytes: 1000}})
		cs := connect(t, url, "2025-11-25")
		c := readCutNoLink(t, g, budget, call(t, cs, "ZooService_ListAnimals", args))
		if !strings.Contains(c, "larger than the gateway keeps") {
			t.Errorf("sentence %q", c)
		}
	})
}

// readCutNoLink returns the sentence of a cut result that has no link.
func readCutNoLink(t *testing.T, g *gateway.Gateway, budget int, res *sdk.CallToolResult) string {
	t.Helper()
	var note string
	for _, blk := range res.Content[1:] {
		switch blk := blk.(type) {
		case *sdk.TextContent:
			note += blk.Text
		case *sdk.ResourceLink:
			t.Errorf("a link to a result that was not kept: %+v", blk)
		}
	}
	if n := len(res.Content[0].(*sdk.TextContent).Text); n > budget {
		t.Errorf("%d bytes over the budget", n)
	}
	return note
}

// TestResultBudgetMeta: with a budget past what Claude Code keeps inline
// (50,000 characters), every tool declares anthropic/maxResultSizeChars;
// with the default budget none does.
func TestResultBudgetMeta(t *testing.T) {
	for _, c := range []struct {
		budget int
		want   any
	}{{0, nil}, {100_000, 104096.0}} {
		_, _, url := startGateway(t, &gateway.Options{Results: gateway.ResultOptions{MaxBytes: c.budget}})
		cs := connect(t, url, "2025-11-25")
		lt, err := cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range lt.Tools {
			if got := tl.Meta["anthropic/maxResultSizeChars"]; got != c.want {
				t.Errorf("budget %d: %s declares %v, want %v", c.budget, tl.Name, got, c.want)
			}
		}
	}
}

// TestResultBudgetOff: a result over the default budget is cut by default
// and returned whole with the budget off (--max-result-bytes unlimited).
func TestResultBudgetOff(t *testing.T) {
	args := map[string]any{"count": 1000, "interval": "0s"}
	for _, c := range []struct {
		budget int
		cut    bool
	}{{0, true}, {gateway.Off, false}} {
		sg := startStreamGateway(t, &gateway.Options{Results: gateway.ResultOptions{MaxBytes: c.budget}})
		res := call(t, httpTransport("2025-11-25")(t, sg, nil), "ZooService_WatchFeedings", args)
		js, _ := json.Marshal(res.StructuredContent)
		var r struct{ Truncated any }
		_ = json.Unmarshal(js, &r)
		if cut := r.Truncated != nil || len(js) <= gateway.DefaultMaxResultBytes; cut != c.cut || res.IsError {
			t.Errorf("budget %d: a result of %d bytes, truncated %v; want it cut: %v", c.budget, len(js), r.Truncated, c.cut)
		}
	}
}

// TestResultBudgetOptions: a budget under the minimum is refused with a
// message naming what is expected.
func TestResultBudgetOptions(t *testing.T) {
	_, err := gateway.New(context.Background(), nil, &gateway.Options{Results: gateway.ResultOptions{MaxBytes: 10}})
	if err == nil || !strings.Contains(err.Error(), "at least 1024") {
		t.Fatalf("got %v", err)
	}
}

// TestResultOwnerStateless: a stateless (2026-07-28) result belongs to the
// principal that made the call: the same token reads it from any request,
// another token gets resource-not-found. With sessions, the same token in
// another session is refused too.
func TestResultOwnerStateless(t *testing.T) {
	const budget = 1500
	_, base, _ := startBearerGateway(t, "alpha\nbeta\n", &gateway.Options{Results: gateway.ResultOptions{MaxBytes: budget}})
	as := func(token, version string) *sdk.ClientSession {
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		hc := &http.Client{Transport: &headerTransport{h: http.Header{"Authorization": {"Bearer " + token}}, rt: tr}}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		cs, err := sdk.NewClient(&sdk.Implementation{Name: "owner", Version: "1"}, nil).Connect(ctx,
			&sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1, HTTPClient: hc}, &sdk.ClientSessionOptions{ProtocolVersion: version})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		t.Run(v, func(t *testing.T) {
			alpha := as("alpha", v)
			res := call(t, alpha, "ZooService_ListAnimals", map[string]any{"pageSize": 17})
			var uri string
			for _, blk := range res.Content {
				if l, ok := blk.(*sdk.ResourceLink); ok {
					uri = l.URI
				}
			}
			if uri == "" {
				t.Fatalf("no resource link: %+v", res.Content)
			}
			if _, err := readResource(alpha, uri); err != nil {
				t.Errorf("the caller reads its result: %v", err)
			}
			if _, err := readResource(as("beta", v), uri); !notFound(err) {
				t.Errorf("another principal read the result: %v", err)
			}
			_, err := readResource(as("alpha", v), uri)
			if stateless := v == "2026-07-28"; stateless && err != nil {
				t.Errorf("stateless: the same principal reads it from any request: %v", err)
			} else if !stateless && !notFound(err) {
				t.Errorf("another session of the same principal read the result: %v", err)
			}
		})
	}
}

// cutFile is a proto2 API whose results only the last resort can bring
// near a small budget: Big's required id must stay; its map attrs (an
// object, whose members are never cut) and note can go. GetValue returns
// a google.protobuf.Value, wrapped in the required member "value".
func cutFile() *descriptorpb.FileDescriptorProto {
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	str := descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum()
	field := func(name string, n int32, label *descriptorpb.FieldDescriptorProto_Label) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), JsonName: proto.String(name), Number: proto.Int32(n), Type: str, Label: label}
	}
	attrs := field("attrs", 2, descriptorpb.FieldDescriptorProto_LABEL_REPEATED.Enum())
	attrs.Type, attrs.TypeName = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), proto.String(".cut.v1.Big.AttrsEntry")
	return &descriptorpb.FileDescriptorProto{
		Name:       proto.String("cut/v1/cut.proto"),
		Package:    proto.String("cut.v1"),
		Syntax:     proto.String("proto2"),
		Dependency: []string{"google/protobuf/struct.proto"},
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("Req")},
			{
				Name:  proto.String("Big"),
				Field: []*descriptorpb.FieldDescriptorProto{field("id", 1, descriptorpb.FieldDescriptorProto_LABEL_REQUIRED.Enum()), attrs, field("note", 3, opt)},
				NestedType: []*descriptorpb.DescriptorProto{{
					Name:    proto.String("AttrsEntry"),
					Field:   []*descriptorpb.FieldDescriptorProto{field("key", 1, opt), field("value", 2, opt)},
					Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
				}},
			},
		},
		Service: []*descriptorpb.ServiceDescriptorProto{{
			Name: proto.String("Cut"),
			Method: []*descriptorpb.MethodDescriptorProto{
				{Name: proto.String("GetBig"), InputType: proto.String(".cut.v1.Req"), OutputType: proto.String(".cut.v1.Big")},
				{Name: proto.String("GetValue"), InputType: proto.String(".cut.v1.Req"), OutputType: proto.String(".google.protobuf.Value")},
			},
		}},
	}
}

// TestResultBudgetLastResort: when emptying every array and shortening
// every string is not enough, the cut result keeps the members its output
// schema requires, so it still validates against it (clients that check,
// like the TypeScript SDK's, would refuse it otherwise): Big keeps its
// required id and drops the rest; a Value keeps its wrapper, over the
// budget, since an object's members are never cut.
func TestResultBudgetLastResort(t *testing.T) {
	api := &fakeAPI{}
	api.set(t, cutFile())
	files, _ := api.current()
	d, err := files.FindDescriptorByName("cut.v1.Big")
	if err != nil {
		t.Fatal(err)
	}
	big := dynamicpb.NewMessage(d.(protoreflect.MessageDescriptor))
	fields := big.Descriptor().Fields()
	big.Set(fields.ByName("id"), protoreflect.ValueOfString("big-1"))
	big.Set(fields.ByName("note"), protoreflect.ValueOfString("a note"))
	m := big.Mutable(fields.ByName("attrs")).Map()
	many := map[string]any{}
	for i := range 300 {
		k := fmt.Sprintf("attribute-%03d", i)
		m.Set(protoreflect.ValueOfString(k).MapKey(), protoreflect.ValueOfString("v"))
		many[k] = "v"
	}
	value, err := structpb.NewValue(many)
	if err != nil {
		t.Fatal(err)
	}
	api.reply = func(method string) proto.Message {
		if strings.HasSuffix(method, "/GetValue") {
			return value
		}
		return big
	}
	addr, _ := serveFake(t, api, "127.0.0.1:0")

	const budget = gateway.MinMaxResultBytes
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "cut", addr)}, &gateway.Options{Results: gateway.ResultOptions{MaxBytes: budget}, Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
	cs := connect(t, base+"/mcp", "2025-11-25")
	for _, tc := range []struct {
		tool       string
		keep       string
		kept, of   int
		overBudget bool
	}{
		{"Cut_GetBig", "id", 1, 3, false},
		{"Cut_GetValue", "value", 1, 1, true},
	} {
		res := call(t, cs, tc.tool, map[string]any{})
		if res.IsError {
			t.Fatalf("%s: %+v", tc.tool, res.Content)
		}
		js, _ := json.Marshal(res.StructuredContent)
		s, err := compileSchema(toolByName(t, g, tc.tool).OutputSchema)
		if err != nil {
			t.Fatal(err)
		}
		inst, _ := jsonschema.UnmarshalJSON(bytes.NewReader(js))
		if err := s.Validate(inst); err != nil {
			t.Errorf("%s: the cut result must match the outputSchema: %v\n%.300s", tc.tool, err, js)
		}
		var got map[string]json.RawMessage
		_ = json.Unmarshal(js, &got)
		var records []cutRecord
		_ = json.Unmarshal(got["truncated"], &records)
		if len(got) != 2 || got[tc.keep] == nil || len(records) == 0 {
			t.Fatalf("%s: want only %q and the records: %.300s", tc.tool, tc.keep, js)
		}
		if r := records[0]; r.Path != "" || r.Kept != tc.kept || r.Total == nil || *r.Total != tc.of {
			t.Errorf("%s: record %+v, want the result keeping %d of %d members", tc.tool, r, tc.kept, tc.of)
		}
		if over := len(js) > budget; over != tc.overBudget {
			t.Errorf("%s: %d bytes for a budget of %d; over it: %v, want %v", tc.tool, len(js), budget, over, tc.overBudget)
		}
		note := res.Content[1].(*sdk.TextContent).Text
		if want := fmt.Sprintf("the result kept %d of %d members", tc.kept, tc.of); !strings.Contains(note, want) {
			t.Errorf("%s: the sentence %q does not say %q", tc.tool, note, want)
		}
	}
}

// resultLink is the URI of the resource link in a tool result (raw JSON),
// "" when it has none.
func resultLink(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var res struct {
		Content []struct {
			Type string `json:"type"`
			URI  string `json:"uri"`
		} `json:"content"`
	}
	if err := json.Unmarshal(raw, &res); err != nil {
		t.Fatalf("result %s: %v", raw, err)
	}
	for _, c := range res.Content {
		if c.Type == "resource_link" {
			return c.URI
		}
	}
	return ""
}

// readLink reads a kept result with resources/read as c and returns the
// JSON-RPC error code, 0 when it was read.
func readLink(c *rpcClient, uri string) int64 {
	c.t.Helper()
	params := map[string]any{"uri": uri}
	if c.version == "2026-07-28" {
		params = stateless(params, capsNoTasks)
	}
	r := c.call("resources/read", params, uri)
	if r.Error != nil {
		return r.Error.Code
	}
	return 0
}

// TestTaskResultLinkOwner: the link to a task's whole result is owned as
// a call's is (README "Result budgets and paging"). A result that
// tasks/result cut in a session belongs to that session: it reads it,
// and neither another session of the same principal nor a stateless
// request of it does. A result that a stateless (2026-07-28) tasks/get
// cut belongs to the principal: any of its stateless requests reads it,
// another principal does not, nor does a session.
func TestTaskResultLinkOwner(t *testing.T) {
	a, _ := bearerAuth(t, "alpha\nbeta\n")
	_, url := startJobsAs(t, lrotest.Options{}, &gateway.Options{Auth: a, Results: gateway.ResultOptions{MaxBytes: gateway.MinMaxResultBytes}, Calls: gateway.CallOptions{OperationWait: gateway.Off}})
	label := strings.Repeat("x", 4*gateway.MinMaxResultBytes)
	const notFound, notFound2026 = -32002, -32602

	alpha := newSessionClientAs(t, url, "alpha")
	var created struct {
		Task wireTask `json:"task"`
	}
	alpha.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": label, "steps": 1}, "task": map[string]any{}}, "", &created)
	var res json.RawMessage
	alpha.result("tasks/result", map[string]any{"taskId": created.Task.TaskID}, "", &res)
	uri := resultLink(t, res)
	if uri == "" {
		t.Fatalf("tasks/result: the cut result links to no whole result: %s", res)
	}
	if code := readLink(alpha, uri); code != 0 {
		t.Errorf("the session that ran tasks/result reads its link: error %d", code)
	}
	if code := readLink(newSessionClientAs(t, url, "alpha"), uri); code != notFound {
		t.Errorf("another session of the same principal: %d, want %d", code, notFound)
	}
	if code := readLink(&rpcClient{t: t, url: url, version: "2026-07-28", token: "alpha"}, uri); code != notFound2026 {
		t.Errorf("a stateless request of the same principal: %d, want %d", code, notFound2026)
	}

	sa := &rpcClient{t: t, url: url, version: "2026-07-28", token: "alpha"}
	var task wireTask
	sa.result("tools/call", stateless(map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": label, "steps": 1}}, capsTasks), "Jobs_Run", &task)
	if task.ResultType != "task" {
		t.Fatalf("want a task: %+v", task)
	}
	var got struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
	}
	for got.Status != "completed" {
		sa.result("tasks/get", stateless(map[string]any{"taskId": task.TaskID}, capsTasks), task.TaskID, &got)
	}
	uri = resultLink(t, got.Result)
	if uri == "" {
		t.Fatalf("tasks/get: the cut result links to no whole result: %s", got.Result)
	}
	if code := readLink(&rpcClient{t: t, url: url, version: "2026-07-28", token: "alpha"}, uri); code != 0 {
		t.Errorf("another stateless request of the principal: error %d", code)
	}
	if code := readLink(&rpcClient{t: t, url: url, version: "2026-07-28", token: "beta"}, uri); code != notFound2026 {
		t.Errorf("another principal: %d, want %d", code, notFound2026)
	}
	if code := readLink(alpha, uri); code != notFound {
		t.Errorf("a session of the principal: %d, want %d", code, notFound)
	}
}
