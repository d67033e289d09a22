package schema

import "google.golang.org/protobuf/reflect/protoreflect"

// Memo keeps what building schemas reads from the descriptors again and
// again: comments cleaned of their syntax, google.api.field_behavior
// values (read by encoding a field's options), the messages each message's
// fields lead to (which every build walks twice before writing anything),
// and the schemas of enums. A
// discovery builds the schemas of thousands of messages that share fields,
// messages and enums, each in an input, an output and sometimes a dozen
// bounded variants; with one Memo in their Options each descriptor is read
// once.
//
// A Memo holds every descriptor it has seen and its comments, so it
// belongs to one set of builds with the same Options (one discovery) and
// is dropped with it: kept for a process's life it would pin the
// descriptors of every API ever discovered. The zero value is ready to
// use. A Memo is not safe for concurrent use.
type Memo struct {
	// messages are looked up once per message a build visits, not once per
	// field: a large map's lookups cost cache misses, and a catalog's
	// messages are fewer than its fields.
	messages map[protoreflect.MessageDescriptor]*messageFacts
	// enums are the enums' schemas by direction (builder.enum); a node is
	// never changed once built (see node), so builds share them.
	enums [output + 1]map[protoreflect.EnumDescriptor]*node
	// edges are the messages' messageEdges, by edgeSet (builder.edges).
	edges [shownInputEdges + 1]map[protoreflect.MessageDescriptor][]protoreflect.MessageDescriptor
	// scratch is the buffer schemas are encoded in before being copied
	// out at their size: it grows to the largest once, instead of each
	// schema growing its own by doubling, and the bounded tries that do
	// not fit leave nothing behind.
	scratch []byte
}

// messageFacts are what the builds read of a message and its fields.
type messageFacts struct {
	commented bool // comment is read
	comment   string
	fields    []fieldFacts // as md.Fields() lists them
}

type fieldFacts struct {
	behavior  behavior
	commented bool // comment is read: only the fields a schema lists need it
	comment   string
}

// message returns md's facts, reading its fields' behaviors on first use.
func (m *Memo) message(md protoreflect.MessageDescriptor) *messageFacts {
	if f, ok := m.messages[md]; ok {
		return f
	}
	fields := md.Fields()
	f := &messageFacts{fields: make([]fieldFacts, fields.Len())}
	for i := range f.fields {
		f.fields[i].behavior = fieldBehavior(fields.Get(i))
	}
	if m.messages == nil {
		m.messages = map[protoreflect.MessageDescriptor]*messageFacts{}
	}
	m.messages[md] = f
	return f
}

// messageComment returns md's comment, read from src on first use.
func (m *Memo) messageComment(md protoreflect.MessageDescriptor, src CommentSource) string {
	f := m.message(md)
	if !f.commented {
		f.comment, f.commented = comments(src, md), true
	}
	return f.comment
}

// field returns fd's facts, its comment read from src on first use.
// Extensions, which the builds never list, are read each time.
func (m *Memo) field(fd protoreflect.FieldDescriptor, src CommentSource) fieldFacts {
	if fd.IsExtension() {
		return fieldFacts{behavior: fieldBehavior(fd), commented: true, comment: comments(src, fd)}
	}
	f := &m.message(fd.ContainingMessage()).fields[fd.Index()]
	if !f.commented {
		f.comment, f.commented = comments(src, fd), true
	}
	return *f
}

// behavior returns fd's google.api.field_behavior.
func (m *Memo) behavior(fd protoreflect.FieldDescriptor) behavior {
	if fd.IsExtension() {
		return fieldBehavior(fd)
	}
	return m.message(fd.ContainingMessage()).fields[fd.Index()].behavior
}

// edgeSet names the edges of a message the builds follow.
type edgeSet int

const (
	outputEdges     edgeSet = iota // every field's message
	allInputEdges                  // and the types an Any may hold
	shownInputEdges                // those of the fields an input schema shows
)

// withMemo returns opts (nil: the defaults) with a Memo: opts itself when
// it has one, else a copy with a new one, which the builds of one call
// (the tries of a bounded schema) then share.
func withMemo(opts *Options) *Options {
	if opts == nil {
		return &Options{Memo: &Memo{}}
	}
	if opts.Memo != nil {
		return opts
	}
	o := *opts
	o.Memo = &Memo{}
	return &o
}
