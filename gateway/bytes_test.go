package gateway_test

import (
	"encoding/json"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/reflection"
	refv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// serveAnswering serves api's reflection and answers every call with
// answer(method, the request's wire bytes), so a test sees exactly what
// reached the backend and can answer like a real service.
func serveAnswering(t *testing.T, api *fakeAPI, answer func(method string, req []byte) (proto.Message, error)) string {
	t.Helper()
	gs := grpc.NewServer(grpc.UnknownServiceHandler(func(_ any, stream grpc.ServerStream) error {
		in := new(emptypb.Empty)
		if err := stream.RecvMsg(in); err != nil && err != io.EOF {
			return err
		}
		method, _ := grpc.MethodFromServerStream(stream)
		out, err := answer(method, in.ProtoReflect().GetUnknown())
		if err != nil {
			return err
		}
		return stream.SendMsg(out)
	}))
	refv1.RegisterServerReflectionServer(gs, reflection.NewServerV1(reflection.ServerOptions{Services: api, DescriptorResolver: api}))
	return testkit.ServeLoopback(t, gs)
}

// fieldProto is a field of a test descriptor; typeName names a message
// (".pkg.Msg"), "" for scalars.
func fieldProto(name string, n int32, typ descriptorpb.FieldDescriptorProto_Type, label descriptorpb.FieldDescriptorProto_Label, typeName string) *descriptorpb.FieldDescriptorProto {
	f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(n), Type: typ.Enum(), Label: label.Enum()}
	if typeName != "" {
		f.TypeName = proto.String(typeName)
	}
	return f
}

const (
	optional = descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
	repeated = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
	tString  = descriptorpb.FieldDescriptorProto_TYPE_STRING
	tBytes   = descriptorpb.FieldDescriptorProto_TYPE_BYTES
	tMessage = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
)

// payloadFile is a workflow API shaped like Temporal's: a Payload whose
// metadata map holds bytes ("encoding" must be the bytes of json/plain)
// and whose data is bytes.
func payloadFile() *descriptorpb.FileDescriptorProto {
	return &descriptorpb.FileDescriptorProto{
		Name: proto.String("wf/v1/wf.proto"), Package: proto.String("wf.v1"), Syntax: proto.String("proto3"),
		MessageType: []*descriptorpb.DescriptorProto{
			{
				Name: proto.String("Payload"),
				Field: []*descriptorpb.FieldDescriptorProto{
					fieldProto("metadata", 1, tMessage, repeated, ".wf.v1.Payload.MetadataEntry"),
					fieldProto("data", 2, tBytes, optional, ""),
				},
				NestedType: []*descriptorpb.DescriptorProto{{
					Name:    proto.String("MetadataEntry"),
					Options: &descriptorpb.MessageOptions{MapEntry: proto.Bool(true)},
					Field: []*descriptorpb.FieldDescriptorProto{
						fieldProto("key", 1, tString, optional, ""),
						fieldProto("value", 2, tBytes, optional, ""),
					},
				}},
			},
			{Name: proto.String("StartRequest"), Field: []*descriptorpb.FieldDescriptorProto{
				fieldProto("namespace", 1, tString, optional, ""),
				fieldProto("input", 2, tMessage, optional, ".wf.v1.Payload"),
			}},
			{Name: proto.String("StartResponse"), Field: []*descriptorpb.FieldDescriptorProto{
				fieldProto("run_id", 1, tString, optional, ""),
			}},
		},
		Service: []*descriptorpb.ServiceDescriptorProto{{Name: proto.String("Workflows"), Method: []*descriptorpb.MethodDescriptorProto{
			{Name: proto.String("Start"), InputType: proto.String(".wf.v1.StartRequest"), OutputType: proto.String(".wf.v1.StartResponse")},
		}}},
	}
}

