package gateway

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/jsonstr"
)

// Asking for less: Google API conventions a model can use to keep a
// result small, recognised at discovery by field names and types and
// explained in the tool's description.
//
//   - AIP-158 pagination: the request has page_size (an integer) and
//     page_token (a string), the response next_page_token (a string). The
//     description says how to page; a result whose next_page_token is set
//     ends with a sentence giving the exact arguments for the next page,
//     read from the response's wire bytes (a few field headers, no
//     decoding).
//   - AIP-157 partial responses: the request has read_mask or field_mask,
//     a google.protobuf.FieldMask. The description says how to ask for
//     only some fields, naming a few of the resource's.

// paging is a list method's AIP-158 fields, nil for other tools.
type paging struct {
	sizeArg, tokenArg string           // the request's property names
	next              protowire.Number // next_page_token in the response
}

// compileAskLess recognises the conventions in m and adds what a model
// needs to know to the description; it returns the hint for the sentence
// of a cut result ("" when the method offers no way to ask for less).
func compileAskLess(t *tool, m protoreflect.MethodDescriptor, useProtoNames bool) string {
	if m.IsStreamingClient() || m.IsStreamingServer() {
		return ""
	}
	name := func(f protoreflect.FieldDescriptor) string {
		if useProtoNames {
			return string(f.Name())
		}
		return f.JSONName()
	}
	in, out := m.Input().Fields(), m.Output().Fields()
	var hints []string
	size, token, next := in.ByName("page_size"), in.ByName("page_token"), out.ByName("next_page_token")
	if isScalar(size, protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind) &&
		isScalar(token, protoreflect.StringKind) && isScalar(next, protoreflect.StringKind) {
		t.paging = &paging{sizeArg: name(size), tokenArg: name(token), next: next.Number()}
		t.def.Description += fmt.Sprintf("\n\nPaged: set %q to the most items you want in one result; when a result has a %q, call this tool again with the same arguments and %q set to it for the next page (an empty or absent %s means the last page).",
			t.paging.sizeArg, name(next), t.paging.tokenArg, name(next))
		hints = append(hints, fmt.Sprintf("a smaller %q", t.paging.sizeArg))
	}
	for _, n := range []protoreflect.Name{"read_mask", "field_mask"} {
		f := in.ByName(n)
		if f == nil || f.IsList() || f.Message() == nil || f.Message().FullName() != "google.protobuf.FieldMask" {
			continue
		}
		desc := fmt.Sprintf("\n\nPartial response: set %q to the comma-separated paths of the fields you need", name(f))
		if ex := exampleFields(m.Output(), name); ex != "" {
			desc += fmt.Sprintf(" (for example %q)", ex)
		}
		t.def.Description += desc + "; the result then holds only those, which keeps it small."
		hints = append(hints, fmt.Sprintf("%q with only the fields you need", name(f)))
		break
	}
	if len(hints) == 0 {
		return ""
	}
	return " To get less at once, call again with " + strings.Join(hints, " or ") + "."
}

func isScalar(f protoreflect.FieldDescriptor, kinds ...protoreflect.Kind) bool {
	if f == nil || f.IsList() || f.IsMap() {
		return false
	}
	for _, k := range kinds {
		if f.Kind() == k {
			return true
		}
	}
	return false
}

// exampleFields names two fields of the resource a mask selects from: the
// elements of a list response's repeated message field, else the response
// itself.
func exampleFields(out protoreflect.MessageDescriptor, name func(protoreflect.FieldDescriptor) string) string {
	fields := out.Fields()
	for i := range fields.Len() {
		if f := fields.Get(i); f.IsList() && f.Message() != nil {
			fields = f.Message().Fields()
			break
		}
	}
	var ex []string
	for i := 0; i < fields.Len() && len(ex) < 2; i++ {
		if f := fields.Get(i); f.Name() != "next_page_token" {
			ex = append(ex, name(f))
		}
	}
	return strings.Join(ex, ",")
}

// notePage ends res with the arguments for the next page when the
// response (wire form) has a next_page_token.
func (t *tool) notePage(res *mcp.CallToolResult, wire []byte) {
	token := stringField(wire, t.paging.next)
	if token == "" {
		return
	}
	res.Content = append(res.Content, mcp.Content{Type: "text", Text: fmt.Sprintf(
		"More results: call %s again with the same arguments and %q: %s for the next page.",
		t.def.Name, t.paging.tokenArg, jsonstr.Append(nil, token))})
}

// stringField is the last occurrence (as protobuf merges) of the string
// field num at the top level of wire, "" when absent or malformed. Other
// fields are skipped by their headers, so a large page costs no more than
// a small one.
func stringField(wire []byte, num protowire.Number) string {
	var val []byte
	for len(wire) > 0 {
		n, typ, l := protowire.ConsumeTag(wire)
		if l < 0 {
			return ""
		}
		wire = wire[l:]
		if n == num && typ == protowire.BytesType {
			v, l := protowire.ConsumeBytes(wire)
			if l < 0 {
				return ""
			}
			val, wire = v, wire[l:]
			continue
		}
		if l = protowire.ConsumeFieldValue(n, typ, wire); l < 0 {
			return ""
		}
		wire = wire[l:]
	}
	return string(val)
}
