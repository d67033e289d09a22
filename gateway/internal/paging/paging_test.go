package paging

import (
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	_ "google.golang.org/protobuf/types/known/fieldmaskpb" // google/protobuf/field_mask.proto for the masks below

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// method compiles a file holding messages Req and Resp with the given
// fields and a service with one method List(Req) returns (Resp).
func method(t *testing.T, name, req, resp string) protoreflect.MethodDescriptor {
	t.Helper()
	fdp := &descriptorpb.FileDescriptorProto{}
	text := `name: "` + name + `.proto" package: "` + name + `" syntax: "proto3" dependency: "google/protobuf/field_mask.proto"
		message_type { name: "Req" ` + req + ` }
		message_type { name: "Resp" ` + resp + ` }
		service { name: "S" method { name: "List" input_type: ".` + name + `.Req" output_type: ".` + name + `.Resp" } }`
	if err := prototext.Unmarshal([]byte(text), fdp); err != nil {
		t.Fatal(err)
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Services().Get(0).Methods().Get(0)
}

// field is a singular proto3 field of the given type (and, for a
// message, type name).
func field(name string, num int, typ, typeName string) string {
	s := `field { name: "` + name + `" number: ` + string(rune('0'+num)) + ` label: LABEL_OPTIONAL type: ` + typ
	if typeName != "" {
		s += ` type_name: "` + typeName + `"`
	}
	return s + ` }`
}

// TestCompile: a method is paged only when the request's token and the
// response's next token are a known pair of one kind, string or bytes;
// the page size is a known name of an integer field; a FieldMask named
// read_mask offers a partial response. What the description gains and
// the cut result's hint name the fields as a model sends them (JSON
// names, or proto names with useProtoNames).
func TestCompile(t *testing.T) {
	const str, byt, i32 = "TYPE_STRING", "TYPE_BYTES", "TYPE_INT32"
	for _, tc := range []struct {
		name, req, resp string
		protoNames      bool
		paged           bool
		sizeArg         string
		tokenArg        string
		nextBytes       bool
		desc, hint      []string // substrings each must hold; none when empty
	}{
		{name: "aip158", req: field("page_size", 1, i32, "") + field("page_token", 2, str, ""), resp: field("next_page_token", 1, str, ""),
			paged: true, sizeArg: "pageSize", tokenArg: "pageToken",
			desc: []string{`Paged: set "pageSize"`, `"nextPageToken"`}, hint: []string{`a smaller "pageSize"`}},
		{name: "protonames", req: field("page_size", 1, i32, "") + field("page_token", 2, str, ""), resp: field("next_page_token", 1, str, ""), protoNames: true,
			paged: true, sizeArg: "page_size", tokenArg: "page_token",
			desc: []string{`set "page_size"`, `"page_token" set to it`}, hint: []string{`a smaller "page_size"`}},
		{name: "bytestoken", req: field("next_page_token", 1, byt, ""), resp: field("next_page_token", 1, byt, ""),
			paged: true, tokenArg: "nextPageToken", nextBytes: true,
			desc: []string{"pass the token exactly as the result gives it"}},
		// A page_size that is not a count is not the page size.
		{name: "stringsize", req: field("page_size", 1, str, "") + field("page_token", 2, str, ""), resp: field("next_page_token", 1, str, ""),
			paged: true, tokenArg: "pageToken", desc: []string{`"nextPageToken"`}},
		// A response token the request cannot carry says nothing.
		{name: "mismatch", req: field("page_token", 1, str, ""), resp: field("next_page_token", 1, byt, "")},
		// A limit outside a paged method is not a page size.
		{name: "limitonly", req: field("limit", 1, i32, ""), resp: field("items", 1, str, "")},
		{name: "mask", req: field("read_mask", 1, "TYPE_MESSAGE", ".google.protobuf.FieldMask"), resp: field("title", 1, str, "") + field("author", 2, str, ""),
			desc: []string{`Partial response: set "readMask"`, `(for example "title,author")`}, hint: []string{`"readMask" with only the fields you need`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, desc, hint := Compile(method(t, tc.name, tc.req, tc.resp), tc.protoNames)
			if (p != nil) != tc.paged {
				t.Fatalf("paged = %v, want %v", p != nil, tc.paged)
			}
			if p != nil && (p.sizeArg != tc.sizeArg || p.tokenArg != tc.tokenArg || p.nextBytes != tc.nextBytes) {
				t.Errorf("paging %+v, want size %q, token %q, bytes %v", *p, tc.sizeArg, tc.tokenArg, tc.nextBytes)
			}
			for _, want := range tc.desc {
				if !strings.Contains(desc, want) {
					t.Errorf("description %q lacks %q", desc, want)
				}
			}
			if len(tc.desc) == 0 && desc != "" {
				t.Errorf("description %q, want none", desc)
			}
			for _, want := range tc.hint {
				if !strings.Contains(hint, want) {
					t.Errorf("hint %q lacks %q", hint, want)
				}
			}
			if len(tc.hint) == 0 && hint != "" {
				t.Errorf("hint %q, want none", hint)
			}
		})
	}
}

// TestNote: a response whose next page token is set (its last
// occurrence, as protobuf merges) ends the result with the arguments for
// the next page, a bytes token in the base64 the request takes; an empty
// or absent token adds nothing, nor does a malformed response.
func TestNote(t *testing.T) {
	wire := func(tokens ...string) []byte {
		var b []byte
		b = protowire.AppendTag(b, 2, protowire.VarintType) // another field, skipped
		b = protowire.AppendVarint(b, 7)
		for _, tok := range tokens {
			b = protowire.AppendTag(b, 1, protowire.BytesType)
			b = protowire.AppendString(b, tok)
		}
		return b
	}
	for _, tc := range []struct {
		name string
		p    Paged
		wire []byte
		want string // the note, "" for none
	}{
		{"string", Paged{tokenArg: "pageToken", next: 1}, wire("old", "p2"), `More results: call T again with the same arguments and "pageToken": "p2" for the next page.`},
		{"bytes", Paged{tokenArg: "nextPageToken", next: 1, nextBytes: true}, wire("\x00\xff"), `More results: call T again with the same arguments and "nextPageToken": "AP8=" for the next page.`},
		{"empty", Paged{tokenArg: "pageToken", next: 1}, wire(""), ""},
		{"absent", Paged{tokenArg: "pageToken", next: 1}, wire(), ""},
		{"malformed", Paged{tokenArg: "pageToken", next: 1}, append(wire("p2"), 0x0a, 0x05), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := &mcp.CallToolResult{Content: []mcp.Content{{Type: mcp.ContentText, Structured: true}}}
			tc.p.Note(res, "T", tc.wire)
			var got string
			if len(res.Content) > 1 {
				got = res.Content[1].Text
			}
			if got != tc.want || len(res.Content) > 2 {
				t.Errorf("note %q (%d blocks), want %q", got, len(res.Content), tc.want)
			}
		})
	}
}
