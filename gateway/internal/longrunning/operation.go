// Package longrunning is the gateway's side of long-running operations
// (AIP-151): which methods are long-running tools, the google.longrunning
// wire contract, waiting for an operation by polling it, custom (Compute
// Engine style) operations, and the results and task states an operation
// becomes.
//
// A method that returns google.longrunning.Operation and carries the
// google.longrunning.operation_info option is a long-running tool
// (Compile): its output schema is the final response type (plus an
// optional handle, WithHandle), and tools/call starts the operation and
// waits for it (the gateway's callLongRunning, with Method.Start,
// Method.Await and Method.Result). Whether a method is one is decided by
// the option, never by the output type: Operations.GetOperation returns
// an Operation too and stays an ordinary tool. Compiling runs once, at
// discovery; a *Method is immutable once the catalog holding it is built.
//
// The google.longrunning descriptors come from the backend itself (a
// method that returns an Operation must describe it), so the gateway
// bundles no copy and adds no dependency: the Operation envelope and the
// Operations requests are a published wire contract, read and written
// with protowire (wire.go), and the response and metadata types are
// compiled from the backend's descriptors like any response.
//
// The package sits below the gateway: the tool, the catalog and the MCP
// task store (signed ids, authorization) are the gateway's, which holds
// a *Method on each long-running tool and a *Client per backend.
package longrunning

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/anytypes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/transcode"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

const (
	operationType = "google.longrunning.Operation"
	// OperationsService is the service every API with long-running
	// methods serves (AIP-151).
	OperationsService = "google.longrunning.Operations"
	// operationInfoField is the field number of the
	// google.longrunning.operation_info extension of MethodOptions.
	operationInfoField = 1049
)

// Method is what a long-running tool needs beyond an ordinary one.
// It is immutable once the catalog holding it is built.
type Method struct {
	// responseType is operation_info.response_type, resolved, and
	// ResponseDesc its descriptor, whose schema is the tool's output
	// schema (with the handle).
	responseType protoreflect.FullName
	ResponseDesc protoreflect.MessageDescriptor
	// response renders the finished operation's response (the Any's
	// value); wrapResponse wraps a non-object one as {"value": ...}.
	response     *transcode.Encoder
	wrapResponse bool
	// HandleKey is the structuredContent member of the unfinished
	// operation's handle: "operation", unless the response has a field of
	// that name.
	HandleKey string
	// Ops is the backend's Operations service, nil when it serves none
	// (then the gateway cannot wait and returns the operation as it is).
	Ops *Client
	// Wait is how long a call waits (Options.Calls.OperationWait or the method's
	// setting); negative means not at all.
	Wait time.Duration
	// Cancel calls CancelOperation when the client cancels the call.
	Cancel bool
	// ExposeDebugInfo is Options.Calls.ExposeDebugInfo: whether a failed
	// operation's google.rpc.DebugInfo reaches the client.
	ExposeDebugInfo bool
	// PollMethod and WaitMethod are the full method paths that poll the
	// operation (WaitMethod "" when there is none); GetTool and WaitTool
	// are their tools' names, set when the catalog is assembled ("" when
	// not exposed).
	PollMethod, WaitMethod string
	GetTool, WaitTool      string
	// Taskable is whether the tool's operations can be tasks: the
	// backend serves GetOperation, the filters let the gateway call it
	// (the gateway's tasks.go), and the operation is AIP-151's, not a
	// custom one. Set when the catalog is assembled.
	Taskable bool
}

// Client calls one backend's google.longrunning.Operations
// service, which AIP-151 has every API with long-running methods serve.
// The Has* fields say which methods the backend declares.
type Client struct {
	conn                                grpc.ClientConnInterface
	HasGet, HasWait, HasCancel, HasList bool
	// types resolves the Any payloads (metadata, responses) by their type
	// URL; encoders caches a compiled encoder per type, built at discovery
	// for every long-running method's response and metadata types.
	types    *anytypes.Types
	encoders map[protoreflect.FullName]*anyEncoder
	// timeFields are the create/update timestamps of each metadata type,
	// for task timestamps (the gateway's tasks.go).
	timeFields map[protoreflect.FullName]metadataTimes
	// compileMu guards encoders and timeFields while discovery's
	// goroutines fill them; calls, which come after, only read them.
	compileMu sync.Mutex
	// custom, when set, makes this the poller of one custom (Compute
	// Engine style) long-running method instead (custom.go).
	custom *customOps
	// ExposeDebugInfo is Options.Calls.ExposeDebugInfo, for task results.
	ExposeDebugInfo bool
}

