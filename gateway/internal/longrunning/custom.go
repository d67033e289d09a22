package longrunning

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/anytypes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/callwire"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/transcode"
)

// Custom long-running operations (AIP-151 "custom" operations, the
// Compute Engine style): a method annotated with
// google.cloud.operation_service returns the API's own Operation message,
// whose fields annotated with google.cloud.operation_field say which is
// the name, the status (an enum whose DONE value means done), the error
// code (an HTTP status) and the error message. It is polled through the
// named service's polling method (google.cloud.operation_polling_method,
// else Get) and, when it has one, Wait, whose request fields are filled
// from the Operation (google.cloud.operation_response_field) and from the
// original request (google.cloud.operation_request_field). The tool waits
// and answers as an AIP-151 one does; its result, once done, is the
// finished Operation itself. Everything is read from the descriptors at
// discovery; such operations are not MCP tasks, since polling one needs
// the original request's fields, which a task id cannot carry.

// Extension numbers of google/cloud/extended_operations.proto.
const (
	operationFieldExt         = 1149 // FieldOptions: OperationResponseMapping
	operationRequestFieldExt  = 1150 // FieldOptions: string
	operationResponseFieldExt = 1151 // FieldOptions: string
	operationServiceExt       = 1249 // MethodOptions: string
	operationPollingMethodExt = 1250 // MethodOptions: bool
)

// google.cloud.OperationResponseMapping values.
const (
	mappingName         = 1
	mappingStatus       = 2
	mappingErrorCode    = 3
	mappingErrorMessage = 4
)

// customOps polls the operations of one custom long-running method.
type customOps struct {
	opType                                protoreflect.MessageDescriptor
	name, status, errorCode, errorMessage protoreflect.FieldDescriptor
	done                                  protoreflect.EnumNumber
	get, wait                             *pollMethod // wait is nil when the service has none
	useProtoNames                         bool
}

// pollMethod is a polling method and how its request is filled.
type pollMethod struct {
	path    string
	input   protoreflect.MessageDescriptor
	fromOp  []fieldCopy // request field <- Operation field
	fromReq []fieldCopy // request field <- original request field
}

type fieldCopy struct{ dst, src protoreflect.FieldDescriptor }

// customState is what polling a custom operation carries from call to
// call: the polling requests, built once from the original request and the
// first Operation.
type customState struct {
	get, wait proto.Message
}

// optionValue returns the raw value of extension field num in the options
// message opts, through the wire format, whatever Go type opts has.
func optionValue(opts proto.Message, num protowire.Number) (protowire.Type, []byte, uint64, bool) {
	if opts == nil || !opts.ProtoReflect().IsValid() {
		return 0, nil, 0, false
	}
	b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(opts)
	if err != nil {
		return 0, nil, 0, false
	}
	for len(b) > 0 {
		n, typ, k := protowire.ConsumeTag(b)
		if k < 0 {
			return 0, nil, 0, false
		}
		b = b[k:]
		if n == num {
			switch typ {
			case protowire.BytesType:
				v, k := protowire.ConsumeBytes(b)
				return typ, v, 0, k >= 0
			case protowire.VarintType:
				v, k := protowire.ConsumeVarint(b)
				return typ, nil, v, k >= 0
			}
		}
		if k = protowire.ConsumeFieldValue(n, typ, b); k < 0 {
			return 0, nil, 0, false
		}
		b = b[k:]
	}
	return 0, nil, 0, false
}

func optionString(opts proto.Message, num protowire.Number) string {
	if typ, v, _, ok := optionValue(opts, num); ok && typ == protowire.BytesType {
		return string(v)
	}
	return ""
}

func optionVarint(opts proto.Message, num protowire.Number) (uint64, bool) {
	if typ, _, v, ok := optionValue(opts, num); ok && typ == protowire.VarintType {
		return v, true
	}
	return 0, false
}

