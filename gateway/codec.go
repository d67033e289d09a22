package gateway

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

// callCodec is passed to every Invoke.
var callCodec = grpc.ForceCodecV2(partialCodec{})

var (
	marshalPartial   = proto.MarshalOptions{AllowPartial: true, UseCachedSize: true}
	unmarshalPartial = proto.UnmarshalOptions{AllowPartial: true}
)

func (partialCodec) Marshal(v any) (mem.BufferSlice, error) {
	if w, ok := v.(wireMessage); ok {
		// A request the gateway encoded itself (operation_wire.go).
		return mem.BufferSlice{mem.SliceBuffer(w)}, nil
	}
	m, ok := v.(proto.Message)
	if !ok {
		return nil, fmt.Errorf("codec: marshal %T: not a proto.Message", v)
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

func (partialCodec) Unmarshal(data mem.BufferSlice, v any) error {
	if f, ok := v.(*rawFrame); ok {
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

// rawFrame receives a response message still in wire form, so the gateway
// can transcode it straight to JSON (gateway/transcode) instead of building
// a dynamic message first. The buffer is pooled: release returns it.
type rawFrame struct {
	buf mem.Buffer
}

func (f *rawFrame) bytes() []byte {
	if f.buf == nil {
		return nil
	}
	return f.buf.ReadOnlyData()
}

func (f *rawFrame) release() {
	if f.buf != nil {
		f.buf.Free()
		f.buf = nil
	}
}

// Name keeps the standard content-subtype, so backends see application/grpc.
func (partialCodec) Name() string { return "proto" }
