// Package callwire is the gateway's codec for its calls to backends:
// grpc's protobuf codec without the required-field check, taking
// requests already in wire form (Encoded) and giving responses still in
// wire form (Frame), so the call path transcodes them straight to JSON.
package callwire

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/proto"
)

// partialCodec is grpc's protobuf codec without the required-field check.
// For dynamicpb messages that check is a reflective walk of the whole
// message on every marshal and unmarshal, a tenth of the gateway's
// allocations; the gateway checks required fields itself when it converts
// the arguments, and a response with a missing proto2 required field is
// better relayed than failed.
type partialCodec struct{}

// Codec is passed to every call of a backend.
var Codec = grpc.ForceCodecV2(partialCodec{})

var (
	marshalPartial   = proto.MarshalOptions{AllowPartial: true, UseCachedSize: true}
	unmarshalPartial = proto.UnmarshalOptions{AllowPartial: true}
)

func (partialCodec) Marshal(v any) (mem.BufferSlice, error) {
	if w, ok := v.(Encoded); ok {
		// A request the gateway encoded itself.
		return mem.BufferSlice{mem.SliceBuffer(w)}, nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("codec: marshal %T: not a proto.Message", v)
	}
	if methods := m.ProtoReflect().ProtoMethods(); methods == nil || methods.Size == nil {
		return marshalReflective(m)
	}
	// UseCachedSize is safe because Size has just computed it and the
	// message is not shared.
	size := proto.MarshalOptions{AllowPartial: true}.Size(m)
	if mem.IsBelowBufferPoolingThreshold(size) {
		b, err := marshalPartial.MarshalAppend(make([]byte, 0, size), m)
		if err != nil {
			return nil, err
		}
		return mem.BufferSlice{mem.SliceBuffer(b)}, nil
	}
	pool := mem.DefaultBufferPool()
	buf := pool.Get(size)
	b, err := marshalPartial.MarshalAppend((*buf)[:0], m)
	if err != nil {
		pool.Put(buf)
		return nil, err
	}
	*buf = b
	return mem.BufferSlice{mem.NewBuffer(buf, pool)}, nil
}

// reflectiveBuffer is the capacity a request without generated code (a
// dynamicpb message: every request the gateway converts from JSON) is
// marshalled into first; most tool arguments make fewer bytes, and a
// larger request grows it by append.
const reflectiveBuffer = 128

// marshalReflective marshals a message that has no generated code. Sizing
// it first, as for generated messages, would walk the whole message by
// reflection once more (a message of this kind caches no size): two
// fifths of the codec's time per call in BenchmarkUnary. A pooled buffer
// was tried instead and cost more: grpc's pool clears its 4 KiB tier on
// every Get.
func marshalReflective(m proto.Message) (mem.BufferSlice, error) {
	b, err := marshalPartial.MarshalAppend(make([]byte, 0, reflectiveBuffer), m)
	if err != nil {
		return nil, err
	}
	return mem.BufferSlice{mem.SliceBuffer(b)}, nil
}

func (partialCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if f, ok := v.(*Frame); ok {
		f.buf = data.MaterializeToBuffer(mem.DefaultBufferPool())
		return nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return fmt.Errorf("codec: unmarshal into %T: not a proto.Message", v)
	}
	buf := data.MaterializeToBuffer(mem.DefaultBufferPool())
	defer buf.Free()
	return unmarshalPartial.Unmarshal(buf.ReadOnlyData(), m)
}

// Encoded is a request already in wire form.
type Encoded []byte

// Frame receives a response message still in wire form, so the gateway
// can transcode it straight to JSON (gateway/internal/transcode) instead of building
// a dynamic message first. The buffer is pooled: Release returns it.
type Frame struct {
	buf mem.Buffer
}

// Bytes is the message's wire form, valid until Release.
func (f *Frame) Bytes() []byte {
	if f.buf == nil {
		return nil
	}
	return f.buf.ReadOnlyData()
}

// Release returns the frame's buffer to the pool.
func (f *Frame) Release() {
	if f.buf != nil {
		f.buf.Free()
		f.buf = nil
	}
}

// Name keeps the standard content-subtype, so backends see application/grpc.
func (partialCodec) Name() string { return "proto" }
