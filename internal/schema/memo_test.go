package schema

import (
	"bytes"
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// TestMemoSameSchemas: schemas built with one Memo shared by every build,
// in turn, are those built without one, byte for byte: whole, bounded and
// streamed, input and output.
func TestMemoSameSchemas(t *testing.T) {
	var mds []protoreflect.MessageDescriptor
	testFiles.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		mds = appendMessages(mds, f.Messages())
		return true
	})
	type builder func(protoreflect.MessageDescriptor, *Options) (json.RawMessage, error)
	bounded := func(within func(protoreflect.MessageDescriptor, *Options, Bound) (json.RawMessage, error), max int) builder {
		return func(md protoreflect.MessageDescriptor, opts *Options) (json.RawMessage, error) {
			return within(md, opts, Bound{MaxBytes: max})
		}
	}
	builds := map[string]builder{
		"Input": Input, "Output": Output, "StreamInput": StreamInput, "StreamOutput": StreamOutput,
		"InputWithin": bounded(InputWithin, 600), "OutputWithin": bounded(OutputWithin, 600),
		"StreamInputWithin": bounded(StreamInputWithin, 900),
	}
	for _, protoNames := range []bool{false, true} {
		memo := &Options{UseProtoNames: protoNames, Resolver: testTypes, Memo: &Memo{}}
		for _, md := range mds {
			for name, build := range builds {
				want, wantErr := build(md, &Options{UseProtoNames: protoNames, Resolver: testTypes})
				got, err := build(md, memo)
				if !bytes.Equal(got, want) || (err == nil) != (wantErr == nil) {
					t.Errorf("%s(%s) with a Memo = %s, %v; without = %s, %v", name, md.FullName(), got, err, want, wantErr)
				}
			}
		}
	}
}

// TestSharedNodesUnchanged: the nodes builds share, scalars' and a Memo's
// enums, are as they were built after every test message's schemas,
// whole and bounded, were built with them.
func TestSharedNodesUnchanged(t *testing.T) {
	var mds []protoreflect.MessageDescriptor
	testFiles.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		mds = appendMessages(mds, f.Messages())
		return true
	})
	opts := &Options{Resolver: testTypes, Memo: &Memo{}}
	for _, md := range mds {
		_, _ = Input(md, opts)
		_, _ = Output(md, opts)
		_, _ = InputWithin(md, opts, Bound{MaxBytes: 600})
		_, _ = OutputWithin(md, opts, Bound{MaxBytes: 600})
	}
	for _, dir := range []direction{input, output} {
		for k, n := range scalars[dir] {
			if n == nil {
				continue
			}
			if got, want := n.appendJSON(nil), scalarSchema(protoreflect.Kind(k), dir).appendJSON(nil); !bytes.Equal(got, want) {
				t.Errorf("scalar %v (direction %d) is now %s, was built %s", protoreflect.Kind(k), dir, got, want)
			}
		}
		if len(opts.Memo.enums[dir]) == 0 {
			t.Errorf("direction %d: no enum memoized", dir)
		}
		for ed, n := range opts.Memo.enums[dir] {
			b := &builder{dir: dir, opts: *opts}
			if got, want := n.appendJSON(nil), b.enumSchema(ed).appendJSON(nil); !bytes.Equal(got, want) {
				t.Errorf("enum %s (direction %d) is now %s, was built %s", ed.FullName(), dir, got, want)
			}
		}
	}
}
