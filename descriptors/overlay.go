package descriptors

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
)

// OverlayOptions configures Overlay. Nil gives the defaults.
type OverlayOptions struct {
	// Logger receives an Info record naming the files of services that
	// took no comment at all (the comments' source lacks them: out of
	// date, or another API), and a Debug record for each file some of
	// whose elements took none. Nil discards.
	Logger *slog.Logger
}

type overlay struct {
	base, comments Source
	logger         *slog.Logger

	mu sync.Mutex
	// last is the last Result built, from the sources' Results whose
	// fingerprints were lastFrom.
	last     *Result
	lastFrom [2][sha256.Size]byte
}

// Overlay returns a Source whose services and types are base's (the
// backend as it runs, usually server reflection) and whose comments come
// from comments (usually a descriptor set built with source info): tool
// descriptions from the real API, without trusting a file that may be out
// of date for the API's shape. opts may be nil.
//
// Comments are documentation, taken element by element, by full name, so
// they are found even when the two sources split the API into files
// differently (grpc-js serves one file per package) or describe slightly
// different versions of it (a field added on one side, a message grown
// on the other): an element takes its comment when comments holds an
// element of the same full name and kind, and a field or method of the
// same shape (field number, type and label; request, response and
// streaming). Only the elements that do not exist there as such go
// without; each file that lost some is logged at debug level with a
// count and the first of them. base's errors are Discover's; comments'
// errors are too, since an operator who asked for the overlay wants to
// know it is not being applied.
//
// When both sources' Results carry a Fingerprint (server reflection and
// the file sources do), so does the overlay's, a hash of the two, and a
// Discover whose sources' fingerprints are those of the last one returns
// the last Result again, grafting nothing.
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
	var from [2][sha256.Size]byte
	if res.Fingerprint != from[0] && extra.Fingerprint != from[1] {
		from = [2][sha256.Size]byte{res.Fingerprint, extra.Fingerprint}
		o.mu.Lock()
		last, lastFrom := o.last, o.lastFrom
		o.mu.Unlock()
		if last != nil && lastFrom == from {
			return last, nil
		}
	}
	out, err := o.merge(res, extra)
	if err != nil {
		return nil, err
	}
	if from != [2][sha256.Size]byte{} {
		if out == res {
			cp := *res
			out = &cp
		}
		out.Fingerprint = sha256.Sum256(append(from[0][:], from[1][:]...))
		o.mu.Lock()
		o.last, o.lastFrom = out, from
		o.mu.Unlock()
	}
	return out, nil
}

// merge builds res's files again with the comments extra holds for their
// elements; res itself when it takes none.
func (o *overlay) merge(res, extra *Result) (*Result, error) {
	p := newPool(o.logger, "overlay")
	grafted := 0
	var bare []string // files of services that took no comment
	res.Files.RangeFiles(func(fd protoreflect.FileDescriptor) bool {
		if bundledFile(fd.Path()) == fd {
			return true // the bundle's own files stay shared
		}
		fdp := ToFileDescriptorProto(fd, res.Comments)
		info, skipped := graft(fd, extra)
		if len(skipped) > 0 {
			o.logger.Debug("reflection: overlay: elements without a comment, absent or of another shape in the comments' source",
				"file", fd.Path(), "elements", len(skipped), "first", skipped[0])
		}
		if len(info.GetLocation()) > 0 {
			fdp.SourceCodeInfo = info
			grafted++
		} else if fd.Services().Len() > 0 {
			bare = append(bare, fd.Path())
		}
		p.add(fdp)
		return true
	})
	if len(bare) > 0 {
		o.logger.Info("reflection: overlay: files of services took no comment from the comments' source; their tools are described from their names",
			"files", len(bare), "paths", strings.Join(bare[:min(len(bare), 5)], ","))
	}
	if grafted == 0 {
		return res, nil
	}
	// Types looked up later are described by the backend, as the base
	// result's shape is.
	out := &Result{Resolver: res.Resolver}
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
	out.Comments = p.comments()
	return out, nil
}

// graft builds source info for base's elements from the comments the
// other result holds for the same full names. skipped names the elements
// that took none because other lacks them or has them in another shape.
func graft(base protoreflect.FileDescriptor, other *Result) (info *descriptorpb.SourceCodeInfo, skipped []string) {
	info = &descriptorpb.SourceCodeInfo{}
	walk(base, func(d protoreflect.Descriptor, path []int32) {
		od, err := other.Files.FindDescriptorByName(d.FullName())
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s is missing", d.FullName()))
			return
		}
		if why := sameShape(d, od); why != "" {
			skipped = append(skipped, fmt.Sprintf("%s: %s", d.FullName(), why))
			return
		}
		loc := other.Comments.Location(od)
		if loc.LeadingComments == "" && loc.TrailingComments == "" && len(loc.LeadingDetachedComments) == 0 {
			return
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
	})
	return info, skipped
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

// walk calls visit for every element of fd with its source info path.
func walk(fd protoreflect.FileDescriptor, visit func(protoreflect.Descriptor, []int32)) {
	at := func(path []int32, more ...int32) []int32 {
		return append(append([]int32(nil), path...), more...)
	}
	enum := func(e protoreflect.EnumDescriptor, path []int32) {
		visit(e, path)
		for i := range e.Values().Len() {
			visit(e.Values().Get(i), at(path, enumValue, int32(i)))
		}
	}
	var message func(m protoreflect.MessageDescriptor, path []int32)
	message = func(m protoreflect.MessageDescriptor, path []int32) {
		visit(m, path)
		for i := range m.Fields().Len() {
			visit(m.Fields().Get(i), at(path, msgField, int32(i)))
		}
		for i := range m.Oneofs().Len() {
			visit(m.Oneofs().Get(i), at(path, msgOneof, int32(i)))
		}
		for i := range m.Messages().Len() {
			message(m.Messages().Get(i), at(path, msgNestedType, int32(i)))
		}
		for i := range m.Enums().Len() {
			enum(m.Enums().Get(i), at(path, msgEnumType, int32(i)))
		}
		for i := range m.Extensions().Len() {
			visit(m.Extensions().Get(i), at(path, msgExtension, int32(i)))
		}
	}
	for i := range fd.Messages().Len() {
		message(fd.Messages().Get(i), []int32{fileMessageType, int32(i)})
	}
	for i := range fd.Enums().Len() {
		enum(fd.Enums().Get(i), []int32{fileEnumType, int32(i)})
	}
	for i := range fd.Services().Len() {
		s := fd.Services().Get(i)
		visit(s, []int32{fileService, int32(i)})
		for j := range s.Methods().Len() {
			visit(s.Methods().Get(j), []int32{fileService, int32(i), serviceMethod, int32(j)})
		}
	}
	for i := range fd.Extensions().Len() {
		visit(fd.Extensions().Get(i), []int32{fileExtension, int32(i)})
	}
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
		// A message, enum or service that gained or lost members is
		// still the same element: its members are matched one by one.
		if _, ok := b.(protoreflect.MessageDescriptor); !ok {
			return "not a message in both"
		}
	case protoreflect.EnumDescriptor:
		if _, ok := b.(protoreflect.EnumDescriptor); !ok {
			return "not an enum in both"
		}
	case protoreflect.EnumValueDescriptor:
		b, ok := b.(protoreflect.EnumValueDescriptor)
		if !ok || a.Number() != b.Number() {
			return "another enum value number"
		}
	case protoreflect.ServiceDescriptor:
		if _, ok := b.(protoreflect.ServiceDescriptor); !ok {
			return "not a service in both"
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
