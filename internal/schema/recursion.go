package schema

import (
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/internal/wellknown"
)

// recursiveMessages returns the messages reachable from root that can reach
// themselves: exactly those that need a $defs entry. It runs Tarjan's
// strongly-connected-components algorithm, linear in the number of fields
// reachable from root. Well-known types are leaves: their JSON forms are
// finite even though Struct and Value are recursive in proto.
//
// edges lists the messages a value of a message contains (messageEdges,
// with the resolvable types of an Any that input schemas describe). keep,
// when not nil, leaves out the messages a bounded schema does not expand.
func recursiveMessages(root protoreflect.MessageDescriptor, edges func(protoreflect.MessageDescriptor) []protoreflect.MessageDescriptor, keep func(protoreflect.MessageDescriptor) bool) map[protoreflect.FullName]bool {
	t := &tarjan{
		index:     map[protoreflect.FullName]int{},
		low:       map[protoreflect.FullName]int{},
		onStack:   map[protoreflect.FullName]bool{},
		recursive: map[protoreflect.FullName]bool{},
		edges:     edges,
		keep:      keep,
	}
	t.visit(root)
	return t.recursive
}

type tarjan struct {
	next      int
	index     map[protoreflect.FullName]int
	low       map[protoreflect.FullName]int
	stack     []protoreflect.FullName
	onStack   map[protoreflect.FullName]bool
	recursive map[protoreflect.FullName]bool
	edges     func(protoreflect.MessageDescriptor) []protoreflect.MessageDescriptor
	keep      func(protoreflect.MessageDescriptor) bool
}

// messageEdges lists the messages a value of md contains directly, once
// per referring field, looking through map entries (which never appear in
// a schema themselves); extra's Any candidates count as references too.
// Fields skip reports are left out; extra and skip may be nil.
func messageEdges(md protoreflect.MessageDescriptor, extra func(protoreflect.FieldDescriptor) []protoreflect.MessageDescriptor, skip func(protoreflect.FieldDescriptor) bool) []protoreflect.MessageDescriptor {
	var out []protoreflect.MessageDescriptor
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if skip != nil && skip(fd) {
			continue
		}
		if extra != nil {
			for _, m := range extra(fd) {
				if wellknown.Of(m) == wellknown.None {
					out = append(out, m)
				}
			}
		}
		if fd.IsMap() {
			fd = fd.MapValue()
		}
		if fd.Kind() != protoreflect.MessageKind && fd.Kind() != protoreflect.GroupKind {
			continue
		}
		if m := fd.Message(); !m.IsPlaceholder() && wellknown.Of(m) == wellknown.None {
			out = append(out, m)
		}
	}
	return out
}

func (t *tarjan) visit(md protoreflect.MessageDescriptor) {
	v := md.FullName()
	t.index[v] = t.next
	t.low[v] = t.next
	t.next++
	t.stack = append(t.stack, v)
	t.onStack[v] = true
	for _, m := range t.edges(md) {
		if t.keep != nil && !t.keep(m) {
			continue
		}
		w := m.FullName()
		if w == v {
			t.recursive[v] = true
		}
		if _, seen := t.index[w]; !seen {
			t.visit(m)
			t.low[v] = min(t.low[v], t.low[w])
		} else if t.onStack[w] {
			t.low[v] = min(t.low[v], t.index[w])
		}
	}
	if t.low[v] != t.index[v] {
		return
	}
	// v is the root of a component; pop it. A component of more than one
	// message is a cycle, so all its members are recursive.
	i := len(t.stack) - 1
	for t.stack[i] != v {
		i--
	}
	component := t.stack[i:]
	if len(component) > 1 {
		for _, w := range component {
			t.recursive[w] = true
		}
	}
	for _, w := range component {
		t.onStack[w] = false
	}
	t.stack = t.stack[:i]
}
