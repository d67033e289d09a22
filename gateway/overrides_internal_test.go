package gateway

import (
	"encoding/json"
	"testing"

	"google.golang.org/protobuf/types/dynamicpb"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/gateway/schema"
)

// BenchmarkDecodeOverridden measures what argument overrides add to a
// call's conversion of its arguments: ListAnimals decoded plain, and with
// enclosure_id fixed and page_size defaulted (the check that the caller
// sent neither, one precompiled message merged, one default set). The
// rules are compiled once, at discovery; the call pays only these.
//
//	go test -run '^$' -bench BenchmarkDecodeOverridden -benchmem ./gateway/
func BenchmarkDecodeOverridden(b *testing.B) {
	m := zoov1.File_zoo_v1_zoo_proto.Services().ByName("ZooService").Methods().ByName("ListAnimals")
	v, err := schema.NewValidator(m.Input(), nil)
	if err != nil {
		b.Fatal(err)
	}
	plain := &tool{input: dynamicpb.NewMessageType(m.Input()), validator: v}
	args, err := compileArgs(m, []argSpec{
		{key: "enclosure_id", kind: argFixed, value: json.RawMessage(`"savanna"`)},
		{key: "page_size", kind: argDefault, value: json.RawMessage(`10`)},
	}, false)
	if err != nil {
		b.Fatal(err)
	}
	overridden := *plain
	overridden.args = args
	in := []byte(`{"species":["SPECIES_LION"],"pageToken":"abc"}`)
	for _, c := range []struct {
		name string
		t    *tool
	}{{"plain", plain}, {"fixed+default", &overridden}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := c.t.decodeRequest(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestDecodeOverridden: the benchmark's overridden tool does what it
// measures: the fixed value and the default are in the request.
func TestDecodeOverridden(t *testing.T) {
	m := zoov1.File_zoo_v1_zoo_proto.Services().ByName("ZooService").Methods().ByName("ListAnimals")
	v, _ := schema.NewValidator(m.Input(), nil)
	args, err := compileArgs(m, []argSpec{
		{key: "enclosure_id", kind: argFixed, value: json.RawMessage(`"savanna"`)},
		{key: "page_size", kind: argDefault, value: json.RawMessage(`10`)},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	tl := &tool{input: dynamicpb.NewMessageType(m.Input()), validator: v, args: args}
	msg, _, err := tl.decodeRequest([]byte(`{"pageToken":"abc"}`))
	if err != nil {
		t.Fatal(err)
	}
	r := msg.ProtoReflect()
	fs := m.Input().Fields()
	if r.Get(fs.ByName("enclosure_id")).String() != "savanna" || r.Get(fs.ByName("page_size")).Int() != 10 || r.Get(fs.ByName("page_token")).String() != "abc" {
		t.Fatalf("decoded %v", msg)
	}
	msg, _, _ = tl.decodeRequest([]byte(`{"pageSize":3}`))
	if got := msg.ProtoReflect().Get(fs.ByName("page_size")).Int(); got != 3 {
		t.Fatalf("the caller's page size %d was replaced by the default", got)
	}
}
