package schema

import "google.golang.org/protobuf/reflect/protoreflect"

// Memo keeps what building schemas reads from the descriptors again and
// again: comments cleaned of their syntax, and google.api.field_behavior
// values (read by encoding a field's options). A discovery builds the
// schemas of thousands of messages that share fields, messages and enums,
// each in an input, an output and sometimes a dozen bounded variants; with
// one Memo in their Options each descriptor is read once.
//
// A Memo holds every descriptor it has seen and its comments, so it
// belongs to one set of builds (one discovery) and is dropped with it:
// kept for a process's life it would pin the descriptors of every API
// ever discovered. The zero value is ready to use. A Memo is not safe for
// concurrent use.
type Memo struct {
	cleaned   map[protoreflect.Descriptor]string
	behaviors map[protoreflect.FieldDescriptor]behavior
	// scratch is the buffer schemas are encoded in before being copied
	// out at their size: it grows to the largest once, instead of each
	// schema growing its own by doubling, and the bounded tries that do
	// not fit leave nothing behind.
	scratch []byte
}

// comments is comments(d), read once per Memo.
func (m *Memo) comments(d protoreflect.Descriptor) string {
	if c, ok := m.cleaned[d]; ok {
		return c
	}
	c := comments(d)
	if m.cleaned == nil {
		m.cleaned = map[protoreflect.Descriptor]string{}
	}
	m.cleaned[d] = c
	return c
}

// behavior is fieldBehavior(fd), read once per Memo.
func (m *Memo) behavior(fd protoreflect.FieldDescriptor) behavior {
	if b, ok := m.behaviors[fd]; ok {
		return b
	}
	b := fieldBehavior(fd)
	if m.behaviors == nil {
		m.behaviors = map[protoreflect.FieldDescriptor]behavior{}
	}
	m.behaviors[fd] = b
	return b
}

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
