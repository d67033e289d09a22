package schema

import (
	validatepb "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/encoding/prototext"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

// rulesFile is testdata/rules.proto: google.api.field_behavior and
// buf.validate rules. Options are set with the generated extension types
// here; rulesFileAsReflected turns them into unknown fields, the form server
// reflection delivers, and the registry is built from that form so every
// test exercises the harder path.

// rules parses buf.validate.FieldRules in text format, as written in the
// .proto file.
func rules(text string) *validatepb.FieldRules {
	r := &validatepb.FieldRules{}
	if err := prototext.Unmarshal([]byte(text), r); err != nil {
		panic(err)
	}
	return r
}

func withOpts(f *fdp, r *validatepb.FieldRules, fb ...annotations.FieldBehavior) *fdp {
	if f.Options == nil {
		f.Options = &descriptorpb.FieldOptions{}
	}
	if r != nil {
		proto.SetExtension(f.Options, validatepb.E_Field, r)
	}
	if len(fb) > 0 {
		proto.SetExtension(f.Options, annotations.E_FieldBehavior, fb)
	}
	return f
}

func rulesFile() *descriptorpb.FileDescriptorProto {
	const p = ".schematest.v1."
	const g = ".google.protobuf."
	counts, countsEntry := mapField("counts", 14, tString, tInt32, p+"Shelf")
	withOpts(counts, rules(`map: {max_pairs: 3, keys: {string: {min_len: 1, example: "k1", example: "k2"}}, values: {int32: {gte: 0, example: 3}}}`))
	shelf := msg("Shelf",
		withOpts(field("name", 1, tString), rules(`string: {min_len: 3, max_len: 20, pattern: "^[a-z][a-z0-9-]*$", example: "fiction-shelf"}`), annotations.FieldBehavior_REQUIRED),
		withOpts(field("theme", 2, tString), rules(`ignore: IGNORE_IF_ZERO_VALUE, string: {in: ["fiction", "history", "science"], example: "history"}`), annotations.FieldBehavior_IMMUTABLE),
		withOpts(field("etag", 3, tString), nil, annotations.FieldBehavior_OUTPUT_ONLY),
		withOpts(field("capacity", 4, tInt32), rules(`ignore: IGNORE_IF_ZERO_VALUE, int32: {gt: 0, lte: 1000, example: 10}`)),
		withOpts(field("serial", 5, tInt64), rules(`ignore: IGNORE_IF_ZERO_VALUE, int64: {gte: 1, lt: 1000000, example: 42}`)),
		withOpts(field("weight", 6, tDouble), rules(`ignore: IGNORE_IF_ZERO_VALUE, double: {gte: 0, lt: 500, finite: true, example: 12.5}`)),
		withOpts(field("email", 7, tString), rules(`ignore: IGNORE_IF_ZERO_VALUE, string: {email: true, example: "keeper@example.com"}`)),
		withOpts(field("site", 8, tString), rules(`ignore: IGNORE_IF_ZERO_VALUE, string: {uri: true, example: "https://example.com/shelf"}`)),
		withOpts(field("id", 9, tString), rules(`ignore: IGNORE_IF_ZERO_VALUE, string: {uuid: true, example: "3f2504e0-4f89-41d3-9a0c-0305e82c3301"}`)),
		withOpts(field("host", 10, tString), rules(`ignore: IGNORE_IF_ZERO_VALUE, string: {hostname: true, example: "shelf.example.com"}`)),
		withOpts(field("ipv4", 11, tString), rules(`ignore: IGNORE_IF_ZERO_VALUE, string: {ipv4: true, example: "192.0.2.1"}`)),
		withOpts(field("ipv6", 12, tString), rules(`ignore: IGNORE_IF_ZERO_VALUE, string: {ipv6: true, example: "2001:db8::1"}`)),
		withOpts(repeated(field("tags", 13, tString)), rules(`repeated: {min_items: 1, max_items: 5, unique: true, items: {string: {min_len: 1, max_len: 10, example: "a", example: "bb", example: "ccc"}}}`)),
		counts,
		withOpts(field("keeper", 15, tMessage, p+"Keeper"), rules(`required: true`)),
		repeated(field("keepers", 16, tMessage, p+"Keeper")),
		withOpts(field("item", 17, tMessage, g+"Any"), rules(`any: {in: ["type.googleapis.com/schematest.v1.Book"]}`)),
		withOpts(field("extra", 18, tMessage, g+"Any"), rules(`any: {in: ["type.googleapis.com/schematest.v1.Book", "type.googleapis.com/schematest.v1.Keeper", "type.googleapis.com/schematest.v1.Missing"]}`)),
		withOpts(field("ttl", 19, tMessage, g+"Duration"), rules(`duration: {gte: {seconds: 1}, example: {seconds: 5}}`)),
		withOpts(field("code", 20, tString), rules(`ignore: IGNORE_IF_ZERO_VALUE, string: {prefix: "SH-", example: "SH-1"}`)),
		withOpts(field("genre", 21, tEnum, p+"Genre"), rules(`ignore: IGNORE_IF_ZERO_VALUE, enum: {defined_only: true, not_in: [0], example: 1}`)),
		field("isbn", 22, tString),
		field("title", 23, tString),
		inOneof(field("room", 24, tString), 0),
		inOneof(withOpts(field("floor", 25, tInt32), rules(`int32: {gte: 0, example: 2}`)), 0),
		withOpts(field("note", 26, tString), rules(`cel: {id: "note.no_bang", message: "must not start with '!'", expression: "!this.startsWith('!')"}`)),
	)
	shelf.NestedType = []*descriptorpb.DescriptorProto{countsEntry}
	oneofOpts := &descriptorpb.OneofOptions{}
	proto.SetExtension(oneofOpts, validatepb.E_Oneof, &validatepb.OneofRules{Required: proto.Bool(true)})
	shelf.OneofDecl = []*descriptorpb.OneofDescriptorProto{{Name: proto.String("location"), Options: oneofOpts}}
	mr := &validatepb.MessageRules{}
	if err := prototext.Unmarshal([]byte(`cel: {id: "shelf.name_not_theme", message: "name and theme must differ", expression: "this.name == '' || this.name != this.theme"} oneof: {fields: ["isbn", "title"]}`), mr); err != nil {
		panic(err)
	}
	shelf.Options = &descriptorpb.MessageOptions{}
	proto.SetExtension(shelf.Options, validatepb.E_Message, mr)

	keeper := msg("Keeper",
		withOpts(field("name", 1, tString), nil, annotations.FieldBehavior_REQUIRED),
		withOpts(field("age", 2, tInt32), rules(`ignore: IGNORE_IF_ZERO_VALUE, int32: {gte: 18, example: 30}`)),
	)
	book := msg("Book",
		withOpts(field("title", 1, tString), rules(`string: {min_len: 1, example: "Dune"}`)),
		field("pages", 2, tInt32),
	)
	return &descriptorpb.FileDescriptorProto{
		Name:       proto.String("schematest/v1/rules.proto"),
		Package:    proto.String("schematest.v1"),
		Syntax:     proto.String("proto3"),
		Dependency: []string{"buf/validate/validate.proto", "google/api/field_behavior.proto", "google/protobuf/any.proto", "google/protobuf/duration.proto"},
		EnumType: []*descriptorpb.EnumDescriptorProto{{
			Name: proto.String("Genre"),
			Value: []*descriptorpb.EnumValueDescriptorProto{
				{Name: proto.String("GENRE_UNSPECIFIED"), Number: proto.Int32(0)},
				{Name: proto.String("GENRE_FICTION"), Number: proto.Int32(1)},
				{Name: proto.String("GENRE_HISTORY"), Number: proto.Int32(2)},
			},
		}},
		MessageType: []*descriptorpb.DescriptorProto{shelf, keeper, book},
		SourceCodeInfo: sourceInfo(
			comment{path: []int32{5, 0}, leading: " Genre of a book.\n"},
			comment{path: []int32{5, 0, 2, 1}, trailing: " Made up.\n"},
			comment{path: []int32{5, 0, 2, 2}, trailing: " Happened.\n"},
			comment{path: []int32{4, 0}, leading: " Shelf exercises google.api.field_behavior and protovalidate rules.\n"},
			comment{path: []int32{4, 1}, leading: " Keeper looks after a shelf.\n"},
		),
	}
}

// asReflected round-trips f through the wire with a resolver that knows no
// extensions, as a reflection client does: every option extension becomes
// an unknown field.
func asReflected(f *descriptorpb.FileDescriptorProto) *descriptorpb.FileDescriptorProto {
	b, err := proto.Marshal(f)
	if err != nil {
		panic(err)
	}
	out := &descriptorpb.FileDescriptorProto{}
	if err := (proto.UnmarshalOptions{Resolver: &protoregistry.Types{}}).Unmarshal(b, out); err != nil {
		panic(err)
	}
	return out
}
