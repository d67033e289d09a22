package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/reflection"
	refv1 "google.golang.org/grpc/reflection/grpc_reflection_v1"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
	"github.com/grpc-mcp-gateway/gateway/internal/reflecttest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// anyBackend serves testdata/anytypes over grpc-go's server reflection,
// which describes every file, as Temporal's does, while its services'
// files import none of the files of the types its Any values carry: error
// details (anyt.errors.v1), an Any field's value and an operation's
// metadata and response (anyt.errors.v1, anyt.colors.v1). One more type,
// anyt.ghost.v1.Secret, no file declares. refl counts the
// file_containing_symbol requests its reflection receives, by symbol, and
// can hold those for one symbol until released.
type anyBackend struct {
	addr  string
	files *protoregistry.Files
	types *dynamicpb.Types
	svcs  map[string]protoreflect.ServiceDescriptor
	// fails counts the calls of Things.Fail answered.
	fails atomic.Int64

	refl reflecttest.SymbolCounter
}

const ghostType = "anyt.ghost.v1.Secret"

func startAnyBackend(t *testing.T) *anyBackend {
	t.Helper()
	src := descriptors.NewProtoSource([]string{"testdata/anytypes", lrotest.ProtoDir()},
		[]string{"anyt/v1/things.proto", "anyt/errors/v1/failures.proto", "anyt/colors/v1/colors.proto", "google/longrunning/operations.proto"})
	res, err := src.Discover(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b := &anyBackend{files: res.Files, types: dynamicpb.NewTypes(res.Files), svcs: map[string]protoreflect.ServiceDescriptor{}}
	for _, sd := range res.Services {
		b.svcs[string(sd.FullName())] = sd
	}
	gs := grpc.NewServer(grpc.StreamInterceptor(b.refl.Interceptor), grpc.UnknownServiceHandler(b.handle))
	refv1.RegisterServerReflectionServer(gs, reflection.NewServerV1(reflection.ServerOptions{Services: b, DescriptorResolver: resolverChain{b.files, protoregistry.GlobalFiles}}))
	b.addr = testkit.ServeLoopback(t, gs)
	return b
}

// GetServiceInfo lists Things and Operations for reflection.
func (b *anyBackend) GetServiceInfo() map[string]grpc.ServiceInfo {
	m := map[string]grpc.ServiceInfo{}
	for name := range b.svcs {
		m[name] = grpc.ServiceInfo{}
	}
	return m
}

// typeAsks returns the file_containing_symbol requests for the types of
// the test's Any values, by symbol (discovery asks for the services).
func (b *anyBackend) typeAsks() map[string]int {
	out := map[string]int{}
	for sym, n := range b.refl.Counts() {
		if strings.HasPrefix(sym, "anyt.errors.") || strings.HasPrefix(sym, "anyt.colors.") || strings.HasPrefix(sym, "anyt.ghost.") {
			out[sym] = n
		}
	}
	return out
}

// msg builds a message of the backend's types from its protojson.
func (b *anyBackend) msg(name, js string) (proto.Message, error) {
	mt, err := b.types.FindMessageByName(protoreflect.FullName(name))
	if err != nil {
		return nil, err
	}
	m := mt.New().Interface()
	if err := (protojson.UnmarshalOptions{Resolver: b.types}).Unmarshal([]byte(js), m); err != nil {
		return nil, fmt.Errorf("%s %s: %w", name, js, err)
	}
	return m, nil
}

// ghost is an Any of a type no file declares.
var ghost = &anypb.Any{TypeUrl: "type.googleapis.com/" + ghostType, Value: []byte("\x0a\x04psst")}

// failure is the status Things.Fail answers for kind.
func (b *anyBackend) failure(kind string) (*status.Status, error) {
	var code codes.Code
	var detail proto.Message
	var err error
	switch kind {
	case "notfound":
		code = codes.NotFound
		detail, err = b.msg("anyt.errors.v1.NotFoundFailure", `{"namespace":"default","runId":"run-1"}`)
	case "started":
		code = codes.AlreadyExists
		detail, err = b.msg("anyt.errors.v1.AlreadyStartedFailure", `{"startRequestId":"req-9","runId":"run-7","existing":{"name":"nightly"}}`)
	case "nested":
		code = codes.Aborted
		detail, err = b.msg("anyt.errors.v1.Envelope", `{"inner":{"@type":"type.googleapis.com/anyt.colors.v1.Color","name":"teal"}}`)
	case "ghost":
		code, detail = codes.FailedPrecondition, ghost
	default:
		return status.New(codes.InvalidArgument, "unknown kind"), nil
	}
	if err != nil {
		return nil, err
	}
	a, ok := detail.(*anypb.Any)
	if !ok {
		if a, err = anypb.New(detail); err != nil {
			return nil, err
		}
	}
	p := status.New(code, "it failed").Proto()
	p.Details = append(p.Details, a)
	return status.FromProto(p), nil
}

func (b *anyBackend) handle(_ any, stream grpc.ServerStream) error {
	full, _ := grpc.MethodFromServerStream(stream)
	svc, method, _ := strings.Cut(strings.TrimPrefix(full, "/"), "/")
	sd := b.svcs[svc]
	if sd == nil || sd.Methods().ByName(protoreflect.Name(method)) == nil {
		return status.Errorf(codes.Unimplemented, "%s", full)
	}
	md := sd.Methods().ByName(protoreflect.Name(method))
	in := dynamicpb.NewMessage(md.Input())
	if err := stream.RecvMsg(in); err != nil && err != io.EOF {
		return err
	}
	arg := func(name string) string { return in.Get(md.Input().Fields().ByName(protoreflect.Name(name))).String() }
	if method == "Fail" {
		st, err := b.failure(arg("kind"))
		if err != nil {
			return status.Error(codes.Internal, err.Error())
		}
		b.fails.Add(1)
		return st.Err()
	}
	if method == "Watch" {
		for _, name := range []string{"box", arg("name")} {
			out, err := b.answer("Get", func(string) string { return name })
			if err != nil {
				return status.Errorf(codes.Internal, "anyBackend: %v", err)
			}
			if err := stream.SendMsg(out); err != nil {
				return err
			}
		}
		return nil
	}
	out, err := b.answer(method, arg)
	if err != nil {
		// Fails the test at the client: no answer expected is INTERNAL.
		return status.Errorf(codes.Internal, "anyBackend: %v", err)
	}
	return stream.SendMsg(out)
}

// answer is the response of a method other than Fail.
func (b *anyBackend) answer(method string, arg func(string) string) (proto.Message, error) {
	switch method {
	case "Get":
		if arg("name") != "ghost" {
			return b.msg("anyt.v1.Thing", `{"name":"`+arg("name")+`","extra":{"@type":"type.googleapis.com/anyt.colors.v1.Color","name":"teal"}}`)
		}
		thing, err := b.msg("anyt.v1.Thing", `{"name":"ghost"}`)
		if err != nil {
			return nil, err
		}
		m := thing.ProtoReflect()
		extra := m.Mutable(m.Descriptor().Fields().ByName("extra")).Message()
		extra.Set(extra.Descriptor().Fields().ByNumber(1), protoreflect.ValueOfString(ghost.GetTypeUrl()))
		extra.Set(extra.Descriptor().Fields().ByNumber(2), protoreflect.ValueOfBytes(ghost.GetValue()))
		return thing, nil
	case "Start":
		switch label := arg("label"); label {
		case "fail":
			op, err := b.msg("google.longrunning.Operation", `{"name":"operations/fail","done":true}`)
			if err != nil {
				return nil, err
			}
			st, err := b.failure("notfound")
			if err != nil {
				return nil, err
			}
			wire, err := proto.Marshal(st.Proto())
			if err != nil {
				return nil, err
			}
			m := op.ProtoReflect()
			if err := proto.Unmarshal(wire, m.Mutable(m.Descriptor().Fields().ByName("error")).Message().Interface()); err != nil {
				return nil, err
			}
			return op, nil
		case "other":
			return b.msg("google.longrunning.Operation", `{"name":"operations/other","done":true,"response":{"@type":"type.googleapis.com/anyt.colors.v1.Color","name":"indigo"}}`)
		default:
			return b.msg("google.longrunning.Operation", `{"name":"operations/`+label+`","metadata":{"@type":"type.googleapis.com/anyt.errors.v1.Progress","step":2,"phase":"copying"}}`)
		}
	case "GetOperation":
		return b.msg("google.longrunning.Operation", `{"name":"`+arg("name")+`","metadata":{"@type":"type.googleapis.com/anyt.errors.v1.Progress","step":3,"phase":"verifying"}}`)
	}
	return nil, fmt.Errorf("no answer for %s", method)
}

// startAnyGateway fronts a fresh anyBackend with a gateway that does not
// wait for operations, and connects a client.
func startAnyGateway(t *testing.T, opts *gateway.Options) (*anyBackend, *gateway.Gateway, *sdk.ClientSession) {
	t.Helper()
	b := startAnyBackend(t)
	if opts == nil {
		opts = &gateway.Options{}
	}
	opts.Calls.OperationWait = -1
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "things", b.addr)}, opts)
	return b, g, connect(t, base+"/mcp", versions[len(versions)-1])
}

