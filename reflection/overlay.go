package reflection

import (
	"context"
	"fmt"
	"log/slog"

	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// OverlayOptions configures Overlay. Nil gives the defaults.
type OverlayOptions struct {
	// Logger receives a record for each file whose comments were not
	// taken because the two sources disagree on its shape. Nil discards.
	Logger *slog.Logger
}

type overlay struct {
	base, comments Source
	logger         *slog.Logger
}

// Overlay returns a Source whose services and types are base's (the
// backend as it runs, usually server reflection) and whose comments come
// from comments (usually a descriptor set built with source info): tool
// descriptions from the real API, without trusting a file that may be out
// of date for the API's shape. opts may be nil.
//
// Comments are matched element by element, by full name, so they are found
// even when the two sources split the API into files differently (grpc-js
// serves one file per package). A base file takes no comments at all when
// any of its elements is missing from comments or differs there (another
// field number, type or label, another method signature): the file
// describes another version of the API, whose comments could mislead.
// Such a file is logged and kept as base has it. base's errors are
// Discover's; comments' errors are too, since an operator who asked for
// the overlay wants to know it is not being applied.
func Overlay(base, comments Source, opts *OverlayOptions) Source {
	if opts == nil {
		opts = &OverlayOptions{}
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &overlay{base: base, comments: comments, logger: logger}
}

// Discover implements Source.
func (o *overlay) Discover(ctx context.Context) (*Result, error) {
	res, err := o.base.Discover(ctx)
	if err != nil {
		return nil, err
	}
	extra, err := o.comments.Discover(ctx)
	if err != nil {
		return nil, fmt.Errorf("overlay comments: %w", err)
	}

	p := newPool(o.logger, "overlay")
	grafted := 0
	res.Files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if bundledFile(fd.Path()) == fd {
			return true // the bundle's own files stay shared
		}
		fdp := protodesc.ToFileDescriptorProto(fd)
		if info, mismatch := graft(fd, extra); mismatch != "" {
			o.logger.Info("reflection: overlay: not taking comments for a file whose shape differs between the sources",
				"file", fd.Path(), "difference", mismatch)
		} else if len(info.GetLocation()) > 0 {
			fdp.SourceCodeInfo = info
			grafted++
		}
		p.add(fdp)
		return true
	})
	if grafted == 0 {
		return res, nil
	}
	out := &Result{}
	for _, sd := range res.Services {
		fd, err := p.build(sd.ParentFile().Path())
		if err != nil {
			// Cannot happen: these descriptors were built once already.
			return nil, fmt.Errorf("overlay: rebuilding %s: %w", sd.ParentFile().Path(), err)
		}
		out.Services = append(out.Services, fd.Services().ByName(sd.Name()))
	}
	// Files nobody's service needs (a backend's stray import) still
	// belong in Files.
	for _, path := range p.paths() {
		if _, err := p.build(path); err != nil {
			return nil, fmt.Errorf("overlay: rebuilding %s: %w", path, err)
		}
	}
	out.Files = p.reg
	return out, nil
}

// graft builds source info for base's elements from the comments the
// other result holds for the same full names. It returns a non-empty
// mismatch when the two disagree on the file's shape.
func graft(base protoreflect.FileDescriptor, other *Result) (*descriptorpb.SourceCodeInfo, string) {
	info := &descriptorpb.SourceCodeInfo{}
	var mismatch string
	visit := func(d protoreflect.Descriptor, path []int32) bool {
		od, err := other.Files.FindDescriptorByName(d.FullName())
		if err != nil {
			mismatch = fmt.Sprintf("%s is missing", d.FullName())
			return false
		}
		if why := sameShape(d, od); why != "" {
			mismatch = fmt.Sprintf("%s: %s", d.FullName(), why)
			return false
		}
		loc := od.ParentFile().SourceLocations().ByDescriptor(od)
		if loc.LeadingComments == "" && loc.TrailingComments == "" && len(loc.LeadingDetachedComments) == 0 {
			return true
		}
		span := []int32{int32(loc.StartLine), int32(loc.StartColumn), int32(loc.EndLine), int32(loc.EndColumn)}
		if loc.StartLine == loc.EndLine {
			span = []int32{int32(loc.StartLine), int32(loc.StartColumn), int32(loc.EndColumn)}
		}
		l := &descriptorpb.SourceCodeInfo_Location{Path: path, Span: span, LeadingDetachedComments: loc.LeadingDetachedComments}
		if loc.LeadingComments != "" {
			l.LeadingComments = &loc.LeadingComments
		}
		if loc.TrailingComments != "" {
			l.TrailingComments = &loc.TrailingComments
		}
		info.Location = append(info.Location, l)
		return true
	}
	if !walk(base, visit) {
		return nil, mismatch
	}
	return info, ""
}

// Field numbers of descriptor.proto, which source info paths are made of.
const (
	fileMessageType = 4
	fileEnumType    = 5
	fileService     = 6
	fileExtension   = 7
	msgField        = 2
	msgNestedType   = 3
	msgEnumType     = 4
	msgExtension    = 6
	msgOneof        = 8
	enumValue       = 2
	serviceMethod   = 2
)

