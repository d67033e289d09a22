package schema

import (
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/reflect/protoreflect"
)

// Bounded schemas.
//
// A client puts a tool's schemas into a model's context whole, and a deep
// or wide message written out in full can take megabytes (a Google Cloud
// request that reaches half of its API). InputWithin and OutputWithin write
// the schema Input and Output write when it fits in Bound.MaxBytes, byte
// for byte; otherwise they shorten it, deterministically, in this order:
//
//  1. Depth: the messages a value can reach are ranked breadth first from
//     the root (fields in declaration order); the first k are written out
//     and every other one is an escape, an object schema that accepts any
//     members and whose description names the resource holding the
//     message's definition. k is the largest found that fits (an
//     exponential then binary search; the size grows with k in practice,
//     so the search finds the largest or one close to it). Each try
//     builds the schema again, at a cost that grows with what it
//     expands: a dozen builds for the largest messages, at discovery.
//  2. Breadth: when the root alone is too large, it lists as many of its
//     fields as fit, in declaration order (required ones always; a binary
//     search), and says how many more there are and where to read them;
//     the object then admits any other member.
//  3. Last: the root is an escape itself.
//
// Every shortening only widens what the schema accepts: an escape or a
// message with fields left out admits any members, which the gateway's
// Validator (built from the descriptors, never from the schema) checks as
// before. So arguments valid for the message stay valid for the schema,
// and a response still conforms to a bounded output schema. The bounded
// schema's root description says that it is shortened.

// Bound limits the size of a schema built by InputWithin or OutputWithin.
type Bound struct {
	// MaxBytes is the most bytes the encoded schema may take; 0 or less
	// means no limit. A limit under a few hundred bytes cannot be kept:
	// the smallest schema (an escape for the root) is returned then.
	MaxBytes int
	// Resource returns the URI of a resource that holds md's definition
	// in full (the gateway's grpc://BACKEND/full.Name), which escapes
	// name; nil, or an empty URI, names the message alone.
	Resource func(md protoreflect.MessageDescriptor) string
	// WholeRoot keeps every field of the root listed: depth alone bounds
	// the schema, and when the root with its fields alone does not fit,
	// the result is over MaxBytes and the caller decides. The gateway's
	// output schemas need it: what it adds to a response's root (the
	// result budget's list of cuts, an operation's handle) is named after
	// the root's fields.
	WholeRoot bool
	// WholeBytes, when above 0, is the size of the whole schema (Input's
	// or Output's for the message), which the caller has built already: a
	// bounded build then does not write a large schema again to learn
	// that it does not fit. A wrong size voids the promise that a schema
	// within MaxBytes is returned whole.
	WholeBytes int
}

// InputWithin is Input within b.MaxBytes bytes (see "Bounded schemas").
func InputWithin(md protoreflect.MessageDescriptor, opts *Options, b Bound) (json.RawMessage, error) {
	return buildWithin(md, opts, input, b)
}

// OutputWithin is Output within b.MaxBytes bytes (see "Bounded schemas").
func OutputWithin(md protoreflect.MessageDescriptor, opts *Options, b Bound) (json.RawMessage, error) {
	return buildWithin(md, opts, output, b)
}

// OutputRoot is Output written one level deep: the root's members are
// those of Output(md, opts), every one of them listed, with the same
// required list and additionalProperties, while the messages below the
// root are named instead of described. It is what a reader of the root
// alone needs (ReadTruncation, a long-running tool's handle) at a
// fraction of the cost, so that discovery can decide those before, or
// without, writing the whole schema.
func OutputRoot(md protoreflect.MessageDescriptor, opts *Options) (json.RawMessage, error) {
	return build(md, opts, output, &limits{expand: map[protoreflect.FullName]bool{md.FullName(): true}, fields: -1})
}

// BoundedNote ends the root description of every shortened schema.
const BoundedNote = "This schema is shortened to keep the tool small: where an object's fields are not all listed, its description names the resource holding the message's definition, any members are accepted there, and the gateway checks them against the message."

// limits are what a bounded build leaves out.
type limits struct {
	// expand holds the messages written out; any other is an escape.
	expand map[protoreflect.FullName]bool
	// fields is how many fields a message lists beyond its required ones;
	// -1 lists them all.
	fields   int
	resource func(protoreflect.MessageDescriptor) string
	escapes  map[protoreflect.FullName]*node
}

func (l *limits) see(md protoreflect.MessageDescriptor) string {
	if l.resource != nil {
		if uri := l.resource(md); uri != "" {
			return "see resource " + uri
		}
	}
	return "see the message " + string(md.FullName())
}

