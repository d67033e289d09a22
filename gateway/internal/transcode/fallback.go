package transcode

import (
	"bytes"
	"encoding/json"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/anypb"

	"github.com/grpc-mcp-gateway/gateway/internal/wellknown"
)

// anyValue renders a google.protobuf.Any: the payload is decoded with the
// plan of the type its URL resolves to, preceded by "@type", or nested under
// "value" when that type has a special JSON mapping itself.
func (st *state) anyValue(dst []byte, p *plan, base int) ([]byte, error) {
	url, val := st.bytesOf(p, base, p.w1), st.bytesOf(p, base, p.w2)
	if len(url) == 0 {
		if len(val) == 0 {
			return append(dst, '{', '}'), nil
		}
		return dst, fmt.Errorf("google.protobuf.Any: type_url is not set")
	}
	mt, err := st.sh.resolver.FindMessageByURL(string(url))
	if err != nil {
		return dst, fmt.Errorf("google.protobuf.Any: unable to resolve %q: %w", url, err)
	}
	ap, err := st.sh.anyPlan(mt)
	if err != nil {
		return dst, err
	}
	if ap.viaProtojson {
		return st.anyViaProtojson(dst, url, val)
	}
	// The payload is decoded by protojson with a fresh proto.Unmarshal that
	// allows partial messages and resolves extensions with the protojson
	// resolver; mirror that for the nested decode.
	saved, savedRes := st.checkRequired, st.extResolver
	st.checkRequired, st.extResolver = false, st.sh.resolver
	defer func() { st.checkRequired, st.extResolver = saved, savedRes }()
	head := st.slots[base+int(p.w2)].head
	if ap.plan.wkt == wellknown.None {
		return st.message(dst, ap.plan, head, true, 1, url)
	}
	dst = append(dst, `{"@type":`...)
	if dst, err = appendString(dst, url); err != nil {
		return dst, fmt.Errorf("google.protobuf.Any type_url: %w", err)
	}
	dst = append(dst, `,"value":`...)
	if dst, err = st.message(dst, ap.plan, head, true, 1, nil); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// anyPlan is the cached compilation of a type met inside an Any.
type anyPlan struct {
	plan *plan
	// viaProtojson routes the whole Any through protojson. It is set when the
	// payload type is decoded by protobuf's generated fast path and reaches a
	// closed enum (whose unknown values that path moves to unknown fields,
	// unlike dynamicpb) or a message handled by the dynamicpb fallback.
	viaProtojson bool
}

func (sh *shared) anyPlan(mt protoreflect.MessageType) (*anyPlan, error) {
	md := mt.Descriptor()
	if v, ok := sh.anyPlans.Load(md); ok {
		return v.(*anyPlan), nil
	}
	p, err := sh.compile(md)
	if err != nil {
		return nil, err
	}
	fast := mt.New().ProtoMethods() != nil
	ap := &anyPlan{plan: p, viaProtojson: p.fallback || fast && (p.closedEnums || p.anyFallback)}
	v, _ := sh.anyPlans.LoadOrStore(md, ap)
	return v.(*anyPlan), nil
}

func (st *state) anyViaProtojson(dst, url, val []byte) ([]byte, error) {
	a := &anypb.Any{TypeUrl: string(url), Value: val}
	out, err := protojson.MarshalOptions{
		AllowPartial:  true,
		UseProtoNames: st.sh.useProtoNames,
		Resolver:      st.sh.resolver,
	}.Marshal(a)
	if err != nil {
		return dst, err
	}
	return compactAppend(dst, out)
}

// fallback decodes the message formed by the occurrences at head with
// dynamicpb and, if emit is set, renders it with protojson. The options
// reproduce the decoding the whole message would have received: the same
// remaining recursion budget, extension resolver and required-field check.
func (st *state) fallback(dst []byte, p *plan, head int32, one bool, depth int, emit bool) ([]byte, error) {
	var buf []byte
	switch {
	case head == 0:
	case one || st.occs[head-1].next == 0:
		buf = st.wire[st.occs[head-1].start:st.occs[head-1].end]
	default:
		st.scratch = st.scratch[:0]
		for o := head; o != 0; o = st.occs[o-1].next {
			st.scratch = append(st.scratch, st.wire[st.occs[o-1].start:st.occs[o-1].end]...)
		}
		buf = st.scratch
	}
	m := dynamicpb.NewMessage(p.md)
	err := proto.UnmarshalOptions{
		AllowPartial:   true,
		Resolver:       st.extResolver,
		RecursionLimit: maxDepth - depth + 1,
	}.Unmarshal(buf, m)
	if err != nil {
		return dst, fmt.Errorf("%s: %w", p.md.FullName(), err)
	}
	if !emit {
		return dst, nil
	}
	if st.checkRequired {
		if err := proto.CheckInitialized(m); err != nil {
			return dst, err
		}
	}
	out, err := protojson.MarshalOptions{
		AllowPartial:  true,
		UseProtoNames: st.sh.useProtoNames,
		Resolver:      st.sh.resolver,
	}.Marshal(m)
	if err != nil {
		return dst, err
	}
	return compactAppend(dst, out)
}

// compactAppend removes protojson's deliberately random whitespace so that
// fallback output looks like the rest.
func compactAppend(dst, js []byte) ([]byte, error) {
	buf := bytes.NewBuffer(dst)
	if err := json.Compact(buf, js); err != nil {
		return dst, err
	}
	return buf.Bytes(), nil
}