// anyEncoder renders one message type found in an Any.
type anyEncoder struct {
	enc  *transcode.Encoder
	wrap bool
}

// NewClient describes the backend's Operations service, or
// returns nil when the backend serves none.
func NewClient(res *descriptors.Result, conn grpc.ClientConnInterface, types *anytypes.Types) *Client {
	for _, svc := range res.Services {
		if svc.FullName() != OperationsService {
			continue
		}
		ms := svc.Methods()
		c := &Client{conn: conn, types: types,
			encoders:   make(map[protoreflect.FullName]*anyEncoder),
			timeFields: make(map[protoreflect.FullName]metadataTimes)}
		c.HasGet = ms.ByName("GetOperation") != nil
		c.HasWait = ms.ByName("WaitOperation") != nil
		c.HasCancel = ms.ByName("CancelOperation") != nil
		c.HasList = ms.ByName("ListOperations") != nil
		return c
	}
	return nil
}

// operationInfo reads the google.longrunning.operation_info option of m
// through the wire format, which works whatever Go type the options came
// in (generated, dynamic, or unknown fields). ok is false when m does not
// set it.
func operationInfo(m protoreflect.MethodDescriptor) (responseType, metadataType string, ok bool) {
	opts := m.Options()
	if opts == nil || !opts.ProtoReflect().IsValid() {
		return "", "", false
	}
	b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(opts)
	if err != nil {
		return "", "", false
	}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return "", "", false
		}
		b = b[n:]
		if num == operationInfoField && typ == protowire.BytesType {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return "", "", false
			}
			responseType, metadataType = parseOperationInfo(v)
			ok = true
			b = b[n:]
			continue
		}
		n = protowire.ConsumeFieldValue(num, typ, b)
		if n < 0 {
			return "", "", false
		}
		b = b[n:]
	}
	return responseType, metadataType, ok
}

// parseOperationInfo decodes google.longrunning.OperationInfo
// {response_type = 1; metadata_type = 2}.
func parseOperationInfo(b []byte) (responseType, metadataType string) {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return
		}
		b = b[n:]
		if typ == protowire.BytesType && (num == 1 || num == 2) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return
			}
			if num == 1 {
				responseType = string(v)
			} else {
				metadataType = string(v)
			}
			b = b[n:]
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return
		}
		b = b[n:]
	}
	return
}

// resolveTypeName finds the message a type name in operation_info means:
// AIP-151 lets a type in the method's own package go unqualified.
func resolveTypeName(name string, m protoreflect.MethodDescriptor, types *dynamicpb.Types) protoreflect.MessageDescriptor {
	name = strings.TrimPrefix(strings.TrimSpace(name), ".")
	if name == "" {
		return nil
	}
	var candidates []string
	if pkg := m.ParentFile().Package(); pkg != "" {
		candidates = append(candidates, string(pkg)+"."+name)
	}
	candidates = append(candidates, name)
	for _, c := range candidates {
		if mt, err := types.FindMessageByName(protoreflect.FullName(c)); err == nil {
			return mt.Descriptor()
		}
	}
	return nil
}

// Encoders compiles (or finds already compiled) the encoder of a
// message type, as the gateway's compile cache does for responses.
type Encoders func(protoreflect.MessageDescriptor) (*transcode.Encoder, error)

