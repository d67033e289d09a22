package gateway_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	_ "google.golang.org/protobuf/types/known/wrapperspb" // google/protobuf/wrappers.proto, which a test API imports

	"github.com/grpc-mcp-gateway/gateway/gateway"
)

var nextPage = regexp.MustCompile(`^More results: call ZooService_ListAnimals again with the same arguments and "pageToken": ("[^"]*") for the next page\.$`)

// TestPaging: an AIP-158 list method says in its description how to page,
// and each page but the last says how to get the next; following those
// sentences visits every animal once. Other methods say nothing of pages.
func TestPaging(t *testing.T) {
	_, g, url := startGateway(t, nil)
	desc := toolByName(t, g, "ZooService_ListAnimals").Description
	if !strings.Contains(desc, `Paged: set "pageSize" to the most items you want in one result; when a result has a "nextPageToken", call this tool again with the same arguments and "pageToken" set to it`) {
		t.Errorf("ListAnimals description: %q", desc)
	}
	if d := toolByName(t, g, "ZooService_GetAnimal").Description; strings.Contains(d, "Paged") {
		t.Errorf("GetAnimal is no list: %q", d)
	}
	cs := connect(t, url, "2025-11-25")
	var whole struct{ Animals []any }
	decodeStructured(t, call(t, cs, "ZooService_ListAnimals", map[string]any{"pageSize": 100}), &whole)
	all := whole.Animals
	var ids []string
	args := map[string]any{"pageSize": 4}
	for page := 0; ; page++ {
		res := call(t, cs, "ZooService_ListAnimals", args)
		var sc struct {
			Animals []struct {
				ID string `json:"id"`
			} `json:"animals"`
			NextPageToken string `json:"nextPageToken"`
		}
		decodeStructured(t, res, &sc)
		for _, a := range sc.Animals {
			ids = append(ids, a.ID)
		}
		if sc.NextPageToken == "" {
			if len(res.Content) != 1 {
				t.Errorf("the last page must not offer a next one: %+v", res.Content[1:])
			}
			break
		}
		m := nextPage.FindStringSubmatch(res.Content[1].(*sdk.TextContent).Text)
		if m == nil {
			t.Fatalf("page %d: no sentence for the next page: %q", page, res.Content[1].(*sdk.TextContent).Text)
		}
		if m[1] != `"`+sc.NextPageToken+`"` {
			t.Fatalf("the sentence gives %s, the result %q", m[1], sc.NextPageToken)
		}
		args = map[string]any{"pageSize": 4, "pageToken": sc.NextPageToken}
	}
	if len(ids) != len(all) || len(slices.Compact(slices.Clone(ids))) != len(ids) {
		t.Errorf("paging visited %v; %d animals in all", ids, len(all))
	}

	// With proto names the sentences use them.
	_, gp, _ := startGateway(t, &gateway.Options{Catalog: gateway.CatalogOptions{UseProtoNames: true}})
	if d := toolByName(t, gp, "ZooService_ListAnimals").Description; !strings.Contains(d, `set "page_size"`) || !strings.Contains(d, `"page_token" set to it`) {
		t.Errorf("proto names: %q", d)
	}
}

