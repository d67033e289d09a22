package schema

import (
	"encoding/json"
	"errors"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// FuzzDecode: arbitrary bytes as the arguments of several tools never panic;
// anything Decode rejects comes back as violations (never reaching a
// backend), and anything it accepts is a message protojson can write back
// and Decode accepts again. The seed corpus is in testdata/fuzz/FuzzDecode.
func FuzzDecode(f *testing.F) {
	names := []protoreflect.FullName{
		"schematest.v1.Shelf", "schematest.v1.Kitchen", "schematest.v1.WellKnown",
		"schematest.v1.Legacy", "schematest.v1.Node", "google.protobuf.Timestamp",
	}
	vs := make([]*Validator, len(names))
	for i, n := range names {
		vs[i] = mustValidator(f, testMessage(f, n), nil)
	}
	f.Add(uint8(0), []byte(validShelf))
	f.Fuzz(func(t *testing.T, which uint8, args []byte) {
		v := vs[int(which)%len(vs)]
		m := dynamicpb.NewMessage(v.md)
		err := v.Decode(args, m)
		if err != nil {
			var ve *ValidationError
			if !errors.As(err, &ve) || len(ve.Violations) == 0 {
				t.Fatalf("Decode(%q) = %v, want a ValidationError with violations", args, err)
			}
			_ = ve.Error()
			return
		}
		if !json.Valid(args) {
			t.Fatalf("Decode accepted invalid JSON %q", args)
		}
		out, err := protojson.MarshalOptions{Resolver: testTypes}.Marshal(m)
		if err != nil {
			t.Fatalf("accepted %q but protojson cannot write the result: %v", args, err)
		}
		if err := v.Decode(wrapIfNeeded(v.md, out), dynamicpb.NewMessage(v.md)); err != nil {
			t.Fatalf("accepted %q, but not its own re-encoding %s: %v", args, out, err)
		}
	})
}