// detailJSON decodes the error detail line of an error result that is a
// JSON object (a type without a compact form), failing when there is
// none.
func detailJSON(t *testing.T, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	if !res.IsError {
		t.Fatalf("want an error result, got %s", allText(res))
	}
	for line := range strings.SplitSeq(allText(res), "\n") {
		if js, ok := strings.CutPrefix(line, "- {"); ok {
			var m map[string]any
			if err := json.Unmarshal([]byte("{"+js), &m); err != nil {
				t.Fatalf("detail line %q: %v", line, err)
			}
			return m
		}
	}
	t.Fatalf("no decoded detail in:\n%s", allText(res))
	return nil
}

// TestAnyTypesFromReflection: the types of error details, of an Any field
// of a response and of a stream's messages, of an operation's metadata and of its response, which
// only the backend's reflection describes, are looked up the first time
// they appear and rendered like the discovered ones, their fields visible
// to the model; each is asked for once, however often it comes back
// (a file's types come together: one lookup learns them all).
func TestAnyTypesFromReflection(t *testing.T) {
	b, g, cs := startAnyGateway(t, nil)
	if n := len(b.typeAsks()); n != 0 {
		t.Fatalf("discovery asked for the Any values' types: %v", b.typeAsks())
	}

	for range 3 {
		d := detailJSON(t, call(t, cs, "Things_Fail", map[string]any{"kind": "notfound"}))
		if d["@type"] != "type.googleapis.com/anyt.errors.v1.NotFoundFailure" || d["namespace"] != "default" || d["runId"] != "run-1" {
			t.Errorf("NotFoundFailure detail: %v", d)
		}
	}
	res := call(t, cs, "Things_Fail", map[string]any{"kind": "started"})
	if d := detailJSON(t, res); d["runId"] != "run-7" || d["startRequestId"] != "req-9" || d["existing"].(map[string]any)["name"] != "nightly" {
		t.Errorf("AlreadyStartedFailure detail: %v", d)
	}
	if !strings.HasPrefix(allText(res), "ALREADY_EXISTS: it failed\n") {
		t.Errorf("status text: %s", allText(res))
	}
	// A detail holding a value of a type from yet another file.
	d := detailJSON(t, call(t, cs, "Things_Fail", map[string]any{"kind": "nested"}))
	if inner, _ := d["inner"].(map[string]any); d["@type"] != "type.googleapis.com/anyt.errors.v1.Envelope" || inner["@type"] != "type.googleapis.com/anyt.colors.v1.Color" || inner["name"] != "teal" {
		t.Errorf("Envelope detail: %v", d)
	}

	// An Any field of a response.
	for range 2 {
		res := call(t, cs, "Things_Get", map[string]any{"name": "box"})
		if res.IsError {
			t.Fatalf("Things_Get: %s", allText(res))
		}
		extra, _ := structured(t, g, "Things_Get", res)["extra"].(map[string]any)
		if extra["@type"] != "type.googleapis.com/anyt.colors.v1.Color" || extra["name"] != "teal" {
			t.Errorf("Things_Get extra: %v", extra)
		}
	}

	// The Any fields of a stream's messages.
	res = call(t, cs, "Things_Watch", map[string]any{"name": "crate"})
	msgs, _ := structured(t, g, "Things_Watch", res)["messages"].([]any)
	if res.IsError || len(msgs) != 2 {
		t.Fatalf("Things_Watch: %s", allText(res))
	}
	for i, m := range msgs {
		if extra, _ := m.(map[string]any)["extra"].(map[string]any); extra["name"] != "teal" {
			t.Errorf("Things_Watch message %d: %v", i, m)
		}
	}

	// An operation's metadata, in the handle of one not done and in the
	// operation GetOperation returns; its error's details; a response of
	// another type than the declared one.
	res = call(t, cs, "Things_Start", map[string]any{"label": "slow"})
	op, _ := structured(t, g, "Things_Start", res)["operation"].(map[string]any)
	if meta, _ := op["metadata"].(map[string]any); meta["step"] != float64(2) || meta["phase"] != "copying" {
		t.Errorf("handle metadata: %v (%s)", op, allText(res))
	}
	res = call(t, cs, "Operations_GetOperation", map[string]any{"name": "operations/slow"})
	if meta, _ := structured(t, g, "Operations_GetOperation", res)["metadata"].(map[string]any); meta["step"] != float64(3) || meta["phase"] != "verifying" {
		t.Errorf("GetOperation metadata: %s", allText(res))
	}
	if d := detailJSON(t, call(t, cs, "Things_Start", map[string]any{"label": "fail"})); d["runId"] != "run-1" {
		t.Errorf("operation error detail: %v", d)
	}
	res = call(t, cs, "Things_Start", map[string]any{"label": "other"})
	var other map[string]any
	if raw, err := json.Marshal(res.StructuredContent); err != nil || json.Unmarshal(raw, &other) != nil || res.IsError || other["name"] != "indigo" {
		t.Errorf("operation response of another type: %s", allText(res))
	}

	want := map[string]int{"anyt.errors.v1.NotFoundFailure": 1, "anyt.colors.v1.Color": 1}
	if got := b.typeAsks(); !equalCounts(got, want) {
		t.Errorf("reflection was asked %v, want %v", got, want)
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// TestAnyTypeNotDescribed: a type the backend's reflection does not
// describe is said so in plain words, with no Go error text, in an error
// detail, as the result of a response holding it and of a stream that
// sends one; it is asked for once.
func TestAnyTypeNotDescribed(t *testing.T) {
	b, g, cs := startAnyGateway(t, nil)
	const want = "- the backend sent details of type " + ghostType + " that it does not describe\n"
	for range 2 {
		res := call(t, cs, "Things_Fail", map[string]any{"kind": "ghost"})
		if got := allText(res); !res.IsError || !strings.HasPrefix(got, "FAILED_PRECONDITION: it failed\n") || !strings.Contains(got, want) || strings.Contains(got, "proto:") {
			t.Errorf("ghost detail:\n%s\nwant the line %q", got, want)
		}
	}
	res := call(t, cs, "Things_Get", map[string]any{"name": "ghost"})
	if got := allText(res); !res.IsError || got != "The backend answered, but the gateway cannot show the answer: the backend sent a value of type "+ghostType+" that it does not describe." {
		t.Errorf("response holding the ghost: isError=%v %q", res.IsError, got)
	}
	// A stream stops at the message it cannot show, with those before.
	res = call(t, cs, "Things_Watch", map[string]any{"name": "ghost"})
	const wantStream = "The backend's stream sent message 2, but the gateway cannot show it: the backend sent a value of type " + ghostType + " that it does not describe; the gateway cancelled the stream.\n1 message(s) arrived before it"
	if got := allText(res); !res.IsError || !strings.HasPrefix(got, wantStream) || !strings.Contains(got, `"name":"box"`) {
		t.Errorf("stream holding the ghost: isError=%v %q", res.IsError, got)
	}
	if msgs, _ := structured(t, g, "Things_Watch", res)["messages"].([]any); len(msgs) != 1 {
		t.Errorf("stream holding the ghost: structuredContent %v, want the message before it", res.StructuredContent)
	}
	if n := b.refl.Count(ghostType); n != 1 {
		t.Errorf("%s asked for %d times, want 1", ghostType, n)
	}
}

// TestAnyTypesConcurrentFirstAppearance: calls whose errors carry the
// same unknown detail type at the same time make one lookup: while the
// backend holds it, every call has had its error; then all render the
// detail.
func TestAnyTypesConcurrentFirstAppearance(t *testing.T) {
	b, _, cs := startAnyGateway(t, nil)
	const name = "anyt.errors.v1.NotFoundFailure"
	held := make(chan string, 8)
	release := b.refl.Hold(name, held)

	const calls = 6
	results := make([]*sdk.CallToolResult, calls)
	errs := make([]error, calls)
	var wg sync.WaitGroup
	for i := range calls {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
			defer cancel()
			results[i], errs[i] = cs.CallTool(ctx, &sdk.CallToolParams{Name: "Things_Fail", Arguments: map[string]any{"kind": "notfound"}})
		})
	}
	<-held
	testkit.WaitFor(t, "every call's error from the backend", func() bool { return b.fails.Load() == calls })
	release()
	wg.Wait()
	for i := range calls {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if d := detailJSON(t, results[i]); d["runId"] != "run-1" {
			t.Errorf("call %d: %v", i, d)
		}
	}
	if n := b.refl.Count(name); n != 1 {
		t.Errorf("%s asked for %d times, want 1", name, n)
	}
}