// decodeStructured decodes a successful result's structuredContent.
func decodeStructured(t *testing.T, res *sdk.CallToolResult, v any) {
	t.Helper()
	if res.IsError {
		t.Fatalf("isError: %+v", res.Content)
	}
	js, err := json.Marshal(res.StructuredContent)
	if err == nil {
		err = json.Unmarshal(js, v)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestCutSuggestsLess: the sentence of a cut list says how to ask for
// less.
func TestCutSuggestsLess(t *testing.T) {
	_, g, url := startGateway(t, &gateway.Options{Results: gateway.ResultOptions{MaxBytes: 1500}})
	cs := connect(t, url, "2025-11-25")
	c := readCut(t, g, "ZooService_ListAnimals", 1500, "2025-11-25", call(t, cs, "ZooService_ListAnimals", map[string]any{"pageSize": 17}))
	if !strings.Contains(c.note, `To get less at once, call again with a smaller "pageSize".`) {
		t.Errorf("sentence %q", c.note)
	}
}

// TestReadMaskDescription: a method whose request has an AIP-157 read_mask
// or field_mask (a google.protobuf.FieldMask) says how to ask for only
// some fields, naming two of the resource's.
func TestReadMaskDescription(t *testing.T) {
	str := func(name string, n int32) *descriptorpb.FieldDescriptorProto {
		return &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(n),
			Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()}
	}
	for field, arg := range map[string]string{"read_mask": "readMask", "field_mask": "fieldMask"} {
		t.Run(field, func(t *testing.T) {
			mask := &descriptorpb.FieldDescriptorProto{Name: proto.String(field), Number: proto.Int32(2),
				Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(), TypeName: proto.String(".google.protobuf.FieldMask"),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()}
			file := &descriptorpb.FileDescriptorProto{
				Name: proto.String("books/v1/books.proto"), Package: proto.String("books.v1"), Syntax: proto.String("proto3"),
				Dependency: []string{"google/protobuf/field_mask.proto"},
				MessageType: []*descriptorpb.DescriptorProto{
					{Name: proto.String("GetBookRequest"), Field: []*descriptorpb.FieldDescriptorProto{str("name", 1), mask}},
					{Name: proto.String("Book"), Field: []*descriptorpb.FieldDescriptorProto{str("name", 1), str("display_name", 2), str("body", 3)}},
				},
				Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("Library"), Method: []*descriptorpb.MethodDescriptorProto{
					{Name: proto.String("GetBook"), InputType: proto.String(".books.v1.GetBookRequest"), OutputType: proto.String(".books.v1.Book")},
				}}},
			}
			api := &fakeAPI{}
			api.set(t, file)
			addr, _ := serveFake(t, api, "127.0.0.1:0")
			g, _ := newGateway(t, []gateway.Backend{dialBackend(t, "books", addr)}, nil)
			d := toolByName(t, g, "Library_GetBook").Description
			if !strings.Contains(d, `Partial response: set "`+arg+`" to the comma-separated paths of the fields you need (for example "name,displayName")`) {
				t.Errorf("GetBook description: %q", d)
			}
		})
	}
}

// pagingCase is a list method of one API's paging convention: the
// request's fields beyond none, the response's next token (field 2, after
// the items), and what the gateway should make of it.
type pagingCase struct {
	name        string
	request     []*descriptorpb.FieldDescriptorProto
	next        *descriptorpb.FieldDescriptorProto
	token, size string // the request's fields the backend reads, by proto name
	paged       string // the description's paging note; "" for a method not taken as paged
	tokenArg    string // the argument the next-page sentence names
	deps        []string
}

// pagingFile is one pagingCase's API: Items.List.
func pagingFile(c pagingCase) *descriptorpb.FileDescriptorProto {
	resp := append([]*descriptorpb.FieldDescriptorProto{fieldProto("items", 1, tString, repeated, "")}, c.next)
	return &descriptorpb.FileDescriptorProto{
		Name: proto.String("items/v1/items.proto"), Package: proto.String("items.v1"), Syntax: proto.String("proto3"),
		Dependency: c.deps,
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("ListRequest"), Field: c.request},
			{Name: proto.String("ListResponse"), Field: resp},
		},
		Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("Items"), Method: []*descriptorpb.MethodDescriptorProto{
			{Name: proto.String("List"), InputType: proto.String(".items.v1.ListRequest"), OutputType: proto.String(".items.v1.ListResponse")},
		}}},
	}
}

