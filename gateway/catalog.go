package gateway

import (
	"cmp"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/schema"
	"github.com/grpc-mcp-gateway/gateway/gateway/transcode"
	"github.com/grpc-mcp-gateway/gateway/reflection"
)

// healthService is hidden unless the operator asks for it: a model has no
// use for the backend's health checks, and they would crowd the tool list.
const healthService = "grpc.health.v1.Health"

// tool is one RPC compiled for calling: everything tools/call needs is
// resolved here, once, at discovery, so the per-call path does no
// descriptor work.
type tool struct {
	def    mcp.Tool
	method string // "/package.Service/Method", as grpc.Invoke wants it
	conn   grpc.ClientConnInterface

	input, output protoreflect.MessageType
	// wrapInput/wrapOutput: the message is not a JSON object in protojson
	// (Timestamp, Value, wrappers...), so it travels as {"value": ...}.
	wrapInput, wrapOutput bool

	// validator converts and checks the arguments; compiled here so the
	// call path does only the conversion and the checks a type needs.
	validator *schema.Validator
	marshal   protojson.MarshalOptions
	// response renders the response's wire bytes as protojson would,
	// without decoding them into a dynamic message.
	response *transcode.Encoder
	types    *dynamicpb.Types

	// kind says which call path serves the tool: unary, or one of the
	// stream shapes in stream.go.
	kind callKind
	// timeout overrides the gateway's deadline for this tool when positive;
	// per-method settings (config file, proto options) will set it.
	timeout time.Duration
}

// catalog is an immutable snapshot of the exposed tools.
type catalog struct {
	tools  []*tool
	byName map[string]*tool
	set    *mcp.ToolSet
}

// catalogOptions are the settings that shape tools.
type catalogOptions struct {
	exposeHealth  bool
	useProtoNames bool
	logger        *slog.Logger
}

// buildCatalog compiles every method of the discovered services into a
// tool: unary methods for call.go, streaming methods for stream.go.
func buildCatalog(res *reflection.Result, conn grpc.ClientConnInterface, opts catalogOptions) (*catalog, error) {
	types := dynamicpb.NewTypes(res.Files)
	var methods []protoreflect.MethodDescriptor
	for _, svc := range res.Services {
		if svc.FullName() == healthService && !opts.exposeHealth {
			continue
		}
		ms := svc.Methods()
		for i := range ms.Len() {
			methods = append(methods, ms.Get(i))
		}
	}
	slices.SortFunc(methods, func(a, b protoreflect.MethodDescriptor) int {
		return cmp.Compare(a.FullName(), b.FullName())
	})

	names := toolNames(methods)
	c := &catalog{byName: make(map[string]*tool, len(methods))}
	defs := make([]mcp.Tool, 0, len(methods))
	sopts := &schema.Options{UseProtoNames: opts.useProtoNames, Resolver: types}
	for i, m := range methods {
		t, err := compileTool(m, names[i], conn, types, sopts)
		if err != nil {
			return nil, err
		}
		c.tools = append(c.tools, t)
		c.byName[t.def.Name] = t
		defs = append(defs, t.def)
	}
	set, err := mcp.NewToolSet(defs, nil)
	if err != nil {
		return nil, fmt.Errorf("building tool list: %w", err)
	}
	c.set = set
	return c, nil
}

func compileTool(m protoreflect.MethodDescriptor, name string, conn grpc.ClientConnInterface, types *dynamicpb.Types, sopts *schema.Options) (*tool, error) {
	in, out := m.Input(), m.Output()
	inSchema, err := schema.Input(in, sopts)
	if err != nil {
		return nil, fmt.Errorf("input schema of %s: %w", m.FullName(), err)
	}
	outSchema, err := schema.Output(out, sopts)
	if err != nil {
		return nil, fmt.Errorf("output schema of %s: %w", m.FullName(), err)
	}
	validator, err := schema.NewValidator(in, sopts)
	if err != nil {
		return nil, fmt.Errorf("input validation rules of %s: %w", m.FullName(), err)
	}
	response, err := transcode.Compile(out, &transcode.Options{UseProtoNames: sopts.UseProtoNames, AllowPartial: true, Resolver: types})
	if err != nil {
		return nil, fmt.Errorf("response encoder of %s: %w", m.FullName(), err)
	}
	svc := m.Parent().(protoreflect.ServiceDescriptor)
	t := &tool{
		def: mcp.Tool{
			Name:         name,
			Description:  methodDescription(m),
			InputSchema:  inSchema,
			OutputSchema: outSchema,
			Annotations:  methodAnnotations(m),
		},
		method:     "/" + string(svc.FullName()) + "/" + string(m.Name()),
		conn:       conn,
		input:      dynamicpb.NewMessageType(in),
		output:     dynamicpb.NewMessageType(out),
		wrapInput:  !schema.IsObject(in),
		wrapOutput: !schema.IsObject(out),
		types:      types,
		validator:  validator,
		response:   response,
	}
	t.marshal = protojson.MarshalOptions{Resolver: types, UseProtoNames: sopts.UseProtoNames, AllowPartial: true}
	if err := t.compileStream(m, sopts); err != nil {
		return nil, err
	}
	return t, nil
}

// methodDescription is the method's own comment when the descriptors carry
// source info. Otherwise it is a sentence naming the RPC and its types, so
// a tool always says what it calls.
func methodDescription(m protoreflect.MethodDescriptor) string {
	if c := comment(m); c != "" {
		return c
	}
	svc := m.Parent().(protoreflect.ServiceDescriptor)
	desc := fmt.Sprintf("Calls the gRPC method %s/%s (request %s, response %s).",
		svc.FullName(), m.Name(), m.Input().FullName(), m.Output().FullName())
	if c := comment(svc); c != "" {
		desc += " Service: " + c
	}
	return desc
}

// comment returns the leading comment of d (or its trailing one), trimmed.
func comment(d protoreflect.Descriptor) string {
	loc := d.ParentFile().SourceLocations().ByDescriptor(d)
	c := strings.TrimSpace(loc.LeadingComments)
	if c == "" {
		c = strings.TrimSpace(loc.TrailingComments)
	}
	return c
}

// methodAnnotations maps protobuf's idempotency_level onto the MCP hints:
// NO_SIDE_EFFECTS is a read-only tool, IDEMPOTENT an idempotent one. Other
// hints stay at the protocol's defaults.
func methodAnnotations(m protoreflect.MethodDescriptor) *mcp.ToolAnnotations {
	opts, _ := m.Options().(*descriptorpb.MethodOptions)
	yes := true
	switch opts.GetIdempotencyLevel() {
	case descriptorpb.MethodOptions_NO_SIDE_EFFECTS:
		return &mcp.ToolAnnotations{ReadOnlyHint: &yes}
	case descriptorpb.MethodOptions_IDEMPOTENT:
		return &mcp.ToolAnnotations{IdempotentHint: &yes}
	}
	return nil
}