// payloadBackend serves payloadFile like a real service: it refuses an
// encoding that is not text, as Temporal does, and otherwise starts a
// run. It returns the address and the payloads it received.
func payloadBackend(t *testing.T) (string, func() []received) {
	t.Helper()
	api := &fakeAPI{}
	api.set(t, payloadFile())
	d, err := api.FindDescriptorByName("wf.v1.StartRequest")
	if err != nil {
		t.Fatal(err)
	}
	req := d.(protoreflect.MessageDescriptor)
	resp := req.ParentFile().Messages().ByName("StartResponse")
	var mu sync.Mutex
	var got []received
	addr := serveAnswering(t, api, func(_ string, wire []byte) (proto.Message, error) {
		m := dynamicpb.NewMessage(req)
		if err := proto.Unmarshal(wire, m); err != nil {
			return nil, err
		}
		input := m.Get(req.Fields().ByName("input")).Message()
		r := received{data: string(input.Get(req.Fields().ByName("input").Message().Fields().ByName("data")).Bytes())}
		r.encoding = string(input.Get(input.Descriptor().Fields().ByName("metadata")).Map().Get(protoreflect.ValueOfString("encoding").MapKey()).Bytes())
		mu.Lock()
		got = append(got, r)
		mu.Unlock()
		if !utf8.ValidString(r.encoding) {
			return nil, status.Errorf(codes.InvalidArgument, "payload encoding %q is not supported", r.encoding)
		}
		out := dynamicpb.NewMessage(resp)
		out.Set(resp.Fields().ByName("run_id"), protoreflect.ValueOfString("run-1"))
		return out, nil
	})
	return addr, func() []received {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(got)
	}
}

type received struct{ encoding, data string }

