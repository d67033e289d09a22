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
// edges leave out fields a schema does not show (output-only fields of an
// input schema); edges and keep are otherwise as for recursiveMessages.
func sharedMessages(root protoreflect.MessageDescriptor, recursive map[protoreflect.FullName]bool,
	edges func(protoreflect.MessageDescriptor) []protoreflect.MessageDescriptor,
	keep func(protoreflect.MessageDescriptor) bool) map[protoreflect.FullName]bool {
	s := &sharing{all: edges, keep: keep, seen: map[protoreflect.FullName]bool{}}
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
	all  func(protoreflect.MessageDescriptor) []protoreflect.MessageDescriptor
	keep func(protoreflect.MessageDescriptor) bool
	seen map[protoreflect.FullName]bool
	post []protoreflect.MessageDescriptor
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
	out := s.all(md)
	if s.keep == nil {
		return out
	}
	kept := make([]protoreflect.MessageDescriptor, 0, len(out)) // out is the Memo's
	for _, m := range out {
		if s.keep(m) {
			kept = append(kept, m)
		}
	}
	return kept
}

// allEdges are md's edges through every field (recursiveMessages'): for
// an input schema, the types an Any may hold too.
func (b *builder) allEdges(md protoreflect.MessageDescriptor) []protoreflect.MessageDescriptor {
	if b.dir == output {
		return b.edges(outputEdges, md)
	}
	return b.edges(allInputEdges, md)
}

// shownEdges are md's edges through the fields the schema shows
// (sharedMessages' and expansionOrder's): an input schema leaves out
// output-only ones.
func (b *builder) shownEdges(md protoreflect.MessageDescriptor) []protoreflect.MessageDescriptor {
	if b.dir == output {
		return b.edges(outputEdges, md)
	}
	return b.edges(shownInputEdges, md)
}

// edges are set's edges of md, found once per Memo. The slice is shared:
// callers must not change it.
func (b *builder) edges(set edgeSet, md protoreflect.MessageDescriptor) []protoreflect.MessageDescriptor {
	memo := b.opts.Memo
	if e, ok := memo.edges[set][md]; ok {
		return e
	}
	var e []protoreflect.MessageDescriptor
	switch set {
	case outputEdges:
		e = messageEdges(md, nil, nil)
	case allInputEdges:
		e = messageEdges(md, b.anyCandidates, nil)
	default:
		e = messageEdges(md, b.anyCandidates, b.outputOnly)
	}
	if memo.edges[set] == nil {
		memo.edges[set] = map[protoreflect.MessageDescriptor][]protoreflect.MessageDescriptor{}
	}
	memo.edges[set][md] = e
	return e
}

// outputOnly is the skip of input schemas: the server sets those fields,
// so an input schema leaves them out (see builder.body).
func (b *builder) outputOnly(fd protoreflect.FieldDescriptor) bool {
	return b.behavior(fd).has(annotations.FieldBehavior_OUTPUT_ONLY)
}