// walk calls visit for every element of fd with its source info path,
// stopping when visit returns false.
func walk(fd protoreflect.FileDescriptor, visit func(protoreflect.Descriptor, []int32) bool) bool {
	at := func(path []int32, more ...int32) []int32 {
		return append(append([]int32(nil), path...), more...)
	}
	var enum func(e protoreflect.EnumDescriptor, path []int32) bool
	enum = func(e protoreflect.EnumDescriptor, path []int32) bool {
		if !visit(e, path) {
			return false
		}
		for i := range e.Values().Len() {
			if !visit(e.Values().Get(i), at(path, enumValue, int32(i))) {
				return false
			}
		}
		return true
	}
	var message func(m protoreflect.MessageDescriptor, path []int32) bool
	message = func(m protoreflect.MessageDescriptor, path []int32) bool {
		if !visit(m, path) {
			return false
		}
		for i := range m.Fields().Len() {
			if !visit(m.Fields().Get(i), at(path, msgField, int32(i))) {
				return false
			}
		}
		for i := range m.Oneofs().Len() {
			if !visit(m.Oneofs().Get(i), at(path, msgOneof, int32(i))) {
				return false
			}
		}
		for i := range m.Messages().Len() {
			if !message(m.Messages().Get(i), at(path, msgNestedType, int32(i))) {
				return false
			}
		}
		for i := range m.Enums().Len() {
			if !enum(m.Enums().Get(i), at(path, msgEnumType, int32(i))) {
				return false
			}
		}
		for i := range m.Extensions().Len() {
			if !visit(m.Extensions().Get(i), at(path, msgExtension, int32(i))) {
				return false
			}
		}
		return true
	}
	for i := range fd.Messages().Len() {
		if !message(fd.Messages().Get(i), []int32{fileMessageType, int32(i)}) {
			return false
		}
	}
	for i := range fd.Enums().Len() {
		if !enum(fd.Enums().Get(i), []int32{fileEnumType, int32(i)}) {
			return false
		}
	}
	for i := range fd.Services().Len() {
		s := fd.Services().Get(i)
		if !visit(s, []int32{fileService, int32(i)}) {
			return false
		}
		for j := range s.Methods().Len() {
			if !visit(s.Methods().Get(j), []int32{fileService, int32(i), serviceMethod, int32(j)}) {
				return false
			}
		}
	}
	for i := range fd.Extensions().Len() {
		if !visit(fd.Extensions().Get(i), []int32{fileExtension, int32(i)}) {
			return false
		}
	}
	return true
}

// sameShape says how a and b, two elements of the same full name, differ
// in what a client sees; "" when they do not.
func sameShape(a, b protoreflect.Descriptor) string {
	switch a := a.(type) {
	case protoreflect.FieldDescriptor:
		b, ok := b.(protoreflect.FieldDescriptor)
		switch {
		case !ok:
			return "not a field in both"
		case a.Number() != b.Number():
			return fmt.Sprintf("field number %d vs %d", a.Number(), b.Number())
		case a.Kind() != b.Kind() || a.Cardinality() != b.Cardinality():
			return fmt.Sprintf("%v %v vs %v %v", a.Cardinality(), a.Kind(), b.Cardinality(), b.Kind())
		case a.Message() != nil && a.Message().FullName() != b.Message().FullName():
			return fmt.Sprintf("type %s vs %s", a.Message().FullName(), b.Message().FullName())
		case a.Enum() != nil && a.Enum().FullName() != b.Enum().FullName():
			return fmt.Sprintf("type %s vs %s", a.Enum().FullName(), b.Enum().FullName())
		}
	case protoreflect.MessageDescriptor:
		b, ok := b.(protoreflect.MessageDescriptor)
		if !ok {
			return "not a message in both"
		}
		if a.Fields().Len() != b.Fields().Len() {
			return fmt.Sprintf("%d fields vs %d", a.Fields().Len(), b.Fields().Len())
		}
	case protoreflect.EnumDescriptor:
		b, ok := b.(protoreflect.EnumDescriptor)
		if !ok {
			return "not an enum in both"
		}
		if a.Values().Len() != b.Values().Len() {
			return fmt.Sprintf("%d values vs %d", a.Values().Len(), b.Values().Len())
		}
	case protoreflect.EnumValueDescriptor:
		b, ok := b.(protoreflect.EnumValueDescriptor)
		if !ok || a.Number() != b.Number() {
			return "another enum value number"
		}
	case protoreflect.ServiceDescriptor:
		b, ok := b.(protoreflect.ServiceDescriptor)
		if !ok {
			return "not a service in both"
		}
		if a.Methods().Len() != b.Methods().Len() {
			return fmt.Sprintf("%d methods vs %d", a.Methods().Len(), b.Methods().Len())
		}
	case protoreflect.MethodDescriptor:
		b, ok := b.(protoreflect.MethodDescriptor)
		switch {
		case !ok:
			return "not a method in both"
		case a.Input().FullName() != b.Input().FullName() || a.Output().FullName() != b.Output().FullName():
			return fmt.Sprintf("(%s) returns (%s) vs (%s) returns (%s)", a.Input().FullName(), a.Output().FullName(), b.Input().FullName(), b.Output().FullName())
		case a.IsStreamingClient() != b.IsStreamingClient() || a.IsStreamingServer() != b.IsStreamingServer():
			return "streaming differs"
		}
	case protoreflect.OneofDescriptor:
		if _, ok := b.(protoreflect.OneofDescriptor); !ok {
			return "not a oneof in both"
		}
	}
	return ""
}