// pagingBackend serves c's API with 7 items, pages of the requested size
// (3 without one) and a next token whenever items remain: "o<offset>" for
// a string token, the bytes 0xfb 0xff <offset> for a bytes one (which
// base64 writes with "+" and "/").
func pagingBackend(t *testing.T, c pagingCase) string {
	t.Helper()
	api := &fakeAPI{}
	api.set(t, pagingFile(c))
	d, err := api.FindDescriptorByName("items.v1.ListRequest")
	if err != nil {
		t.Fatal(err)
	}
	req := d.(protoreflect.MessageDescriptor)
	resp := req.ParentFile().Messages().ByName("ListResponse")
	const total = 7
	return serveAnswering(t, api, func(_ string, wire []byte) (proto.Message, error) {
		in := dynamicpb.NewMessage(req)
		if err := proto.Unmarshal(wire, in); err != nil {
			return nil, err
		}
		offset, size := 0, 3
		if f := req.Fields().ByName(protoreflect.Name(c.token)); f != nil && in.Has(f) {
			switch v := in.Get(f).Interface().(type) {
			case string:
				offset, _ = strconv.Atoi(strings.TrimPrefix(v, "o"))
			case []byte:
				offset = int(v[len(v)-1])
			}
		}
		if f := req.Fields().ByName(protoreflect.Name(c.size)); f != nil && in.Has(f) {
			v := in.Get(f)
			if f.Message() != nil {
				v = v.Message().Get(f.Message().Fields().ByName("value"))
			}
			switch n := v.Interface().(type) {
			case int32:
				size = int(n)
			case uint32:
				size = int(n)
			}
		}
		out := dynamicpb.NewMessage(resp)
		items := out.Mutable(resp.Fields().ByName("items")).List()
		for i := offset; i < min(offset+size, total); i++ {
			items.Append(protoreflect.ValueOfString(fmt.Sprintf("item-%d", i)))
		}
		if offset+size < total {
			next := resp.Fields().ByNumber(2)
			if next.Kind() == protoreflect.BytesKind {
				out.Set(next, protoreflect.ValueOfBytes([]byte{0xfb, 0xff, byte(offset + size)}))
			} else {
				out.Set(next, protoreflect.ValueOfString(fmt.Sprintf("o%d", offset+size)))
			}
		}
		return out, nil
	})
}

var nextItems = regexp.MustCompile(`^More results: call Items_List again with the same arguments and "([^"]+)": ("[^"]*") for the next page\.$`)