// CompileCustom returns the long-running description of m when m
// carries google.cloud.operation_service and the descriptors say how to
// poll it; otherwise (with a warning when the option is there) nil, and
// the tool stays ordinary. response is the tool's own response encoder,
// which renders the finished Operation.
func CompileCustom(m protoreflect.MethodDescriptor, conn grpc.ClientConnInterface, files *protoregistry.Files, types *anytypes.Types, useProtoNames bool, response *transcode.Encoder, logger *slog.Logger) (*Method, error) {
	svcName := optionString(m.Options(), operationServiceExt)
	if svcName == "" || m.IsStreamingClient() || m.IsStreamingServer() {
		return nil, nil
	}
	warn := func(why string) error {
		logger.Warn("google.cloud.operation_service: "+why+"; the method is an ordinary tool", "method", m.FullName(), "operation_service", svcName)
		return nil
	}
	c := &customOps{opType: m.Output(), useProtoNames: useProtoNames}
	fields := c.opType.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		role, ok := optionVarint(fd.Options(), operationFieldExt)
		if !ok {
			continue
		}
		switch role {
		case mappingName:
			c.name = fd
		case mappingStatus:
			c.status = fd
		case mappingErrorCode:
			c.errorCode = fd
		case mappingErrorMessage:
			c.errorMessage = fd
		}
	}
	if c.name == nil || c.status == nil || c.status.Enum() == nil {
		return nil, warn("the Operation has no name or enum status field annotated with google.cloud.operation_field")
	}
	done := c.status.Enum().Values().ByName("DONE")
	if done == nil {
		return nil, warn("the Operation's status enum has no DONE value")
	}
	c.done = done.Number()
	qualified := protoreflect.FullName(svcName)
	if !strings.Contains(svcName, ".") {
		// AIP-151: the service is in the method's package.
		qualified = m.ParentFile().Package().Append(protoreflect.Name(svcName))
	}
	d, err := files.FindDescriptorByName(qualified)
	svc, ok := d.(protoreflect.ServiceDescriptor)
	if err != nil || !ok {
		return nil, warn("the descriptors hold no such service")
	}
	// Where each polling request field may come from the original request.
	fromReq := make(map[protoreflect.Name]protoreflect.FieldDescriptor)
	in := m.Input().Fields()
	for i := range in.Len() {
		if dst := optionString(in.Get(i).Options(), operationRequestFieldExt); dst != "" {
			fromReq[protoreflect.Name(dst)] = in.Get(i)
		}
	}
	methods := svc.Methods()
	var get, wait protoreflect.MethodDescriptor
	for i := range methods.Len() {
		if v, ok := optionVarint(methods.Get(i).Options(), operationPollingMethodExt); ok && v != 0 {
			get = methods.Get(i)
		}
	}
	if get == nil {
		get = methods.ByName("Get")
	}
	if w := methods.ByName("Wait"); w != nil && w != get {
		wait = w
	}
	if get == nil {
		return nil, warn("the service has no polling method")
	}
	if c.get = c.pollMethod(get, fromReq); c.get == nil {
		return nil, warn(fmt.Sprintf("%s cannot be filled from the operation and the request", get.FullName()))
	}
	if wait != nil {
		c.wait = c.pollMethod(wait, fromReq)
	}
	lr := &Method{responseType: c.opType.FullName(), ResponseDesc: c.opType, response: response, wrapResponse: false,
		PollMethod: "/" + string(svc.FullName()) + "/" + string(get.Name())}
	if c.wait != nil {
		lr.WaitMethod = "/" + string(svc.FullName()) + "/" + string(wait.Name())
	}
	lr.Ops = &Client{conn: conn, HasGet: true, HasWait: c.wait != nil, types: types, custom: c,
		encoders: map[protoreflect.FullName]*anyEncoder{c.opType.FullName(): {enc: response}}}
	return lr, nil
}

// pollMethod describes how to fill m's request, or returns nil when a
// field it needs has no source.
func (c *customOps) pollMethod(m protoreflect.MethodDescriptor, fromReq map[protoreflect.Name]protoreflect.FieldDescriptor) *pollMethod {
	p := &pollMethod{path: "/" + string(m.Parent().FullName()) + "/" + string(m.Name()), input: m.Input()}
	fields := m.Input().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if src := optionString(fd.Options(), operationResponseFieldExt); src != "" {
			sf := c.opType.Fields().ByName(protoreflect.Name(src))
			if sf == nil || sf.Kind() != fd.Kind() {
				return nil
			}
			p.fromOp = append(p.fromOp, fieldCopy{dst: fd, src: sf})
			continue
		}
		if sf := fromReq[fd.Name()]; sf != nil && sf.Kind() == fd.Kind() && sf.Cardinality() == fd.Cardinality() {
			p.fromReq = append(p.fromReq, fieldCopy{dst: fd, src: sf})
		}
	}
	if len(p.fromOp) == 0 {
		return nil // nothing would name the operation
	}
	return p
}

