package gateway_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

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
	_, gp, _ := startGateway(t, &gateway.Options{UseProtoNames: true})
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
	_, g, url := startGateway(t, &gateway.Options{MaxResultBytes: 1500})
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