// escape is the schema of a message that is not written out.
func (l *limits) escape(md protoreflect.MessageDescriptor) *node {
	if n, ok := l.escapes[md.FullName()]; ok {
		return n
	}
	n := obj("type", "object", "description", fmt.Sprintf("A %s; its fields are not listed here: %s.", md.FullName(), l.see(md)))
	if l.escapes == nil {
		l.escapes = map[protoreflect.FullName]*node{}
	}
	l.escapes[md.FullName()] = n
	return n
}

// more notes the fields a message does not list.
func (l *limits) more(md protoreflect.MessageDescriptor, left int) string {
	return fmt.Sprintf("%d more fields are not listed here: %s.", left, l.see(md))
}

func (l *limits) note() string { return BoundedNote }

// expanded reports whether md is written out rather than escaped.
func (b *builder) expanded(md protoreflect.MessageDescriptor) bool {
	return b.lim == nil || b.lim.expand == nil || b.lim.expand[md.FullName()]
}

// keep is expanded for the graph analyses, nil when nothing is escaped.
func (b *builder) keep() func(protoreflect.MessageDescriptor) bool {
	if b.lim == nil || b.lim.expand == nil {
		return nil
	}
	return b.expanded
}

// bisect finds the largest n in (lo, hi) for which fit's schema fits,
// given that lo's does (best is its schema; lo may be -1, none) and hi's
// does not. It returns that schema and n, or best and lo when none
// between fits.
func bisect(lo, hi int, best json.RawMessage, fit func(n int) (json.RawMessage, bool, error)) (json.RawMessage, int, error) {
	for hi-lo > 1 {
		mid := lo + (hi-lo)/2
		s, ok, err := fit(mid)
		if err != nil {
			return nil, lo, err
		}
		if ok {
			best, lo = s, mid
		} else {
			hi = mid
		}
	}
	return best, lo, nil
}

func buildWithin(md protoreflect.MessageDescriptor, opts *Options, dir direction, bd Bound) (json.RawMessage, error) {
	if bd.MaxBytes <= 0 {
		return build(md, opts, dir, nil)
	}
	opts = withMemo(opts) // every try reads the same descriptors
	order := expansionOrder(md, opts, dir)
	// The whole schema when it fits; a caller that knows its size spares
	// writing a large one again to learn that it does not.
	if bd.WholeBytes <= 0 || bd.WholeBytes <= bd.MaxBytes {
		if s, fits, err := buildCapped(md, opts, dir, nil, bd.MaxBytes); err != nil || fits {
			return s, err
		}
	}
	try := func(k, fields int) (json.RawMessage, bool, error) {
		lim := &limits{expand: make(map[protoreflect.FullName]bool, k), fields: fields, resource: bd.Resource}
		for _, m := range order[:k] {
			lim.expand[m.FullName()] = true
		}
		if bd.WholeRoot && k == 1 {
			// The smallest try: its bytes are returned even when over.
			s, err := build(md, opts, dir, lim)
			return s, err == nil && len(s) <= bd.MaxBytes, err
		}
		return buildCapped(md, opts, dir, lim, bd.MaxBytes)
	}
	// Depth: the largest k that fits. order[:len(order)] is the whole
	// schema with the note, which does not fit either.
	best, ok, err := try(1, -1)
	if err != nil {
		return nil, err
	}
	if ok {
		lo, hi := 1, len(order)
		for k := 2; k < hi; k *= 2 {
			s, ok, err := try(k, -1)
			if err != nil {
				return nil, err
			}
			if !ok {
				hi = k
				break
			}
			best, lo = s, k
		}
		best, _, err = bisect(lo, hi, best, func(k int) (json.RawMessage, bool, error) { return try(k, -1) })
		return best, err
	}
	if bd.WholeRoot {
		return best, nil
	}
	// Breadth: the root alone is too large; the most fields that fit.
	best, lo, err := bisect(-1, md.Fields().Len(), best, func(n int) (json.RawMessage, bool, error) { return try(1, n) })
	if err != nil || lo >= 0 {
		return best, err
	}
	lim := &limits{resource: bd.Resource}
	root := lim.escape(md).with("description", joinDesc([]string{str(lim.escape(md), "description"), BoundedNote}))
	return json.RawMessage(root.appendJSON(nil)), nil
}

// expansionOrder lists the messages a schema of root writes out, breadth
// first from root, each once, fields in declaration order.
func expansionOrder(root protoreflect.MessageDescriptor, opts *Options, dir direction) []protoreflect.MessageDescriptor {
	b := &builder{dir: dir, opts: *opts}
	order := []protoreflect.MessageDescriptor{root}
	seen := map[protoreflect.FullName]bool{root.FullName(): true}
	for i := 0; i < len(order); i++ {
		for _, m := range b.shownEdges(order[i]) {
			if !seen[m.FullName()] {
				seen[m.FullName()] = true
				order = append(order, m)
			}
		}
	}
	return order
}

// str is n's string member k, "" when it has none.
func str(n *node, k string) string {
	v, _ := n.get(k)
	s, _ := v.(string)
	return s
}