// start decodes the Operation the method returned and builds the polling
// requests from it and the original request.
func (c *customOps) start(in proto.Message, wire []byte) (*Operation, error) {
	opm, err := c.decodeMessage(wire)
	if err != nil {
		return nil, err
	}
	st := &customState{get: c.get.request(in, opm)}
	if c.wait != nil {
		st.wait = c.wait.request(in, opm)
	}
	return c.operation(opm, wire, st), nil
}

func (c *customOps) decodeMessage(wire []byte) (*dynamicpb.Message, error) {
	opm := dynamicpb.NewMessage(c.opType)
	if err := (proto.UnmarshalOptions{AllowPartial: true, DiscardUnknown: true}).Unmarshal(wire, opm); err != nil {
		return nil, fmt.Errorf("decoding %s: %w", c.opType.FullName(), err)
	}
	return opm, nil
}

// request builds the polling request.
func (p *pollMethod) request(in proto.Message, opm *dynamicpb.Message) proto.Message {
	req := dynamicpb.NewMessage(p.input)
	for _, f := range p.fromOp {
		req.Set(f.dst, opm.Get(f.src))
	}
	if in != nil {
		r := in.ProtoReflect()
		for _, f := range p.fromReq {
			if r.Has(f.src) {
				req.Set(f.dst, r.Get(f.src))
			}
		}
	}
	return req
}

// operation is the custom Operation opm (wire form wire) as the waiting
// code sees any operation: its name, whether it is done, its error, and
// itself as the metadata and, once done, the response.
func (c *customOps) operation(opm *dynamicpb.Message, wire []byte, st *customState) *Operation {
	self := anyValue{typeURL: "type.googleapis.com/" + string(c.opType.FullName()), value: append([]byte(nil), wire...)}
	op := &Operation{name: opm.Get(c.name).String(), metadata: self, custom: st}
	op.done = opm.Get(c.status).Enum() == c.done
	if !op.done {
		return op
	}
	code := int64(0)
	if c.errorCode != nil && opm.Has(c.errorCode) {
		code = opm.Get(c.errorCode).Int()
	}
	if code >= 400 || code < 0 {
		msg := ""
		if c.errorMessage != nil {
			msg = opm.Get(c.errorMessage).String()
		}
		if msg == "" {
			msg = http.StatusText(int(code))
		}
		op.err = &status.Status{Code: int32(codeFromHTTP(int(code))), Message: fmt.Sprintf("%s (HTTP %d)", msg, code)}
		return op
	}
	op.response, op.hasResponse = self, true
	return op
}

// poll calls the polling method m for op.
func (c *customOps) poll(ctx context.Context, conn grpc.ClientConnInterface, m *pollMethod, op *Operation) (*Operation, error) {
	req := op.custom.get
	if m == c.wait && op.custom.wait != nil {
		req = op.custom.wait
	}
	var out callwire.Frame
	defer out.Release()
	if err := conn.Invoke(ctx, m.path, req, &out, callwire.Codec); err != nil {
		return nil, err
	}
	opm, err := c.decodeMessage(out.Bytes())
	if err != nil {
		return nil, err
	}
	return c.operation(opm, out.Bytes(), op.custom), nil
}

// pollArguments are the arguments of the polling tool for op, as JSON.
func (c *customOps) pollArguments(op *Operation) string {
	if op.custom == nil {
		return ""
	}
	js, err := protojson.MarshalOptions{UseProtoNames: c.useProtoNames}.Marshal(op.custom.get)
	if err != nil {
		return ""
	}
	return string(js)
}

// codeFromHTTP maps the HTTP status of a custom operation's error to the
// gRPC code that reads the same, as google.rpc.Code documents each.
func codeFromHTTP(s int) codes.Code {
	switch s {
	case http.StatusBadRequest:
		return codes.InvalidArgument
	case http.StatusUnauthorized:
		return codes.Unauthenticated
	case http.StatusForbidden:
		return codes.PermissionDenied
	case http.StatusNotFound:
		return codes.NotFound
	case http.StatusConflict:
		return codes.Aborted
	case http.StatusPreconditionFailed:
		return codes.FailedPrecondition
	case http.StatusRequestedRangeNotSatisfiable:
		return codes.OutOfRange
	case http.StatusTooManyRequests:
		return codes.ResourceExhausted
	case 499:
		return codes.Canceled
	case http.StatusNotImplemented:
		return codes.Unimplemented
	case http.StatusServiceUnavailable:
		return codes.Unavailable
	case http.StatusGatewayTimeout:
		return codes.DeadlineExceeded
	case http.StatusInternalServerError:
		return codes.Internal
	}
	return codes.Unknown
}
