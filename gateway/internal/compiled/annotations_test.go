package compiled

import (
	"testing"

	_ "google.golang.org/genproto/googleapis/api/annotations" // registers google.api.http for prototext
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/describe"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
)

// hintsService is a service whose methods declare their effects in every
// way a descriptor can: google.api.http verbs, idempotency_level, neither.
func hintsService(t *testing.T) protoreflect.ServiceDescriptor {
	t.Helper()
	fdp := &descriptorpb.FileDescriptorProto{}
	if err := prototext.Unmarshal([]byte(`
		name: "hints.proto" package: "hints.v1" syntax: "proto3"
		dependency: "google/api/annotations.proto"
		message_type { name: "M" }
		service { name: "S"
			method { name: "Get" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { [google.api.http] { get: "/v1/{name=things/*}" } } }
			method { name: "Delete" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { [google.api.http] { delete: "/v1/{name=things/*}" } } }
			method { name: "Put" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { [google.api.http] { put: "/v1/{name=things/*}" body: "*" } } }
			method { name: "Post" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { [google.api.http] { post: "/v1/things" body: "*" } } }
			method { name: "Patch" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { [google.api.http] { patch: "/v1/{name=things/*}" body: "*" } } }
			method { name: "Frobnicate" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { [google.api.http] { custom { kind: "HEAD" path: "/v1/things" } } } }
			method { name: "ListWithPostBinding" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { [google.api.http] { get: "/v1/things" additional_bindings { post: "/v1/things:list" } } } }
			method { name: "NoRule" input_type: ".hints.v1.M" output_type: ".hints.v1.M" }
			method { name: "ListWithoutRule" input_type: ".hints.v1.M" output_type: ".hints.v1.M" }
			method { name: "GetButIdempotent" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { idempotency_level: IDEMPOTENT [google.api.http] { get: "/v1/things" } } }
			method { name: "RunNoSideEffects" input_type: ".hints.v1.M" output_type: ".hints.v1.M"
				options { idempotency_level: NO_SIDE_EFFECTS [google.api.http] { post: "/v1/things:search" body: "*" } } }
		}`), fdp); err != nil {
		t.Fatal(err)
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	if err != nil {
		t.Fatal(err)
	}
	return fd.Services().Get(0)
}

// TestMethodAnnotations: every tool carries all four hints and a title;
// what the method declares (describe's precedence, tested row by row in
// gateway/internal/describe) gives them, and the (mcpgateway.v1.tool) option wins
// hint by hint.
func TestMethodAnnotations(t *testing.T) {
	yes, no := boolPtr(true), boolPtr(false)
	svc := hintsService(t)
	hints := func(title string, ro, de, id, ow *bool) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{Title: title, ReadOnlyHint: ro, DestructiveHint: de, IdempotentHint: id, OpenWorldHint: ow}
	}
	for _, tc := range []struct {
		method string
		tool   *mcpgatewayv1.Tool
		want   *mcp.ToolAnnotations
	}{
		{"Get", nil, hints("Get thing (Hints v1)", yes, no, yes, yes)},
		{"Delete", nil, hints("Delete thing (Hints v1)", no, yes, yes, yes)},
		{"Put", nil, hints("Put thing (Hints v1)", no, yes, yes, yes)},                                 // PUT: idempotent; a put overwrites
		{"Post", nil, hints("Post thing (Hints v1)", no, no, no, yes)},                                 // POST says nothing; post adds
		{"Patch", nil, hints("Patch thing (Hints v1)", no, yes, yes, yes)},                             // PATCH: not read-only; a patch sets fields, as often as asked
		{"Frobnicate", nil, hints("Frobnicate (Hints v1)", no, yes, no, yes)},                          // nothing known: the conservative default
		{"NoRule", nil, hints("No rule (Hints v1)", no, yes, no, yes)},                                 // likewise
		{"ListWithPostBinding", nil, hints("List with post binding (Hints v1)", yes, no, yes, yes)},    // the primary binding
		{"GetButIdempotent", nil, hints("Get but idempotent of thing (Hints v1)", no, no, yes, yes)},   // IDEMPOTENT is not read-only
		{"RunNoSideEffects", nil, hints("Run no side effects on thing (Hints v1)", yes, no, yes, yes)}, // NO_SIDE_EFFECTS over the verb
		{"Delete", &mcpgatewayv1.Tool{DestructiveHint: proto.Bool(false)}, hints("Delete thing (Hints v1)", no, no, yes, yes)},
		{"Get", &mcpgatewayv1.Tool{ReadOnlyHint: proto.Bool(false), Title: "T"}, hints("T", no, no, yes, yes)},
		{"Post", &mcpgatewayv1.Tool{IdempotentHint: proto.Bool(true), OpenWorldHint: proto.Bool(false)}, hints("Post thing (Hints v1)", no, no, yes, no)},
		// The option's hints are made consistent: read-only is not
		// destructive and is idempotent; destructive is not read-only.
		{"NoRule", &mcpgatewayv1.Tool{ReadOnlyHint: proto.Bool(true)}, hints("No rule (Hints v1)", yes, no, yes, yes)},
		{"Get", &mcpgatewayv1.Tool{DestructiveHint: proto.Bool(true)}, hints("Get thing (Hints v1)", no, yes, yes, yes)},
		{"Get", &mcpgatewayv1.Tool{DestructiveHint: proto.Bool(true), ReadOnlyHint: proto.Bool(true)}, hints("Get thing (Hints v1)", yes, yes, yes, yes)},
	} {
		m := svc.Methods().ByName(protoreflect.Name(tc.method))
		got := methodAnnotations(describe.Analyze(m, nil), tc.tool)
		if !sameAnnotations(got, tc.want) {
			t.Errorf("%s with %v: got %s, want %s", tc.method, tc.tool, show(got), show(tc.want))
		}
	}
}

