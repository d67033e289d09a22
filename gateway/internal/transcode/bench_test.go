package transcode_test

import (
	"math/rand/v2"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/transcode"
)

// benchInputs are medium-sized responses: a random tt3.All (scalars, maps,
// nested messages, well-known types; no Any so the numbers reflect the
// common path) and descriptor.proto as a FileDescriptorProto (proto2, deep,
// with options messages that take the dynamicpb fallback).
func benchInputs(b *testing.B) []struct {
	name string
	md   protoreflect.MessageDescriptor
	wire []byte
} {
	s := schema()
	g := &filler{r: rand.New(rand.NewPCG(7, 7))}
	var all []byte
	for all == nil {
		m := dynamicpb.NewMessage(s.all)
		g.fill(m, 2)
		m.Clear(s.all.Fields().ByName("w_Any"))
		m.Clear(s.all.Fields().ByName("rw_Any"))
		m.Clear(s.all.Fields().ByName("mv_any"))
		wire, err := proto.Marshal(m)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := newDiffer(b, s.all, false).reference(wire); err == nil && len(wire) > 2000 && len(wire) < 8000 {
			all = wire
		}
	}
	fdp := protodesc.ToFileDescriptorProto((&descriptorpb.FileDescriptorProto{}).ProtoReflect().Descriptor().ParentFile())
	desc, err := proto.Marshal(fdp)
	if err != nil {
		b.Fatal(err)
	}
	return []struct {
		name string
		md   protoreflect.MessageDescriptor
		wire []byte
	}{
		{"all", s.all, all},
		{"descriptor", fdp.ProtoReflect().Descriptor(), desc},
	}
}

// BenchmarkAppendJSON compares AppendJSON with the pipeline it replaces.
func BenchmarkAppendJSON(b *testing.B) {
	for _, in := range benchInputs(b) {
		d := newDiffer(b, in.md, false)
		d.check(b, in.wire)
		b.Run(in.name+"/transcode", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in.wire)))
			var buf []byte
			for b.Loop() {
				var err error
				if buf, err = d.enc.AppendJSON(buf[:0], in.wire); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(in.name+"/dynamicpb+protojson", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(in.wire)))
			mt := dynamicpb.NewMessageType(in.md)
			opts := protojson.MarshalOptions{Resolver: resolver{schema().types}}
			var buf []byte
			for b.Loop() {
				m := mt.New().Interface()
				if err := proto.Unmarshal(in.wire, m); err != nil {
					b.Fatal(err)
				}
				var err error
				if buf, err = opts.MarshalAppend(buf[:0], m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFirstUse is what the first call of a method pays since Compile
// defers the plans to first use: compiling them and rendering one
// response.
func BenchmarkFirstUse(b *testing.B) {
	for _, in := range benchInputs(b) {
		b.Run(in.name, func(b *testing.B) {
			b.ReportAllocs()
			var buf []byte
			for b.Loop() {
				enc, err := transcode.Compile(in.md, &transcode.Options{Resolver: resolver{schema().types}})
				if err != nil {
					b.Fatal(err)
				}
				if buf, err = enc.AppendJSON(buf[:0], in.wire); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
