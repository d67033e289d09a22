// Package paging recognises the API conventions a model can use to ask
// for less, to keep a result small, recognised at discovery by field names and types and explained
// in the tool's description.
//
//   - Token paging: the request carries a page token and the response the
//     next page's, under one of the pairs of names in tokenPairs (AIP-158's
//     page_token and next_page_token, Temporal's next_page_token on both
//     sides, AWS's next_token, continuation tokens), both singular and of
//     one kind, string or bytes, so the response's value is exactly what
//     the request takes. Both sides must match: a response token the
//     request cannot carry (Temporal's PollWorkflowTaskQueue returns a
//     history page token that another method takes) says nothing. The
//     size, when the request has one, is the first integer field named in
//     pageSizes. The description says how to page; a result whose next
//     token is set ends with a sentence giving the exact arguments for
//     the next page, read from the response's wire bytes (a few field
//     headers, no decoding). Other schemes (offsets, Kubernetes' continue
//     inside ListMeta, a cursor) are not recognised: a wrong way to page
//     is worse than none.
//   - AIP-157 partial responses: the request has read_mask or field_mask,
//     a google.protobuf.FieldMask. The description says how to ask for
//     only some fields, naming a few of the resource's.
//
// It reads the methods' descriptors and a response's wire bytes,
// nothing of tools or the call path; the gateway's catalog adds what
// Compile returns to the tool, and its unary call path calls Note.
package paging

import (
	"encoding/base64"
	"fmt"
	"strings"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/jsonstr"
)

// tokenPairs are the request's page token and the response's next page
// token that make a method paged, by proto field name, in the order they
// are tried.
var tokenPairs = []struct{ request, response protoreflect.Name }{
	{"page_token", "next_page_token"},                 // AIP-158 (Google, Temporal Cloud)
	{"next_page_token", "next_page_token"},            // Temporal's WorkflowService, OperatorService
	{"next_token", "next_token"},                      // AWS-style NextToken
	{"continuation_token", "next_continuation_token"}, // S3 ListObjectsV2-style
	{"continuation_token", "continuation_token"},      // Azure-style
}

// pageSizes name the request's page size, in the order they are tried:
// AIP-158's, Temporal's for history and schedules, its shorter spelling,
// Compute's and AWS's, and a plain limit. Any integer kind, or an integer
// wrapper (BigQuery's max_results is a UInt32Value), whose JSON is a
// number either way. They are looked for only in a method a token pair
// made paged, so a limit elsewhere is never taken for a page size.
var pageSizes = []protoreflect.Name{"page_size", "maximum_page_size", "max_page_size", "max_results", "limit"}

// Paged is a paged method's fields, nil for other tools.
type Paged struct {
	sizeArg, tokenArg string           // the request's property names; sizeArg "" without a size
	next              protowire.Number // the next page token in the response
	// nextBytes: the token is bytes, written as protojson writes them
	// (padded standard base64), which the request's bytes field takes.
	nextBytes bool
}

// findPaging returns the request's token and size fields (size nil when
// there is none) and the response's next token field of a paged method;
// token is nil for a method that is not paged.
func findPaging(m protoreflect.MethodDescriptor) (token, size, next protoreflect.FieldDescriptor) {
	in, out := m.Input().Fields(), m.Output().Fields()
	for _, p := range tokenPairs {
		t, n := in.ByName(p.request), out.ByName(p.response)
		if isScalar(t, protoreflect.StringKind, protoreflect.BytesKind) && isScalar(n, t.Kind()) {
			token, next = t, n
			break
		}
	}
	if token == nil {
		return nil, nil, nil
	}
	for _, name := range pageSizes {
		if f := in.ByName(name); isCount(f) {
			return token, f, next
		}
	}
	return token, nil, next
}

// isCount: f is a singular integer, or an integer wrapper.
func isCount(f protoreflect.FieldDescriptor) bool {
	if isScalar(f, protoreflect.Int32Kind, protoreflect.Int64Kind, protoreflect.Uint32Kind, protoreflect.Uint64Kind,
		protoreflect.Sint32Kind, protoreflect.Sint64Kind) {
		return true
	}
	if f == nil || f.IsList() || f.IsMap() || f.Message() == nil {
		return false
	}
	switch f.Message().FullName() {
	case "google.protobuf.Int32Value", "google.protobuf.Int64Value", "google.protobuf.UInt32Value", "google.protobuf.UInt64Value":
		return true
	}
	return false
}

// Compile recognises the conventions in m: it returns the paging of a
// paged method (nil otherwise), what a model needs to know of them, to
// add to the tool's description, and the hint for the sentence of a cut
// result ("" when the method offers no way to ask for less).
func Compile(m protoreflect.MethodDescriptor, useProtoNames bool) (p *Paged, description, hint string) {
	if m.IsStreamingClient() || m.IsStreamingServer() {
		return nil, "", ""
	}
	name := func(f protoreflect.FieldDescriptor) string {
		if useProtoNames {
			return string(f.Name())
		}
		return f.JSONName()
	}
	in := m.Input().Fields()
	var hints []string
	if token, size, next := findPaging(m); token != nil {
		p = &Paged{tokenArg: name(token), next: next.Number(), nextBytes: next.Kind() == protoreflect.BytesKind}
		desc := "\n\nPaged: "
		if size != nil {
			p.sizeArg = name(size)
			desc += fmt.Sprintf("set %q to the most items you want in one result; ", p.sizeArg)
			hints = append(hints, fmt.Sprintf("a smaller %q", p.sizeArg))
		}
		desc += fmt.Sprintf("when a result has a %q, call this tool again with the same arguments and %q set to it for the next page (an empty or absent %s means the last page).",
			name(next), p.tokenArg, name(next))
		if p.nextBytes {
			desc = strings.TrimSuffix(desc, ".") + "; pass the token exactly as the result gives it."
		}
		description += desc
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
		description += desc + "; the result then holds only those, which keeps it small."
		hints = append(hints, fmt.Sprintf("%q with only the fields you need", name(f)))
		break
	}
	if len(hints) == 0 {
		return p, description, ""
	}
	return p, description, " To get less at once, call again with " + strings.Join(hints, " or ") + "."
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
		if f := fields.Get(i); !isNextToken(f.Name()) {
			ex = append(ex, name(f))
		}
	}
	return strings.Join(ex, ",")
}

// isNextToken: a response field of this name is a next page token, which
// says nothing about the resource.
func isNextToken(n protoreflect.Name) bool {
	for _, p := range tokenPairs {
		if p.response == n {
			return true
		}
	}
	return false
}

// Note ends res, the result of the tool named tool, with the arguments
// for the next page when the response (wire form) has a next page token:
// its JSON value as the result's structuredContent shows it, which is
// what the request takes.
func (p *Paged) Note(res *mcp.CallToolResult, tool string, wire []byte) {
	token := stringField(wire, p.next)
	if token == "" {
		return
	}
	if p.nextBytes {
		token = base64.StdEncoding.EncodeToString([]byte(token))
	}
	res.Content = append(res.Content, mcp.Content{Type: "text", Text: fmt.Sprintf(
		"More results: call %s again with the same arguments and %q: %s for the next page.",
		tool, p.tokenArg, jsonstr.Append(nil, token))})
}

// stringField is the last occurrence (as protobuf merges) of the string
// or bytes field num at the top level of wire, "" when absent or malformed. Other
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
