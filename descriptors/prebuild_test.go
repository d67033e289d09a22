package descriptors

import (
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"
)

// TestPrebuild: prebuild builds a chain of imports level by level, and
// leaves a file it cannot build (and what imports it) to build, which
// reports the same error as without prebuild.
func TestPrebuild(t *testing.T) {
	msg := func(name, typeName string) *descriptorpb.DescriptorProto {
		m := &descriptorpb.DescriptorProto{Name: proto.String(name)}
		if typeName != "" {
			m.Field = []*descriptorpb.FieldDescriptorProto{{
				Name: proto.String("f"), Number: proto.Int32(1), JsonName: proto.String("f"),
				Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(), Type: descriptorpb.FieldDescriptorProto_TYPE_MESSAGE.Enum(),
				TypeName: proto.String(typeName),
			}}
		}
		return m
	}
	file := func(name string, deps []string, m *descriptorpb.DescriptorProto) *descriptorpb.FileDescriptorProto {
		return &descriptorpb.FileDescriptorProto{Name: proto.String(name), Package: proto.String("p"), Syntax: proto.String("proto3"),
			Dependency: deps, MessageType: []*descriptorpb.DescriptorProto{m}}
	}
	files := []*descriptorpb.FileDescriptorProto{
		file("a.proto", nil, msg("A", "")),
		file("b.proto", []string{"a.proto", "google/protobuf/timestamp.proto"}, msg("B", ".p.A")),
		file("c.proto", []string{"b.proto"}, msg("C", ".p.B")),
		file("bad.proto", []string{"a.proto"}, msg("Bad", ".p.Missing")),
		file("above.proto", []string{"bad.proto"}, msg("Above", ".p.Bad")),
	}
	build := func(pre bool) (*pool, map[string]string) {
		p := newPool(slog.New(slog.DiscardHandler), "test")
		for _, f := range files {
			p.add(proto.Clone(f).(*descriptorpb.FileDescriptorProto))
		}
		if pre {
			p.prebuild([]string{"c.proto", "above.proto"})
			for _, name := range []string{"a.proto", "b.proto", "c.proto"} {
				if p.built[name] == nil {
					t.Errorf("prebuild left %s unbuilt", name)
				}
			}
			for _, name := range []string{"bad.proto", "above.proto"} {
				if p.built[name] != nil {
					t.Errorf("prebuild built %s, whose message refers to an undeclared type", name)
				}
			}
		}
		errs := make(map[string]string)
		for _, name := range []string{"c.proto", "above.proto"} {
			if _, err := p.build(name); err != nil {
				errs[name] = err.Error()
			}
		}
		return p, errs
	}
	p, withErrs := build(true)
	_, withoutErrs := build(false)
	if len(withErrs) != 1 || !strings.Contains(withErrs["above.proto"], "bad.proto") {
		t.Errorf("errors after prebuild: %q, want one for above.proto naming bad.proto", withErrs)
	}
	if withErrs["above.proto"] != withoutErrs["above.proto"] || len(withErrs) != len(withoutErrs) {
		t.Errorf("errors with prebuild %q differ from without %q", withErrs, withoutErrs)
	}
	if fd, err := p.reg.FindFileByPath("c.proto"); err != nil || fd.Messages().Get(0).Fields().Get(0).Message().FullName() != "p.B" {
		t.Errorf("c.proto registered: %v, %v", fd, err)
	}
}
