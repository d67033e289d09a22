package schema

import (
	"google.golang.org/genproto/googleapis/api/annotations"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// sharedMessages returns the non-recursive messages that a schema of root
// would write more than once if every message were inlined: those go into
// $defs once and are referenced, which keeps large APIs' schemas compact
// (a Compute Engine response repeats some messages dozens of times).
//
// A message's body is written once for each reference to it from a body
// that is itself written; a message that goes into $defs is written once.
// So the count of references to a message is the sum, over the messages
// that refer to it, of how often each of those is written, times how many
// of its fields refer to it. Visiting messages parents-first (reverse
// postorder, which orders every edge into a non-recursive message) makes
// each count final before it is used. Counts stop at 2: only "more than
// once" matters.
//
// skip leaves out fields a schema does not show (output-only fields of an
// input schema); extra and keep are as for recursiveMessages.
func sharedMessages(root protoreflect.MessageDescriptor, recursive map[protoreflect.FullName]bool,
	extra func(protoreflect.FieldDescriptor) []protoreflect.MessageDescriptor, skip func(protoreflect.FieldDescriptor) bool,
	keep func(protoreflect.MessageDescriptor) bool) map[protoreflect.FullName]bool {
	s := &sharing{extra: extra, skip: skip, keep: keep, seen: map[protoreflect.FullName]bool{}}
	s.visit(root)
	refs := map[protoreflect.FullName]int{}
	shared := map[protoreflect.FullName]bool{}
	for i := len(s.post) - 1; i >= 0; i-- {
		md := s.post[i]
		name := md.FullName()
		var written int
		switch {
		case md == root && recursive[name]:
			written = 2 // inline as the root, and in $defs for the references
		case md == root, recursive[name]:
			written = 1
		case refs[name] >= 2:
			shared[name] = true
			written = 1
		default:
			written = refs[name]
		}
		if written == 0 {
			continue
		}
		for _, m := range s.edges(md) {
			refs[m.FullName()] = min(2, refs[m.FullName()]+written)
		}
	}
	return shared
}

type sharing struct {
	extra func(protoreflect.FieldDescriptor) []protoreflect.MessageDescriptor
	skip  func(protoreflect.FieldDescriptor) bool
	keep  func(protoreflect.MessageDescriptor) bool
	seen  map[protoreflect.FullName]bool
	post  []protoreflect.MessageDescriptor
}

func (s *sharing) visit(md protoreflect.MessageDescriptor) {
	s.seen[md.FullName()] = true
	for _, m := range s.edges(md) {
		if !s.seen[m.FullName()] {
			s.visit(m)
		}
	}
	s.post = append(s.post, md)
}

// edges are md's edges to the messages the schema expands.
func (s *sharing) edges(md protoreflect.MessageDescriptor) []protoreflect.MessageDescriptor {
	out := messageEdges(md, s.extra, s.skip)
	if s.keep == nil {
		return out
	}
	kept := out[:0]
	for _, m := range out {
		if s.keep(m) {
			kept = append(kept, m)
		}
	}
	return kept
}

// outputOnly is the skip of input schemas: the server sets those fields,
// so an input schema leaves them out (see builder.body).
func (b *builder) outputOnly(fd protoreflect.FieldDescriptor) bool {
	return b.behavior(fd).has(annotations.FieldBehavior_OUTPUT_ONLY)
}