// Compile returns the long-running description of m when m carries
// operation_info and returns an Operation, nil otherwise; the tool's
// output schema is then the final response's (plus the handle:
// WithHandle). A method whose option names a type the descriptors lack
// stays an ordinary tool (nil), with a warning. types are the backend's
// descriptors, ops its Operations service (nil when it serves none).
func Compile(m protoreflect.MethodDescriptor, ops *Client, types *dynamicpb.Types, encoder Encoders, logger *slog.Logger) (*Method, error) {
	respName, metaName, ok := operationInfo(m)
	if !ok || m.Output().FullName() != operationType || m.IsStreamingClient() || m.IsStreamingServer() {
		return nil, nil
	}
	resp := resolveTypeName(respName, m, types)
	if resp == nil {
		logger.Warn("google.longrunning.operation_info names a response type the descriptors do not hold; the method is an ordinary tool returning the Operation", "method", m.FullName(), "response_type", respName)
		return nil, nil
	}
	enc, err := encoder(resp)
	if err != nil {
		return nil, fmt.Errorf("response encoder of %s (operation_info.response_type): %w", m.FullName(), err)
	}
	lr := &Method{responseType: resp.FullName(), ResponseDesc: resp, response: enc, wrapResponse: !schema.IsObject(resp), Ops: ops,
		PollMethod: GetOperationMethod}
	if ops != nil && ops.HasWait {
		lr.WaitMethod = WaitOperationMethod
	}
	if ops != nil {
		var metaEnc *anyEncoder
		meta := resolveTypeName(metaName, m, types)
		if meta != nil {
			if menc, err := encoder(meta); err == nil {
				metaEnc = &anyEncoder{enc: menc, wrap: !schema.IsObject(meta)}
			}
		}
		// compileBackend compiles tools concurrently; calls only read
		// these maps, once discovery is over.
		ops.compileMu.Lock()
		ops.encoders[resp.FullName()] = &anyEncoder{enc: enc, wrap: lr.wrapResponse}
		if metaEnc != nil {
			ops.encoders[meta.FullName()] = metaEnc
			ops.timeFields[meta.FullName()] = timestampsOf(meta)
		}
		ops.compileMu.Unlock()
	}
	return lr, nil
}

// WithHandle adds the unfinished operation's handle to a response's output
// schema, as an optional member, so that both results a call may give
// (the response, or the handle) match it. The response's own required
// members are dropped, since the handle result has none of them.
func WithHandle(out json.RawMessage) (json.RawMessage, string, error) {
	var root map[string]json.RawMessage
	if err := json.Unmarshal(out, &root); err != nil {
		return nil, "", err
	}
	props := map[string]json.RawMessage{}
	if raw, ok := root["properties"]; ok {
		if err := json.Unmarshal(raw, &props); err != nil {
			return nil, "", err
		}
	}
	key := "operation"
	for props[key] != nil {
		key = "_" + key
	}
	props[key] = json.RawMessage(handleSchema)
	var err error
	if root["properties"], err = json.Marshal(props); err != nil {
		return nil, "", err
	}
	delete(root, "required")
	b, err := json.Marshal(root)
	return b, key, err
}

// handleSchema describes the unfinished operation's handle.
const handleSchema = `{"type":"object","description":"Present only when the operation had not finished when the call stopped waiting; the other members are then absent. Poll the operation by its name.","properties":{"name":{"type":"string","description":"The operation's name, to poll or cancel it."},"done":{"type":"boolean","const":false},"metadata":{"description":"The operation's latest progress metadata, when the backend reports any."}},"required":["name","done"],"additionalProperties":false}`

// Describe is the sentence a long-running tool's description
// ends with; it names the wait and the tool that polls.
func (lr *Method) Describe() string {
	s := " This is a long-running operation, and the call may take long"
	switch {
	case lr.Ops == nil || !lr.Ops.HasGet:
		return s + ": its result may be an unfinished operation, which this gateway cannot poll."
	case lr.Wait < 0:
		s += ": it returns at once"
	default:
		s += fmt.Sprintf(": it waits up to %s for the result", lr.Wait)
	}
	s += fmt.Sprintf(`; if the operation is still running then, the result is {"%s": {"name": ..., "done": false}}`, lr.HandleKey)
	if lr.GetTool != "" {
		s += ", and " + lr.GetTool + " checks on it later (the result gives the arguments)"
	}
	return s + "."
}

// ResponseType is the final response type m's operation_info names,
// resolved in types; nil when m carries no operation_info or its type is
// not in the descriptors. Whether m is a long-running tool is Compile's
// decision; this is what the describer reads of the option.
func ResponseType(m protoreflect.MethodDescriptor, types *dynamicpb.Types) protoreflect.MessageDescriptor {
	resp, _, ok := operationInfo(m)
	if !ok {
		return nil
	}
	return resolveTypeName(resp, m, types)
}