func sameAnnotations(a, b *mcp.ToolAnnotations) bool {
	if a == nil || b == nil {
		return a == b
	}
	eq := func(x, y *bool) bool { return (x == nil) == (y == nil) && (x == nil || *x == *y) }
	return a.Title == b.Title && eq(a.ReadOnlyHint, b.ReadOnlyHint) && eq(a.DestructiveHint, b.DestructiveHint) &&
		eq(a.IdempotentHint, b.IdempotentHint) && eq(a.OpenWorldHint, b.OpenWorldHint)
}

func show(a *mcp.ToolAnnotations) string {
	if a == nil {
		return "none"
	}
	s := "{title:" + a.Title
	for _, h := range []struct {
		n string
		v *bool
	}{{"readOnly", a.ReadOnlyHint}, {"destructive", a.DestructiveHint}, {"idempotent", a.IdempotentHint}, {"openWorld", a.OpenWorldHint}} {
		if h.v != nil {
			s += " " + h.n + ":" + map[bool]string{true: "true", false: "false"}[*h.v]
		}
	}
	return s + "}"
}

// TestSafeToRepeat: the gateway repeats a call only when the method's
// owners declared it idempotent (the option, idempotency_level, the HTTP
// verb), never on a guess from the name's verb, even where the model is
// told the tool is idempotent.
func TestSafeToRepeat(t *testing.T) {
	svc := hintsService(t)
	analyze := func(method string) *describe.Method {
		return describe.Analyze(svc.Methods().ByName(protoreflect.Name(method)), nil)
	}
	for _, m := range []string{"Get", "Put", "Delete", "GetButIdempotent", "RunNoSideEffects"} {
		if !safeToRepeat(analyze(m), nil) {
			t.Errorf("%s: not safe to repeat", m)
		}
	}
	for _, m := range []string{"Post", "Patch", "Frobnicate", "NoRule"} {
		if safeToRepeat(analyze(m), nil) {
			t.Errorf("%s: safe to repeat", m)
		}
	}
	// A read guessed from a name alone is told idempotent but not
	// repeated.
	a := analyze("ListWithoutRule")
	if ann := methodAnnotations(a, nil); !*ann.IdempotentHint || safeToRepeat(a, nil) {
		t.Errorf("ListWithoutRule: idempotentHint %v, repeated %v; want told idempotent, not repeated", *ann.IdempotentHint, safeToRepeat(a, nil))
	}
	// The option wins.
	if !safeToRepeat(a, &mcpgatewayv1.Tool{IdempotentHint: proto.Bool(true)}) || !safeToRepeat(a, &mcpgatewayv1.Tool{ReadOnlyHint: proto.Bool(true)}) {
		t.Error("the option's idempotent_hint or read_only_hint does not make the call repeatable")
	}
	if safeToRepeat(analyze("Get"), &mcpgatewayv1.Tool{IdempotentHint: proto.Bool(false)}) {
		t.Error("the option's idempotent_hint false is not heeded")
	}
}
