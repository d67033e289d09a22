package longrunning

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/anytypes"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

// The google.longrunning wire contract, read and written directly: the
// field numbers below are the published ones (google/longrunning/
// operations.proto), and they are all the gateway needs of those messages.

// Operation is a decoded google.longrunning.Operation {name = 1;
// metadata = 2 (Any); done = 3; error = 4 (google.rpc.Status);
// response = 5 (Any)}.
type Operation struct {
	name     string
	metadata anyValue
	done     bool
	err      *status.Status
	response anyValue
	// hasResponse tells an empty response (a valid Empty) from none.
	hasResponse bool
	// custom carries a custom operation's polling requests
	// (custom.go); nil for AIP-151 operations.
	custom *customState
}

// anyValue is a google.protobuf.Any {type_url = 1; value = 2}.
type anyValue struct {
	typeURL string
	value   []byte
}

// typeName is the message name at the end of the type URL.
func (a anyValue) typeName() protoreflect.FullName { return anytypes.TypeNameOf(a.typeURL) }

var errBadOperation = errors.New("not a valid google.longrunning.Operation")

// decodeOperation decodes b; the result copies what it keeps.
func decodeOperation(b []byte) (*Operation, error) {
	op := &Operation{}
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil, errBadOperation
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, errBadOperation
			}
			op.name, b = string(v), b[n:]
		case num == 2 && typ == protowire.BytesType, num == 5 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, errBadOperation
			}
			a, err := decodeAny(v)
			if err != nil {
				return nil, err
			}
			if num == 2 {
				op.metadata = a
			} else {
				op.response, op.hasResponse = a, true
			}
			b = b[n:]
		case num == 3 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return nil, errBadOperation
			}
			op.done, b = v != 0, b[n:]
		case num == 4 && typ == protowire.BytesType:
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return nil, errBadOperation
			}
			st := &status.Status{}
			if err := proto.Unmarshal(v, st); err != nil {
				return nil, fmt.Errorf("%w: error: %w", errBadOperation, err)
			}
			op.err, b = st, b[n:]
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return nil, errBadOperation
			}
			b = b[n:]
		}
	}
	return op, nil
}

func decodeAny(b []byte) (anyValue, error) {
	var a anyValue
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return a, errBadOperation
		}
		b = b[n:]
		if typ == protowire.BytesType && (num == 1 || num == 2) {
			v, n := protowire.ConsumeBytes(b)
			if n < 0 {
				return a, errBadOperation
			}
			if num == 1 {
				a.typeURL = string(v)
			} else {
				a.value = append([]byte(nil), v...)
			}
			b = b[n:]
			continue
		}
		if n = protowire.ConsumeFieldValue(num, typ, b); n < 0 {
			return a, errBadOperation
		}
		b = b[n:]
	}
	return a, nil
}

// nameRequest encodes GetOperationRequest, CancelOperationRequest and
// DeleteOperationRequest, which all are {name = 1}.
func nameRequest(name string) []byte {
	return protowire.AppendString(protowire.AppendTag(nil, 1, protowire.BytesType), name)
}

// waitRequest encodes WaitOperationRequest {name = 1; timeout = 2
// (Duration {seconds = 1; nanos = 2})}.
func waitRequest(name string, timeout time.Duration) []byte {
	b := nameRequest(name)
	var d []byte
	if s := int64(timeout / time.Second); s != 0 {
		d = protowire.AppendVarint(protowire.AppendTag(d, 1, protowire.VarintType), uint64(s))
	}
	if ns := int32(timeout % time.Second); ns != 0 {
		d = protowire.AppendVarint(protowire.AppendTag(d, 2, protowire.VarintType), uint64(ns))
	}
	b = protowire.AppendTag(b, 2, protowire.BytesType)
	return protowire.AppendBytes(b, d)
}

// anyJSON renders an Any's message as the JSON its type's output schema
// describes: with the encoder compiled at discovery when the type is one
// of the long-running methods' types, else through the backend's
// descriptors and what lookups learnt of its types (anytypes), looking
// up, within ctx, those met for the first time. A type the gateway cannot
// resolve is an error, an *anytypes.UnknownTypeError when it was looked up.
func (c *Client) anyJSON(ctx context.Context, b []byte, a anyValue) ([]byte, error) {
	if e := c.encoders[a.typeName()]; e != nil {
		return c.types.AppendWrapped(ctx, b, e.enc, a.value, e.wrap)
	}
	js, err := c.anyProtojson(a)
	if err != nil && c.types.HasRemote() {
		learnt, missing := c.types.Learn(ctx, (&anypb.Any{TypeUrl: a.typeURL, Value: a.value}).ProtoReflect())
		if learnt {
			js, err = c.anyProtojson(a)
		}
		if err != nil && missing != nil {
			return nil, missing
		}
	}
	if err != nil {
		return nil, err
	}
	if len(js) == 0 || js[0] != '{' {
		b = append(b, `{"`+schema.WrapperProperty+`":`...)
		return append(append(b, js...), '}'), nil
	}
	return append(b, js...), nil
}

