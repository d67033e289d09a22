package overrides

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/internal/schema"
)

// BenchmarkDecodeOverridden measures what argument overrides add to a
// call's conversion of its arguments (a tool's decodeRequest: the
// validator's DecodeInjected with the tool's Args): ListAnimals decoded
// plain, and with enclosure_id fixed and page_size defaulted (the check
// that the caller sent neither, one precompiled message merged, one
// default set). The rules are compiled once, at discovery; the call pays
// only these.
//
//	go test -run '^$' -bench BenchmarkDecodeOverridden -benchmem ./gateway/internal/overrides/
func BenchmarkDecodeOverridden(b *testing.B) {
	m := zoov1.File_zoo_v1_zoo_proto.Services().ByName("ZooService").Methods().ByName("ListAnimals")
	v, err := schema.NewValidator(m.Input(), nil)
	if err != nil {
		b.Fatal(err)
	}
	input := dynamicpb.NewMessageType(m.Input())
	args, err := CompileArgs(m, []ArgSpec{
		{key: "enclosure_id", kind: argFixed, value: json.RawMessage(`"savanna"`)},
		{key: "page_size", kind: argDefault, value: json.RawMessage(`10`)},
	}, false)
	if err != nil {
		b.Fatal(err)
	}
	in := []byte(`{"species":["SPECIES_LION"],"pageToken":"abc"}`)
	for _, c := range []struct {
		name string
		inj  schema.Injector
	}{{"plain", nil}, {"fixed+default", args}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := v.DecodeInjected(in, input.New().Interface(), c.inj); err != nil {
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
	args, err := CompileArgs(m, []ArgSpec{
		{key: "enclosure_id", kind: argFixed, value: json.RawMessage(`"savanna"`)},
		{key: "page_size", kind: argDefault, value: json.RawMessage(`10`)},
	}, false)
	if err != nil {
		t.Fatal(err)
	}
	decode := func(in string) (*dynamicpb.Message, error) {
		msg := dynamicpb.NewMessage(m.Input())
		_, err := v.DecodeInjected([]byte(in), msg, args)
		return msg, err
	}
	msg, err := decode(`{"pageToken":"abc"}`)
	if err != nil {
		t.Fatal(err)
	}
	r := msg.ProtoReflect()
	fs := m.Input().Fields()
	if r.Get(fs.ByName("enclosure_id")).String() != "savanna" || r.Get(fs.ByName("page_size")).Int() != 10 || r.Get(fs.ByName("page_token")).String() != "abc" {
		t.Fatalf("decoded %v", msg)
	}
	msg, _ = decode(`{"pageSize":3}`)
	if got := msg.ProtoReflect().Get(fs.ByName("page_size")).Int(); got != 3 {
		t.Fatalf("the caller's page size %d was replaced by the default", got)
	}
}

// TestOverrideOneofsAndParents: a default never replaces what a caller
// chose (another member of its oneof, at any depth) and never makes a
// message the caller left out; a fixed argument is refused beside a
// caller's choice at any depth of its path, never merged over it.
func TestOverrideOneofsAndParents(t *testing.T) {
	svc := zoov1.File_zoo_v1_zoo_proto.Services().ByName("ZooService")
	decode := func(t *testing.T, method string, specs []ArgSpec, in string) (*dynamicpb.Message, error) {
		t.Helper()
		m := svc.Methods().ByName(protoreflect.Name(method))
		v, err := schema.NewValidator(m.Input(), nil)
		if err != nil {
			t.Fatal(err)
		}
		args, err := CompileArgs(m, specs, false)
		if err != nil {
			t.Fatal(err)
		}
		msg := dynamicpb.NewMessage(m.Input())
		if _, err := v.DecodeInjected([]byte(in), msg, args); err != nil {
			return nil, err
		}
		return msg, nil
	}
	asJSON := func(m *dynamicpb.Message) string {
		b, _ := protojson.Marshal(m)
		var v any
		_ = json.Unmarshal(b, &v)
		out, _ := json.Marshal(v)
		return string(out)
	}

	rationDefault := []ArgSpec{{key: "ration", kind: argDefault, value: json.RawMessage(`"hay"`)}}
	if msg, err := decode(t, "FeedAnimal", rationDefault, `{"animalId":"leo","meal":{"note":"steak"}}`); err != nil || asJSON(msg) != `{"animalId":"leo","meal":{"note":"steak"}}` {
		t.Errorf("a default over the caller's meal: %v %v", asJSON(msg), err)
	}
	if msg, err := decode(t, "FeedAnimal", rationDefault, `{"animalId":"leo"}`); err != nil || asJSON(msg) != `{"animalId":"leo","ration":"hay"}` {
		t.Errorf("the default where the caller chose nothing: %v %v", asJSON(msg), err)
	}
	noteDefault := []ArgSpec{{key: "meal.note", kind: argDefault, value: json.RawMessage(`"x"`)}}
	if msg, err := decode(t, "FeedAnimal", noteDefault, `{"animalId":"leo","ration":"hay"}`); err != nil || asJSON(msg) != `{"animalId":"leo","ration":"hay"}` {
		t.Errorf("a nested default over the caller's ration: %v %v", asJSON(msg), err)
	}
	nameDefault := []ArgSpec{{key: "animal.display_name", kind: argDefault, value: json.RawMessage(`"Unnamed"`)}}
	if msg, err := decode(t, "UpdateAnimal", nameDefault, `{"updateMask":"tags"}`); err != nil || asJSON(msg) != `{"updateMask":"tags"}` {
		t.Errorf("a default made the animal the caller left out: %v %v", asJSON(msg), err)
	}
	if msg, err := decode(t, "UpdateAnimal", nameDefault, `{"animal":{"id":"leo"}}`); err != nil || asJSON(msg) != `{"animal":{"displayName":"Unnamed","id":"leo"}}` {
		t.Errorf("a nested default in the caller's animal: %v %v", asJSON(msg), err)
	}

	noteFixed := []ArgSpec{{key: "meal.note", kind: argFixed, value: json.RawMessage(`"x"`)}}
	if msg, err := decode(t, "FeedAnimal", noteFixed, `{"animalId":"leo","ration":"hay"}`); err == nil || !strings.Contains(err.Error(), "ration") {
		t.Errorf("a nested fixed value over the caller's ration: %v, err %v", msg, err)
	}
}

// TestOverrideFixedStaysFixed: a later rule may fix another value, but
// hidden or default on a fixed argument is refused at compile time.
func TestOverrideFixedStaysFixed(t *testing.T) {
	m := zoov1.File_zoo_v1_zoo_proto.Services().ByName("ZooService").Methods().ByName("ListAnimals")
	fixed := ArgSpec{key: "enclosure_id", kind: argFixed, value: json.RawMessage(`"savanna"`), where: "tools[0]"}
	if _, err := CompileArgs(m, []ArgSpec{fixed, {key: "enclosure_id", kind: argFixed, value: json.RawMessage(`"coast"`), where: "tools[1]"}}, false); err != nil {
		t.Errorf("fixed again: %v", err)
	}
	for _, later := range []ArgSpec{
		{key: "enclosureId", kind: argHidden, where: "tools[1]"},
		{key: "enclosure_id", kind: argDefault, value: json.RawMessage(`"coast"`), where: "toolsets[0].tools[0]"},
	} {
		_, err := CompileArgs(m, []ArgSpec{fixed, later}, false)
		if !errors.Is(err, ErrToolOverride) || !strings.Contains(err.Error(), "tools[0] fixes enclosureId") {
			t.Errorf("%s after fixed: %v", later.kind, err)
		}
	}
}

// TestOverrideValueErrors: a value of the wrong JSON for a well-known
// type is told the JSON protojson takes, not the type's fields.
func TestOverrideValueErrors(t *testing.T) {
	m := zoov1.File_zoo_v1_zoo_proto.Services().ByName("ZooService").Methods().ByName("WatchFeedings")
	_, err := CompileArgs(m, []ArgSpec{{key: "interval", kind: argFixed, value: json.RawMessage(`{"seconds":5}`)}}, false)
	if err == nil || !strings.Contains(err.Error(), `want a duration string such as "5s"`) {
		t.Fatalf("a Duration given as an object: %v", err)
	}
}

// TestRewriteSchema: the input schema with the rules applied keeps the
// members' order and the numbers as written, leaves fixed arguments out
// of "properties" and "required" (dropping an emptied "required"), shows
// a default, and writes a "$ref" it changes out in place, leaving the
// definition's other uses alone.
func TestRewriteSchema(t *testing.T) {
	svc := zoov1.File_zoo_v1_zoo_proto.Services().ByName("ZooService")
	for _, c := range []struct {
		method   protoreflect.Name
		specs    []ArgSpec
		in, want string
	}{{
		method: "ListAnimals",
		specs: []ArgSpec{
			{key: "enclosure_id", kind: argFixed, value: json.RawMessage(`"savanna"`)},
			{key: "page_size", kind: argDefault, value: json.RawMessage(` 10 `)},
		},
		in:   `{"type":"object","properties":{"enclosureId":{"type":"string"},"pageSize":{"type":"integer","maximum":1e3},"pageToken":{"type":"string"}},"required":["enclosureId"]}`,
		want: `{"type":"object","properties":{"pageSize":{"type":"integer","maximum":1e3,"default":10},"pageToken":{"type":"string"}}}`,
	}, {
		method: "UpdateAnimal",
		specs:  []ArgSpec{{key: "animal.display_name", kind: argDefault, value: json.RawMessage(`"Unnamed"`)}},
		in:     `{"type":"object","properties":{"animal":{"$ref":"#/$defs/zoo.v1.Animal","description":"the animal"}},"$defs":{"zoo.v1.Animal":{"type":"object","properties":{"displayName":{"type":"string"}}}}}`,
		want:   `{"type":"object","properties":{"animal":{"description":"the animal","type":"object","properties":{"displayName":{"type":"string","default":"Unnamed"}}}},"$defs":{"zoo.v1.Animal":{"type":"object","properties":{"displayName":{"type":"string"}}}}}`,
	}} {
		args, err := CompileArgs(svc.Methods().ByName(c.method), c.specs, false)
		if err != nil {
			t.Fatal(err)
		}
		got, err := args.RewriteSchema(json.RawMessage(c.in))
		if err != nil || string(got) != c.want {
			t.Errorf("%s:\n got %s (%v)\nwant %s", c.method, got, err, c.want)
		}
	}
}