// TestBytesArguments: against a Temporal-shaped backend, a bytes field's
// schema says it is base64 with an example; base64 reaches the backend as
// the bytes it spells; text where base64 belongs is refused when it is not
// canonical base64 (the backend never sees it), and warned about in the
// result, success or error, when it is. The same holds through call_tool
// in search mode.
func TestBytesArguments(t *testing.T) {
	addr, backendGot := payloadBackend(t)
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "wf", addr)}, nil)

	var in struct {
		Properties struct {
			Input struct {
				Properties struct {
					Metadata struct {
						AdditionalProperties map[string]any `json:"additionalProperties"`
					} `json:"metadata"`
					Data map[string]any `json:"data"`
				} `json:"properties"`
			} `json:"input"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(toolByName(t, g, "Workflows_Start").InputSchema, &in); err != nil {
		t.Fatal(err)
	}
	for name, s := range map[string]map[string]any{"metadata values": in.Properties.Input.Properties.Metadata.AdditionalProperties, "data": in.Properties.Input.Properties.Data} {
		if s["contentEncoding"] != "base64" || s["description"] != schema.BytesDescription {
			t.Errorf("%s: %v", name, s)
		}
	}

	cs := connect(t, base+"/mcp", "2025-11-25")
	start := func(encoding, data string) *sdk.CallToolResult {
		return call(t, cs, "Workflows_Start", map[string]any{"namespace": "default",
			"input": map[string]any{"metadata": map[string]any{"encoding": encoding}, "data": data}})
	}

	// Base64, as the description says: the backend gets json/plain.
	res := start("anNvbi9wbGFpbg==", "eyJhIjoxfQ==")
	if res.IsError || len(res.Content) != 1 {
		t.Fatalf("a well-formed call: %+v", res.Content)
	}
	if got := backendGot(); len(got) != 1 || got[0] != (received{"json/plain", `{"a":1}`}) {
		t.Fatalf("the backend received %q", got)
	}

	// The text itself, which protojson would take as unpadded base64:
	// refused with the value to send, and the backend sees nothing.
	res = start("json/plain", "eyJhIjoxfQ==")
	if want := `invalid arguments for Workflows_Start: input.metadata["encoding"]: expected base64 padded with "=" to a multiple of 4 characters; the base64 of the text "json/plain" is "anNvbi9wbGFpbg=="`; !res.IsError || !strings.HasPrefix(textOf(t, res, 0), want) {
		t.Errorf("json/plain: %q\nwant it to start %q", textOf(t, res, 0), want)
	}
	if got := backendGot(); len(got) != 1 {
		t.Fatalf("the backend received %q", got)
	}

	// A word that is canonical base64 goes through; the backend refuses
	// the bytes it spells, and the result says what was probably meant.
	const note = "The call was made, but some arguments were probably not what you meant (a bytes field takes base64 of the raw bytes):\n"
	res = start("json", "eyJhIjoxfQ==")
	if got := backendGot(); len(got) != 2 || got[1].encoding != "\x8e\xca'" {
		t.Fatalf("the backend received %q", got)
	}
	if !res.IsError || !strings.HasPrefix(textOf(t, res, 0), "INVALID_ARGUMENT") {
		t.Errorf("the backend's refusal: %+v", res.Content)
	}
	want := note + `input.metadata["encoding"]: "json" was read as base64 and sent as 3 bytes that are not text; if you meant the text, the base64 of the text "json" is "anNvbg=="`
	if got := textOf(t, res, len(res.Content)-1); got != want {
		t.Errorf("warning on an error result:\n got %q\nwant %q", got, want)
	}

	// On success too.
	res = start("anNvbi9wbGFpbg==", "true")
	want = note + `input.data: "true" was read as base64 and sent as 3 bytes that are not text; if you meant the text, the base64 of the text "true" is "dHJ1ZQ=="`
	if res.IsError || len(res.Content) != 2 || textOf(t, res, 1) != want {
		t.Errorf("warning on a success: %+v", res.Content)
	}

	// call_tool in search mode is the same call.
	gs, sbase := newGateway(t, []gateway.Backend{dialBackend(t, "wf", addr)}, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}})
	if names := toolNames(gs); !slices.Contains(names, gateway.CallToolName) {
		t.Fatalf("search mode lists %v", names)
	}
	scs := connect(t, sbase+"/mcp", "2025-11-25")
	res = call(t, scs, gateway.CallToolName, map[string]any{"name": "Workflows_Start", "arguments": map[string]any{
		"input": map[string]any{"metadata": map[string]any{"encoding": "anNvbi9wbGFpbg=="}, "data": "true"}}})
	if res.IsError || textOf(t, res, len(res.Content)-1) != want {
		t.Errorf("call_tool: %+v", res.Content)
	}
}

// TestBytesWarningInAStream: a client stream's messages are checked one
// by one, and a warning names the message it is about.
func TestBytesWarningInAStream(t *testing.T) {
	_, _, url := startGateway(t, nil)
	cs := connect(t, url, "2025-11-25")
	res := call(t, cs, "ZooService_RecordObservations", map[string]any{"requests": []any{
		map[string]any{"observation": map[string]any{"animalId": "leo", "photo": "/9j/4AAQSkZJRg=="}},
		map[string]any{"observation": map[string]any{"animalId": "leo", "photo": "jpeg"}},
	}})
	if res.IsError {
		t.Fatalf("%+v", res.Content)
	}
	want := `requests[1].observation.photo: "jpeg" was read as base64 and sent as 3 bytes that are not text; if you meant the text, the base64 of the text "jpeg" is "anBlZw=="`
	if got := textOf(t, res, len(res.Content)-1); !strings.HasSuffix(got, "\n"+want) || strings.Count(got, "\n") != 1 {
		t.Errorf("got %q\nwant it to end %q", got, want)
	}
}

// textOf is the text of the result's content block i.
func textOf(t *testing.T, res *sdk.CallToolResult, i int) string {
	t.Helper()
	if i < 0 || i >= len(res.Content) {
		t.Fatalf("no content block %d in %+v", i, res.Content)
	}
	tc, ok := res.Content[i].(*sdk.TextContent)
	if !ok {
		t.Fatalf("content block %d is %T", i, res.Content[i])
	}
	return tc.Text
}
