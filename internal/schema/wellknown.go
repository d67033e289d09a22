package schema

import (
	"fmt"
	"strings"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/internal/wellknown"
)

const (
	// durationPattern is what protojson writes for a Duration; its parser also
	// takes a leading "+" and a missing integer part, which are left out.
	durationPattern = `^-?(0|[1-9][0-9]*)(\.[0-9]{1,9})?s$`
	// fieldMaskInput: protojson rejects any "_" in an input path and needs
	// each dotted segment to snake_case into a proto identifier.
	fieldMaskPath  = `[A-Za-z][A-Za-z0-9]*(\.[A-Za-z][A-Za-z0-9]*)*`
	fieldMaskInput = `^(` + fieldMaskPath + `(,` + fieldMaskPath + `)*)?$`
	// fieldMaskOutput: protojson keeps an underscore the lowerCamel conversion
	// cannot remove (before a digit, a leading one), so output may contain "_".
	fieldMaskOutPath = `[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*`
	fieldMaskOutput  = `^(` + fieldMaskOutPath + `(,` + fieldMaskOutPath + `)*)?$`
	anyDescription   = `A google.protobuf.Any: "@type" is the type URL ("type.googleapis.com/" followed by the full message name); the other members are that message's fields in JSON, or "value" for a type that is not a JSON object.`
)

// anyJSON accepts every JSON value. It spells out the type array rather than
// using the empty schema because several LLM APIs require "type" everywhere.
func anyJSON() *node {
	return obj("type", []string{"null", "boolean", "number", "string", "array", "object"})
}

// wellKnown is the schema of md, a well-known type of kind k (classified by
// internal/wellknown, which transcode uses too, so the schema describes what
// the gateway writes).
func (b *builder) wellKnown(k wellknown.Kind, md protoreflect.MessageDescriptor) *node {
	switch k {
	case wellknown.Any:
		// "@type" is required but cannot be listed under properties: LLM APIs
		// reject property names outside [a-zA-Z0-9_.-]. The embedded type's
		// fields are inlined, hence additionalProperties.
		return obj("type", "object", "description", anyDescription,
			"required", []string{"@type"}, "additionalProperties", true)
	case wellknown.Timestamp:
		return obj("type", "string", "format", "date-time")
	case wellknown.Duration:
		return obj("type", "string", "pattern", durationPattern)
	case wellknown.FieldMask:
		p := fieldMaskInput
		if b.dir == output {
			p = fieldMaskOutput
		}
		return obj("type", "string", "pattern", p)
	case wellknown.Struct:
		return obj("type", "object", "additionalProperties", anyJSON())
	case wellknown.Value:
		return anyJSON()
	case wellknown.ListValue:
		return obj("type", "array", "items", anyJSON())
	case wellknown.Wrapper:
		return b.scalar(md.Fields().ByName("value").Kind())
	}
	panic("schema: unhandled well-known type")
}

// anyCandidates lists the messages an Any-typed fd may hold according to its
// rules ((buf.validate.field).any.in, on the field, its items or its map
// values) that opts.Resolver can resolve. Input schemas describe them.
func (b *builder) anyCandidates(fd protoreflect.FieldDescriptor) []protoreflect.MessageDescriptor {
	v := fd
	if fd.IsMap() {
		v = fd.MapValue()
	}
	if b.opts.Resolver == nil || v.Message() == nil || wellknown.Of(v.Message()) != wellknown.Any {
		return nil
	}
	r := b.rules(fd)
	urls := r.GetAny().GetIn()
	if fd.IsList() {
		urls = r.GetRepeated().GetItems().GetAny().GetIn()
	} else if fd.IsMap() {
		urls = r.GetMap().GetValues().GetAny().GetIn()
	}
	_, mds := b.resolveAll(urls)
	return mds
}

func (b *builder) resolveAll(urls []string) ([]string, []protoreflect.MessageDescriptor) {
	var found []string
	var mds []protoreflect.MessageDescriptor
	if b.opts.Resolver == nil {
		return nil, nil
	}
	for _, u := range urls {
		mt, err := b.opts.Resolver.FindMessageByURL(u)
		if err != nil || mt.Descriptor().IsPlaceholder() {
			continue
		}
		found = append(found, u)
		mds = append(mds, mt.Descriptor())
	}
	return found, mds
}

// anyOf is the input schema of an Any restricted to the type URLs urls.
// One resolvable type is described structurally: its properties next to
// "@type" (additionalProperties stays true because "@type" cannot be listed
// under properties, see wellKnown). Several are described in words, since
// the alternatives would need oneOf. ok is false when nothing resolves and
// the generic Any shape applies.
func (b *builder) anyOf(urls []string) (n *node, ok bool, err error) {
	found, mds := b.resolveAll(urls)
	if len(found) == 0 {
		return nil, false, nil
	}
	if len(found) == 1 && (!IsObject(mds[0]) || wellknown.Of(mds[0]) == wellknown.None && !b.recursive[mds[0].FullName()]) {
		md := mds[0]
		inner, err := b.message(md)
		if err != nil {
			return nil, false, err
		}
		desc := fmt.Sprintf(`%s Here "@type" must be %q.`, anyDescription, found[0])
		required := []string{"@type"}
		var props any
		if !IsObject(md) {
			props = obj(WrapperProperty, inner)
			required = append(required, WrapperProperty)
		} else {
			props, _ = inner.get("properties")
			if r, ok := inner.get("required"); ok {
				required = append(required, r.([]string)...)
			}
			if d, ok := inner.get("description"); ok {
				desc += "\n\n" + d.(string)
			}
		}
		n = obj("type", "object", "description", desc)
		if props != nil {
			n.set("properties", props)
		}
		n.set("required", required)
		n.set("additionalProperties", true)
		return n, true, nil
	}
	alts := make([]string, len(found))
	for i, u := range found {
		alts[i] = fmt.Sprintf("%q (%s)", u, b.fieldSummary(mds[i]))
	}
	desc := fmt.Sprintf(`%s Here "@type" must be one of: %s.`, anyDescription, strings.Join(alts, "; "))
	return obj("type", "object", "description", desc, "required", []string{"@type"}, "additionalProperties", true), true, nil
}

// fieldSummary names a message's JSON members for a description.
func (b *builder) fieldSummary(md protoreflect.MessageDescriptor) string {
	if !IsObject(md) {
		return `its JSON value under "value"`
	}
	fields := md.Fields()
	if wellknown.Of(md) != wellknown.None || fields.Len() == 0 {
		return "no fields"
	}
	names := make([]string, fields.Len())
	for i := range names {
		names[i] = b.name(fields.Get(i))
	}
	return "fields " + strings.Join(names, ", ")
}