// TestPagingVariants: the paging conventions of real APIs, each on a
// backend that pages for real. A paged method's description says how to
// page with its own fields, and following the next-page sentences from
// the first page visits every item once: string tokens as they are,
// bytes tokens as the base64 the result shows and the request takes.
// Methods whose two sides do not match, or that page by other means, say
// nothing of pages, even when their response carries a token.
func TestPagingVariants(t *testing.T) {
	const (
		tInt32  = descriptorpb.FieldDescriptorProto_TYPE_INT32
		tUint32 = descriptorpb.FieldDescriptorProto_TYPE_UINT32
	)
	f := fieldProto
	set := func(next string) string {
		return fmt.Sprintf(`when a result has a %q, call this tool again with the same arguments and `, next)
	}
	const exact = "; pass the token exactly as the result gives it."
	cases := []pagingCase{
		{name: "AIP-158", request: []*descriptorpb.FieldDescriptorProto{f("page_size", 1, tInt32, optional, ""), f("page_token", 2, tString, optional, "")},
			next: f("next_page_token", 2, tString, optional, ""), token: "page_token", size: "page_size", tokenArg: "pageToken",
			paged: `Paged: set "pageSize" to the most items you want in one result; ` + set("nextPageToken") + `"pageToken" set to it for the next page (an empty or absent nextPageToken means the last page).`},
		{name: "Temporal list", request: []*descriptorpb.FieldDescriptorProto{f("namespace", 1, tString, optional, ""), f("page_size", 2, tInt32, optional, ""), f("next_page_token", 3, tBytes, optional, "")},
			next: f("next_page_token", 2, tBytes, optional, ""), token: "next_page_token", size: "page_size", tokenArg: "nextPageToken",
			paged: `Paged: set "pageSize" to the most items you want in one result; ` + set("nextPageToken") + `"nextPageToken" set to it for the next page (an empty or absent nextPageToken means the last page)` + exact},
		{name: "Temporal history", request: []*descriptorpb.FieldDescriptorProto{f("maximum_page_size", 3, tInt32, optional, ""), f("next_page_token", 4, tBytes, optional, "")},
			next: f("next_page_token", 2, tBytes, optional, ""), token: "next_page_token", size: "maximum_page_size", tokenArg: "nextPageToken",
			paged: `Paged: set "maximumPageSize" to the most items you want in one result; ` + set("nextPageToken") + `"nextPageToken" set to it for the next page (an empty or absent nextPageToken means the last page)` + exact},
		{name: "Temporal token only", request: []*descriptorpb.FieldDescriptorProto{f("next_page_token", 1, tBytes, optional, "")},
			next: f("next_page_token", 2, tBytes, optional, ""), token: "next_page_token", tokenArg: "nextPageToken",
			paged: `Paged: ` + set("nextPageToken") + `"nextPageToken" set to it for the next page (an empty or absent nextPageToken means the last page)` + exact},
		{name: "max_page_size", request: []*descriptorpb.FieldDescriptorProto{f("max_page_size", 1, tInt32, optional, ""), f("page_token", 2, tString, optional, "")},
			next: f("next_page_token", 2, tString, optional, ""), token: "page_token", size: "max_page_size", tokenArg: "pageToken",
			paged: `Paged: set "maxPageSize" to the most items you want in one result; ` + set("nextPageToken") + `"pageToken" set to it`},
		{name: "Compute Engine", request: []*descriptorpb.FieldDescriptorProto{f("max_results", 1, tUint32, optional, ""), f("page_token", 2, tString, optional, "")},
			next: f("next_page_token", 2, tString, optional, ""), token: "page_token", size: "max_results", tokenArg: "pageToken",
			paged: `Paged: set "maxResults" to the most items you want in one result; ` + set("nextPageToken") + `"pageToken" set to it`},
		{name: "BigQuery wrapper size", request: []*descriptorpb.FieldDescriptorProto{f("max_results", 1, tMessage, optional, ".google.protobuf.UInt32Value"), f("page_token", 2, tString, optional, "")},
			deps: []string{"google/protobuf/wrappers.proto"},
			next: f("next_page_token", 2, tString, optional, ""), token: "page_token", size: "max_results", tokenArg: "pageToken",
			paged: `Paged: set "maxResults" to the most items you want in one result; `},
		{name: "AWS", request: []*descriptorpb.FieldDescriptorProto{f("max_results", 1, tInt32, optional, ""), f("next_token", 2, tString, optional, "")},
			next: f("next_token", 2, tString, optional, ""), token: "next_token", size: "max_results", tokenArg: "nextToken",
			paged: `Paged: set "maxResults" to the most items you want in one result; ` + set("nextToken") + `"nextToken" set to it`},
		{name: "limit", request: []*descriptorpb.FieldDescriptorProto{f("limit", 1, tInt32, optional, ""), f("next_token", 2, tString, optional, "")},
			next: f("next_token", 2, tString, optional, ""), token: "next_token", size: "limit", tokenArg: "nextToken",
			paged: `Paged: set "limit" to the most items you want in one result; `},
		{name: "S3 continuation", request: []*descriptorpb.FieldDescriptorProto{f("max_keys", 1, tInt32, optional, ""), f("continuation_token", 2, tString, optional, "")},
			next: f("next_continuation_token", 2, tString, optional, ""), token: "continuation_token", tokenArg: "continuationToken",
			paged: `Paged: ` + set("nextContinuationToken") + `"continuationToken" set to it`},
		{name: "Azure continuation", request: []*descriptorpb.FieldDescriptorProto{f("continuation_token", 2, tString, optional, "")},
			next: f("continuation_token", 2, tString, optional, ""), token: "continuation_token", tokenArg: "continuationToken",
			paged: `Paged: ` + set("continuationToken") + `"continuationToken" set to it`},

		// Not paged, though each response carries a token.
		{name: "a token the request cannot carry", request: []*descriptorpb.FieldDescriptorProto{f("namespace", 1, tString, optional, "")},
			next: f("next_page_token", 2, tBytes, optional, "")},
		{name: "kinds differ", request: []*descriptorpb.FieldDescriptorProto{f("page_size", 1, tInt32, optional, ""), f("page_token", 2, tString, optional, "")},
			next: f("next_page_token", 2, tBytes, optional, ""), token: "page_token", size: "page_size"},
		{name: "pair of another convention", request: []*descriptorpb.FieldDescriptorProto{f("page_size", 1, tInt32, optional, ""), f("page_token", 2, tString, optional, "")},
			next: f("next_token", 2, tString, optional, ""), token: "page_token", size: "page_size"},
		{name: "repeated token", request: []*descriptorpb.FieldDescriptorProto{f("page_token", 2, tString, repeated, "")},
			next: f("next_page_token", 2, tString, optional, "")},
		{name: "cursor", request: []*descriptorpb.FieldDescriptorProto{f("limit", 1, tInt32, optional, ""), f("cursor", 2, tString, optional, "")},
			next: f("next_cursor", 2, tString, optional, ""), token: "cursor", size: "limit"},
		{name: "Kubernetes continue", request: []*descriptorpb.FieldDescriptorProto{f("limit", 1, tInt32, optional, ""), f("continue", 2, tString, optional, "")},
			next: f("continue", 2, tString, optional, ""), token: "continue", size: "limit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			addr := pagingBackend(t, c)
			g, base := newGateway(t, []gateway.Backend{dialBackend(t, "items", addr)}, nil)
			desc := toolByName(t, g, "Items_List").Description
			if c.paged == "" {
				if strings.Contains(desc, "Paged") {
					t.Errorf("not paged, but the description says: %q", desc)
				}
			} else if !strings.Contains(desc, "\n\n"+c.paged) {
				t.Errorf("description %q\nwant it to contain %q", desc, c.paged)
			}

			cs := connect(t, base+"/mcp", "2025-11-25")
			args := map[string]any{}
			pages := 3 // of the backend's default size
			if c.paged != "" && c.size != "" {
				// The size the description names reaches the backend.
				args[camel(c.size)], pages = 2, 4
			}
			var items []string
			page := 0
			for ; page < 10; page++ {
				res := call(t, cs, "Items_List", args)
				var sc map[string]any
				decodeStructured(t, res, &sc)
				for _, it := range sc["items"].([]any) {
					items = append(items, it.(string))
				}
				if c.paged == "" {
					if len(res.Content) != 1 {
						t.Errorf("not paged, but the result says: %+v", res.Content[1:])
					}
					return
				}
				if len(res.Content) == 1 {
					break
				}
				m := nextItems.FindStringSubmatch(textOf(t, res, 1))
				if m == nil {
					t.Fatalf("page %d: %q", page, textOf(t, res, 1))
				}
				if m[1] != c.tokenArg {
					t.Errorf("the sentence names %q, want %q", m[1], c.tokenArg)
				}
				var token string
				if err := json.Unmarshal([]byte(m[2]), &token); err != nil {
					t.Fatal(err)
				}
				// The sentence gives the token as the result shows it.
				if shown := sc[camel(c.next.GetName())]; shown != token {
					t.Errorf("the sentence gives %q, the result %q", token, shown)
				}
				args[c.tokenArg] = token
			}
			want := []string{"item-0", "item-1", "item-2", "item-3", "item-4", "item-5", "item-6"}
			if !slices.Equal(items, want) || page+1 != pages {
				t.Errorf("following the sentences visited %v in %d pages, want %d", items, page+1, pages)
			}
		})
	}
}