// TestAnyTypesWithoutReflection: a backend described by descriptor files
// alone is never asked: an error detail of a type the files lack says so
// in words, and a response holding one fails as it always has.
func TestAnyTypesWithoutReflection(t *testing.T) {
	b := startAnyBackend(t)
	be := dialBackend(t, "things", b.addr)
	be.NoReflection = true
	be.Files = descriptors.NewProtoSource([]string{"testdata/anytypes", lrotest.ProtoDir()}, []string{"anyt/v1/things.proto"})
	_, base := newGateway(t, []gateway.Backend{be}, &gateway.Options{Calls: gateway.CallOptions{OperationWait: -1}})
	cs := connect(t, base+"/mcp", versions[len(versions)-1])

	res := call(t, cs, "Things_Fail", map[string]any{"kind": "notfound"})
	const want = "- the backend sent details of type anyt.errors.v1.NotFoundFailure, which the backend's descriptor files do not declare\n"
	if got := allText(res); !res.IsError || !strings.Contains(got, want) {
		t.Errorf("detail:\n%s\nwant the line %q", got, want)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testkit.WaitTimeout)
	defer cancel()
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "Things_Get", Arguments: map[string]any{"name": "box"}}); err == nil {
		t.Errorf("a response holding a type the files lack: %v, want the protocol error it always was", allText(res))
	}
	if asked := b.typeAsks(); len(asked) != 0 {
		t.Errorf("a backend without reflection was asked %v", asked)
	}
}