// anyProtojson renders an Any's message with protojson.
func (c *Client) anyProtojson(a anyValue) ([]byte, error) {
	m, err := anypb.UnmarshalNew(&anypb.Any{TypeUrl: a.typeURL, Value: a.value}, proto.UnmarshalOptions{Resolver: c.types, AllowPartial: true})
	if err != nil {
		return nil, fmt.Errorf("decoding %s: %w", a.typeName(), err)
	}
	return protojson.MarshalOptions{Resolver: c.types, AllowPartial: true}.Marshal(m)
}

// metadataTimes are the paths (field numbers, outermost first) of a
// metadata type's creation and last-update timestamps: AIP-151 recommends
// create_time and end_time or update_time, at the top or one message
// down (Vertex AI's generic_metadata); nil when absent.
type metadataTimes struct {
	created, updated []protowire.Number
}

// timestampsOf finds md's timestamp fields, at discovery.
func timestampsOf(md protoreflect.MessageDescriptor) metadataTimes {
	mt := timestampsAt(md, nil)
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Message() == nil || fd.IsList() || fd.IsMap() || fd.Message().FullName() == "google.protobuf.Timestamp" {
			continue
		}
		inner := timestampsAt(fd.Message(), []protowire.Number{fd.Number()})
		if mt.created == nil {
			mt.created = inner.created
		}
		if mt.updated == nil {
			mt.updated = inner.updated
		}
	}
	return mt
}

// timestampsAt finds the timestamp fields directly in md.
func timestampsAt(md protoreflect.MessageDescriptor, prefix []protowire.Number) metadataTimes {
	var mt metadataTimes
	path := func(n protowire.Number) []protowire.Number {
		return append(append([]protowire.Number(nil), prefix...), n)
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Message() == nil || fd.Message().FullName() != "google.protobuf.Timestamp" || fd.IsList() {
			continue
		}
		switch fd.Name() {
		case "create_time", "start_time":
			if mt.created == nil {
				mt.created = path(fd.Number())
			}
		case "update_time", "end_time":
			if mt.updated == nil || fd.Name() == "update_time" {
				mt.updated = path(fd.Number())
			}
		}
	}
	return mt
}

// timestampField reads the Timestamp {seconds = 1; nanos = 2} at path in
// the message b; ok is false when it is absent.
func timestampField(b []byte, path []protowire.Number) (time.Time, bool) {
	if len(path) == 0 {
		return time.Time{}, false
	}
	for _, num := range path {
		v, ok := lastField(b, num)
		if !ok {
			return time.Time{}, false
		}
		b = v
	}
	var secs, nanos int64
	for len(b) > 0 {
		fn, ft, k := protowire.ConsumeTag(b)
		if k < 0 || ft != protowire.VarintType {
			return time.Time{}, false
		}
		b = b[k:]
		x, k := protowire.ConsumeVarint(b)
		if k < 0 {
			return time.Time{}, false
		}
		b = b[k:]
		switch fn {
		case 1:
			secs = int64(x)
		case 2:
			nanos = int64(int32(x))
		}
	}
	return time.Unix(secs, nanos).UTC(), true
}

// lastField returns the bytes of the last occurrence of the message field
// num in b.
func lastField(b []byte, num protowire.Number) (v []byte, ok bool) {
	for len(b) > 0 {
		n, typ, k := protowire.ConsumeTag(b)
		if k < 0 {
			return nil, false
		}
		b = b[k:]
		if n == num && typ == protowire.BytesType {
			x, k := protowire.ConsumeBytes(b)
			if k < 0 {
				return nil, false
			}
			v, ok, b = x, true, b[k:]
			continue
		}
		if k = protowire.ConsumeFieldValue(n, typ, b); k < 0 {
			return nil, false
		}
		b = b[k:]
	}
	return v, ok
}