// camel is the JSON name protoc gives a field named name.
func camel(name string) string {
	parts := strings.Split(name, "_")
	for i := 1; i < len(parts); i++ {
		parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
	}
	return strings.Join(parts, "")
}

// workflowsFile is a list method shaped like Temporal's
// ListWorkflowExecutions, paged the way its history and schedules are:
// maximum_page_size, and next_page_token as bytes on both sides.
func workflowsFile() *descriptorpb.FileDescriptorProto {
	f := fieldProto
	const tInt32 = descriptorpb.FieldDescriptorProto_TYPE_INT32
	return &descriptorpb.FileDescriptorProto{
		Name: proto.String("wf/v1/list.proto"), Package: proto.String("wf.v1"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{Name: proto.String("ListWorkflowExecutionsRequest"), Field: []*descriptorpb.FieldDescriptorProto{
				f("namespace", 1, tString, optional, ""), f("maximum_page_size", 2, tInt32, optional, ""),
				f("next_page_token", 3, tBytes, optional, ""), f("query", 4, tString, optional, ""),
			}},
			{Name: proto.String("WorkflowExecutionInfo"), Field: []*descriptorpb.FieldDescriptorProto{
				f("workflow_id", 1, tString, optional, ""), f("run_id", 2, tString, optional, ""), f("memo", 3, tString, optional, ""),
			}},
			{Name: proto.String("ListWorkflowExecutionsResponse"), Field: []*descriptorpb.FieldDescriptorProto{
				f("executions", 1, tMessage, repeated, ".wf.v1.WorkflowExecutionInfo"), f("next_page_token", 2, tBytes, optional, ""),
			}},
		},
		Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("WorkflowService"), Method: []*descriptorpb.MethodDescriptorProto{
			{Name: proto.String("ListWorkflowExecutions"), InputType: proto.String(".wf.v1.ListWorkflowExecutionsRequest"), OutputType: proto.String(".wf.v1.ListWorkflowExecutionsResponse")},
		}}},
	}
}

