package transcode_test

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
)

var updateCorpus = flag.Bool("update-corpus", false, "regenerate testdata/fuzz/FuzzAppendJSON")

// fuzzTypes are the message types a fuzz input can select with its first
// argument.
func fuzzTypes() []protoreflect.MessageDescriptor {
	s := schema()
	return []protoreflect.MessageDescriptor{
		s.all, s.p2, s.e, (&descriptorpb.FileDescriptorProto{}).ProtoReflect().Descriptor(),
	}
}

// FuzzAppendJSON requires AppendJSON to agree with proto.Unmarshal into
// dynamicpb followed by protojson.Marshal on arbitrary bytes: both fail or
// both succeed with the same compact JSON, and AppendJSON never panics.
func FuzzAppendJSON(f *testing.F) {
	types := fuzzTypes()
	f.Fuzz(func(t *testing.T, which uint8, protoNames bool, wire []byte) {
		md := types[int(which)%len(types)]
		newDiffer(t, md, protoNames).check(t, wire)
	})
}

// TestWriteFuzzCorpus regenerates the checked-in seed corpus from random
// valid messages and the hand-built wire cases when run with -update-corpus.
func TestWriteFuzzCorpus(t *testing.T) {
	if !*updateCorpus {
		t.Skip("run with -update-corpus to regenerate the seed corpus")
	}
	dir := filepath.Join("testdata", "fuzz", "FuzzAppendJSON")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, which uint8, protoNames bool, wire []byte) {
		body := fmt.Sprintf("go test fuzz v1\nuint8(%d)\nbool(%v)\n[]byte(%q)\n", which, protoNames, wire)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, md := range fuzzTypes() {
		g := &filler{r: rand.New(rand.NewPCG(42, uint64(i)))}
		for j := range 6 {
			m := dynamicpb.NewMessage(md)
			g.fill(m, 1+j%2)
			wire, err := proto.MarshalOptions{AllowPartial: true}.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			if len(wire) > 4096 {
				continue
			}
			write(fmt.Sprintf("random-%d-%d", i, j), uint8(i), j%2 == 1, wire)
		}
	}
	s := schema()
	seeds := map[string]struct {
		md   protoreflect.MessageDescriptor
		wire []byte
	}{
		"split-merge":    {s.all, w{}.bytes(aChild, w{}.varint(aInt32, 1)).bytes(aChild, w{}.str(aString, "x"))},
		"oneof-switch":   {s.all, w{}.bytes(aCMsg, w{}.varint(aInt32, 1)).str(aCString, "a").bytes(aCMsg, nil)},
		"map-dup":        {s.all, w{}.bytes(aMString, w{}.str(1, "k").str(2, "1")).bytes(aMString, w{}.str(1, "k"))},
		"packed-mix":     {s.all, w{}.varint(aRInt32, 1).bytes(aRInt32, packedVarints(2, 3)).bytes(aUInt32, packedVarints(4))},
		"any-wkt":        {s.all, w{}.bytes(aAny, w{}.str(1, "type.googleapis.com/google.protobuf.Duration").bytes(2, w{}.varint(1, 3)))},
		"any-msg":        {s.all, w{}.bytes(aAny, w{}.str(1, "type.googleapis.com/tt3.All").bytes(2, w{}.varint(aInt32, 3)))},
		"struct":         {s.all, w{}.bytes(aStruct, w{}.bytes(1, w{}.str(1, "k").bytes(2, w{}.str(3, "v"))))},
		"group":          {s.p2, w{}.str(20, "r").group(30, w{}.varint(31, 1)).group(33, w{}.varint(34, 2))},
		"closed-unknown": {s.p2, w{}.str(20, "r").varint(61, 9).bytes(42, w{}.varint(1, 3).varint(2, 99))},
		"extension":      {s.p2, w{}.str(20, "r").bytes(60, w{}.varint(150, 1))},
		"editions":       {s.e, w{}.varint(5, 1).group(6, w{}.varint(1, 0).varint(5, 2)).bytes(8, packedVarints(1, 2))},
		"malformed":      {s.all, w{}.raw(0x08, 0x80)},
	}
	for name, sd := range seeds {
		which := uint8(0)
		for i, md := range fuzzTypes() {
			if md == sd.md {
				which = uint8(i)
			}
		}
		write("wire-"+name, which, false, sd.wire)
	}
}