// TestPagingCutNamesTheFields: a page of a Temporal-shaped list, too
// large for the result budget, is cut, and the result says how to go on
// with the method's own fields: the next page by "nextPageToken", whole
// (300 bytes, so its base64 is longer than the 256 characters a cut may
// shorten a string to) though the page was cut, and less at once with a
// smaller "maximumPageSize". The token reaches the backend as the bytes
// it sent.
func TestPagingCutNamesTheFields(t *testing.T) {
	api := &fakeAPI{}
	api.set(t, workflowsFile())
	d, err := api.FindDescriptorByName("wf.v1.ListWorkflowExecutionsRequest")
	if err != nil {
		t.Fatal(err)
	}
	req := d.(protoreflect.MessageDescriptor)
	resp := req.ParentFile().Messages().ByName("ListWorkflowExecutionsResponse")
	token := make([]byte, 300)
	for i := range token {
		token[i] = byte(251 + i) // base64 with "+" and "/"
	}
	var mu sync.Mutex
	var got [][]byte // the tokens the backend received
	addr := serveAnswering(t, api, func(_ string, wire []byte) (proto.Message, error) {
		in := dynamicpb.NewMessage(req)
		if err := proto.Unmarshal(wire, in); err != nil {
			return nil, err
		}
		mu.Lock()
		got = append(got, in.Get(req.Fields().ByName("next_page_token")).Bytes())
		first := len(got) == 1
		mu.Unlock()
		out := dynamicpb.NewMessage(resp)
		list := out.Mutable(resp.Fields().ByName("executions")).List()
		info := resp.Fields().ByName("executions").Message()
		for i := range in.Get(req.Fields().ByName("maximum_page_size")).Int() {
			e := dynamicpb.NewMessage(info)
			e.Set(info.Fields().ByName("workflow_id"), protoreflect.ValueOfString(fmt.Sprintf("order-%d", i)))
			e.Set(info.Fields().ByName("memo"), protoreflect.ValueOfString(strings.Repeat("m", 200)))
			list.Append(protoreflect.ValueOfMessage(e))
		}
		if first {
			out.Set(resp.Fields().ByName("next_page_token"), protoreflect.ValueOfBytes(token))
		}
		return out, nil
	})
	const budget = 2048
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "wf", addr)}, &gateway.Options{Results: gateway.ResultOptions{MaxBytes: budget}})
	cs := connect(t, base+"/mcp", "2025-11-25")
	const tool = "WorkflowService_ListWorkflowExecutions"

	res := call(t, cs, tool, map[string]any{"namespace": "default", "maximumPageSize": 20})
	c := readCut(t, g, tool, budget, "2025-11-25", res)
	if len(c.records) != 1 || c.records[0].Path != "executions" || c.records[0].Total == nil || *c.records[0].Total != 20 || c.records[0].Kept >= 20 {
		t.Errorf("cut records %+v", c.records)
	}
	b64 := base64.StdEncoding.EncodeToString(token)
	next := fmt.Sprintf(`More results: call %s again with the same arguments and "nextPageToken": %q for the next page.`, tool, b64)
	if !strings.Contains(c.note, next) {
		t.Errorf("the result does not say how to get the next page:\n%s\nwant %q", c.note, next)
	}
	if !strings.Contains(c.note, `To get less at once, call again with a smaller "maximumPageSize".`) {
		t.Errorf("the cut does not say how to get less: %s", c.note)
	}

	res = call(t, cs, tool, map[string]any{"namespace": "default", "maximumPageSize": 1, "nextPageToken": b64})
	if res.IsError || len(res.Content) != 1 {
		t.Errorf("the last page: %+v", res.Content)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0] != nil || !bytes.Equal(got[1], token) {
		t.Errorf("the backend received the tokens %x", got)
	}
}
