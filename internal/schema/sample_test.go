package schema

import (
	"encoding/json"

	validatepb "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"fmt"
	"google.golang.org/genproto/googleapis/api/annotations"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// filler populates messages with random values chosen to hit protojson's
// edge cases: extreme and negative integers, NaN and infinities, unusual
// strings, maps with integer and bool keys, recursion, Any of resolvable types.
type filler struct {
	r *rand.Rand
	// unknownEnums lets open enums take numbers with no name, which protojson
	// writes as integers. Input schemas only list known numbers, so only
	// output checks use it.
	unknownEnums bool
}

func (f *filler) fill(m protoreflect.Message, depth int) {
	md := m.Descriptor()
	switch md.FullName() {
	case "google.protobuf.Timestamp":
		const minTs, maxTs = -62135596800, 253402300799 // 0001-01-01 .. 9999-12-31
		secs := []int64{minTs, maxTs, 0, -1, f.r.Int64N(maxTs)}[f.r.IntN(5)]
		m.Set(md.Fields().ByName("seconds"), protoreflect.ValueOfInt64(secs))
		m.Set(md.Fields().ByName("nanos"), protoreflect.ValueOfInt32([]int32{0, 1, 999_999_999, 500_000_000, 123_000}[f.r.IntN(5)]))
		return
	case "google.protobuf.Duration":
		const maxDur = 315_576_000_000
		secs := []int64{0, 1, -1, maxDur, -maxDur, f.r.Int64N(maxDur)}[f.r.IntN(6)]
		nanos := []int32{0, 1, 999_999_999, 5_000_000}[f.r.IntN(4)]
		if secs < 0 || (secs == 0 && f.r.IntN(2) == 0) {
			nanos = -nanos
		}
		m.Set(md.Fields().ByName("seconds"), protoreflect.ValueOfInt64(secs))
		m.Set(md.Fields().ByName("nanos"), protoreflect.ValueOfInt32(nanos))
		return
	case "google.protobuf.FieldMask":
		l := m.Mutable(md.Fields().ByName("paths")).List()
		for range f.r.IntN(4) {
			l.Append(protoreflect.ValueOfString([]string{"a", "foo_bar", "foo.bar_baz", "x.y.z", "abc123"}[f.r.IntN(5)]))
		}
		return
	case "google.protobuf.Value":
		f.fillValue(m, depth)
		return
	case "google.protobuf.Any":
		f.fillAny(m, depth)
		return
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			continue // handled below, one member per oneof
		}
		fb := fieldBehavior(fd)
		if fb.has(annotations.FieldBehavior_OUTPUT_ONLY) {
			continue // input schemas leave it out, and samples must fit both
		}
		r := fieldRules(fd)
		must := fd.Cardinality() == protoreflect.Required || fb.has(annotations.FieldBehavior_REQUIRED) || r.GetRequired() ||
			r.GetRepeated().GetMinItems() > 0 || r.GetString().GetMinLen() > 0
		if !must && f.r.IntN(4) == 0 {
			continue
		}
		if fd.Message() != nil && depth <= 0 && !must {
			continue
		}
		// A required proto3 scalar must not be its zero value, which
		// protojson leaves out.
		for try := 0; try == 0 || (must && !m.Has(fd) && try < 20); try++ {
			f.setField(m, fd, depth)
		}
	}
	oneofs := md.Oneofs()
	for i := range oneofs.Len() {
		od := oneofs.Get(i)
		if od.IsSynthetic() || (f.r.IntN(4) == 0 && !oneofRules(od).GetRequired()) {
			continue
		}
		fd := od.Fields().Get(f.r.IntN(od.Fields().Len()))
		if fd.Message() != nil && depth <= 0 {
			continue
		}
		f.setField(m, fd, depth)
	}
	// (buf.validate.message).oneof: keep only the first member set.
	for _, o := range messageRules(md).GetOneof() {
		set := false
		for _, name := range o.GetFields() {
			fd := fields.ByName(protoreflect.Name(name))
			if fd != nil && m.Has(fd) {
				if set {
					m.Clear(fd)
				}
				set = true
			}
		}
	}
}

// examples returns the example values of rule set r, which the test protos
// give for every constrained scalar so samples satisfy their rules.
func examples(r *validatepb.FieldRules) protoreflect.List {
	if r == nil {
		return nil
	}
	tr := typeRules(r)
	if tr == nil {
		return nil
	}
	fd := tr.Descriptor().Fields().ByName("example")
	if fd == nil || tr.Get(fd).List().Len() == 0 {
		return nil
	}
	return tr.Get(fd).List()
}

// one sets a single value of fd (a field, list item or map value) into
// target, honouring the rules r for that value.
func (f *filler) one(fd protoreflect.FieldDescriptor, r *validatepb.FieldRules, newMsg func() protoreflect.Message, depth int) protoreflect.Value {
	if fd.Message() != nil {
		inner := newMsg()
		if ex := examples(r); ex != nil {
			b, err := proto.Marshal(ex.Get(f.r.IntN(ex.Len())).Message().Interface())
			if err != nil {
				panic(err)
			}
			if err := proto.Unmarshal(b, inner.Interface()); err != nil {
				panic(err)
			}
		} else if urls := r.GetAny().GetIn(); len(urls) > 0 && inner.Descriptor().FullName() == "google.protobuf.Any" {
			f.fillAnyOf(inner, depth, urls)
		} else {
			f.fill(inner, depth-1)
		}
		return protoreflect.ValueOfMessage(inner)
	}
	if ex := examples(r); ex != nil {
		v := ex.Get(f.r.IntN(ex.Len()))
		if fd.Enum() != nil {
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(v.Int()))
		}
		return v
	}
	return f.scalar(fd)
}

func (f *filler) setField(m protoreflect.Message, fd protoreflect.FieldDescriptor, depth int) {
	r := fieldRules(fd)
	switch {
	case fd.IsMap():
		mp := m.Mutable(fd).Map()
		n := 1 + f.r.IntN(3)
		if mr := r.GetMap(); mr.HasMaxPairs() {
			n = min(n, int(mr.GetMaxPairs()))
		}
		for range n {
			k := f.one(fd.MapKey(), r.GetMap().GetKeys(), nil, depth).MapKey()
			mp.Set(k, f.one(fd.MapValue(), r.GetMap().GetValues(), func() protoreflect.Message { return mp.NewValue().Message() }, depth))
		}
	case fd.IsList():
		l := m.Mutable(fd).List()
		rr := r.GetRepeated()
		n := 1 + f.r.IntN(3)
		if rr.HasMaxItems() {
			n = min(n, int(rr.GetMaxItems()))
		}
		seen := map[any]bool{}
		for range n {
			v := f.one(fd, rr.GetItems(), func() protoreflect.Message { return l.NewElement().Message() }, depth)
			if rr.GetUnique() {
				if seen[v.Interface()] {
					continue
				}
				seen[v.Interface()] = true
			}
			l.Append(v)
		}
	case fd.Message() != nil:
		m.Set(fd, f.one(fd, r, func() protoreflect.Message { return m.NewField(fd).Message() }, depth))
	default:
		m.Set(fd, f.one(fd, r, nil, depth))
	}
}

func (f *filler) scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	pick := func(n int) int { return f.r.IntN(n) }
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(pick(2) == 0)
	case protoreflect.StringKind:
		return protoreflect.ValueOfString([]string{"", "plain", `quote " and \ backslash`, "ünïcødé ✓ 😀", "line\nbreak\ttab", "<html>&amp;</html>", "\u2028"}[pick(7)])
	case protoreflect.BytesKind:
		b := make([]byte, pick(8))
		for i := range b {
			b[i] = byte(f.r.IntN(256))
		}
		return protoreflect.ValueOfBytes(b)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32([]int32{math.MinInt32, math.MaxInt32, -1, 0, f.r.Int32()}[pick(5)])
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32([]uint32{0, math.MaxUint32, 1, f.r.Uint32()}[pick(4)])
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64([]int64{math.MinInt64, math.MaxInt64, -1, 0, -f.r.Int64(), 1 << 53}[pick(6)])
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64([]uint64{0, math.MaxUint64, 1 << 63, f.r.Uint64()}[pick(4)])
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32([]float32{float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1)),
			math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, 0.1, -0, f.r.Float32()}[pick(9)])
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64([]float64{math.NaN(), math.Inf(1), math.Inf(-1),
			math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, 1e-300, 0.1, f.r.NormFloat64()}[pick(9)])
	case protoreflect.EnumKind:
		ed := fd.Enum()
		if ed.FullName() == "google.protobuf.NullValue" {
			return protoreflect.ValueOfEnum(0)
		}
		if f.unknownEnums && !ed.IsClosed() && pick(3) == 0 {
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber([]int32{99, -7, math.MaxInt32, math.MinInt32}[pick(4)]))
		}
		return protoreflect.ValueOfEnum(ed.Values().Get(pick(ed.Values().Len())).Number())
	}
	panic(fmt.Sprintf("unhandled kind %v", fd.Kind()))
}

// fillValue builds a google.protobuf.Value tree; JSON numbers must be finite.
func (f *filler) fillValue(m protoreflect.Message, depth int) {
	md := m.Descriptor()
	fields := md.Fields()
	n := 4
	if depth > 0 {
		n = 6
	}
	switch f.r.IntN(n) {
	case 0:
		m.Set(fields.ByName("null_value"), protoreflect.ValueOfEnum(0))
	case 1:
		m.Set(fields.ByName("number_value"), protoreflect.ValueOfFloat64([]float64{0, -1.5, 1e300, math.MaxFloat64}[f.r.IntN(4)]))
	case 2:
		m.Set(fields.ByName("string_value"), protoreflect.ValueOfString("s"))
	case 3:
		m.Set(fields.ByName("bool_value"), protoreflect.ValueOfBool(true))
	case 4:
		s := m.Mutable(fields.ByName("struct_value")).Message()
		sf := s.Descriptor().Fields().ByName("fields")
		mp := s.Mutable(sf).Map()
		for i := range f.r.IntN(3) {
			v := mp.NewValue()
			f.fillValue(v.Message(), depth-1)
			mp.Set(protoreflect.ValueOfString(fmt.Sprintf("k%d", i)).MapKey(), v)
		}
	case 5:
		lv := m.Mutable(fields.ByName("list_value")).Message()
		l := lv.Mutable(lv.Descriptor().Fields().ByName("values")).List()
		for range f.r.IntN(3) {
			v := l.NewElement()
			f.fillValue(v.Message(), depth-1)
			l.Append(v)
		}
	}
}

// anyTargets are the types an Any may hold in samples: an ordinary message,
// a recursive one, and well-known types protojson writes with "value".
var anyTargets = []protoreflect.FullName{
	"schematest.v1.Leaf", "schematest.v1.Scalars", "schematest.v1.Node",
	"google.protobuf.Timestamp", "google.protobuf.Value", "google.protobuf.Int64Value", "google.protobuf.Empty",
}

func (f *filler) fillAny(m protoreflect.Message, depth int) {
	f.fillAnyOf(m, depth, nil)
}

// fillAnyOf fills an Any with one of the types urls names (that resolve),
// or with any of anyTargets when urls is empty.
func (f *filler) fillAnyOf(m protoreflect.Message, depth int, urls []string) {
	name := anyTargets[f.r.IntN(len(anyTargets))]
	var ok []protoreflect.FullName
	for _, u := range urls {
		if mt, err := testTypes.FindMessageByURL(u); err == nil {
			ok = append(ok, mt.Descriptor().FullName())
		}
	}
	if len(ok) > 0 {
		name = ok[f.r.IntN(len(ok))]
	}
	mt, err := testTypes.FindMessageByName(name)
	if err != nil {
		panic(err)
	}
	inner := mt.New()
	f.fill(inner, depth-1)
	b, err := proto.MarshalOptions{Deterministic: true}.Marshal(inner.Interface())
	if err != nil {
		panic(err)
	}
	m.Set(m.Descriptor().Fields().ByName("type_url"), protoreflect.ValueOfString("type.googleapis.com/"+string(name)))
	m.Set(m.Descriptor().Fields().ByName("value"), protoreflect.ValueOfBytes(b))
}

// wrapIfNeeded applies the gateway's wrapping of non-object JSON.
func wrapIfNeeded(md protoreflect.MessageDescriptor, b []byte) []byte {
	if IsObject(md) {
		return b
	}
	out, _ := json.Marshal(map[string]json.RawMessage{WrapperProperty: b})
	return out
}

func unwrapIfNeeded(md protoreflect.MessageDescriptor, b []byte) ([]byte, error) {
	if IsObject(md) {
		return b, nil
	}
	var w map[string]json.RawMessage
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, err
	}
	return w[WrapperProperty], nil
}

// TestSamplesValidate is a property test: for random populated messages of
// every test type, protojson's output validates against the Output schema,
// the same JSON validates against the Input schema, and protojson reads it
// back to an equal message.
func TestSamplesValidate(t *testing.T) {
	t.Parallel()
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			opts := Options{}
			if c.opts != nil {
				opts = *c.opts
			}
			in := compile(t, mustBuild(t, c.md, &opts, "input"))
			out := compile(t, mustBuild(t, c.md, &opts, "output"))
			mo := protojson.MarshalOptions{Resolver: testTypes, UseProtoNames: opts.UseProtoNames}
			uo := protojson.UnmarshalOptions{Resolver: testTypes}
			for seed := range uint64(60) {
				f := &filler{r: rand.New(rand.NewPCG(seed, 7))}
				m := dynamicpb.NewMessage(c.md)
				f.fill(m, 3)
				b, err := mo.Marshal(m)
				if err != nil {
					t.Fatalf("seed %d: protojson.Marshal: %v", seed, err)
				}
				doc := wrapIfNeeded(c.md, b)
				if err := validate(out, doc); err != nil {
					t.Fatalf("seed %d: output schema rejects protojson output:\n%s\n%v", seed, doc, err)
				}
				if err := validate(in, doc); err != nil {
					t.Fatalf("seed %d: input schema rejects protojson output:\n%s\n%v", seed, doc, err)
				}
				raw, err := unwrapIfNeeded(c.md, doc)
				if err != nil {
					t.Fatal(err)
				}
				back := dynamicpb.NewMessage(c.md)
				if err := uo.Unmarshal(raw, back); err != nil {
					t.Fatalf("seed %d: protojson.Unmarshal of its own output: %v\n%s", seed, err, raw)
				}
				if !proto.Equal(m, back) {
					t.Fatalf("seed %d: round trip changed the message:\n%s", seed, raw)
				}
			}
			// Open enums may hold numbers without a name; protojson writes
			// them as integers and the output schema must still accept them.
			for seed := range uint64(30) {
				f := &filler{r: rand.New(rand.NewPCG(seed, 8)), unknownEnums: true}
				m := dynamicpb.NewMessage(c.md)
				f.fill(m, 3)
				b, err := mo.Marshal(m)
				if err != nil {
					t.Fatalf("seed %d: protojson.Marshal: %v", seed, err)
				}
				if err := validate(out, wrapIfNeeded(c.md, b)); err != nil {
					t.Fatalf("seed %d: output schema rejects protojson output:\n%s\n%v", seed, b, err)
				}
			}
		})
	}
}

// TestExtensionsInOutput: a set extension is written as "[full.name]", which
// the output schema of an extendable message accepts.
func TestExtensionsInOutput(t *testing.T) {
	t.Parallel()
	md := testMessage(t, "schematest.v1.Legacy")
	m := dynamicpb.NewMessage(md)
	if err := (protojson.UnmarshalOptions{Resolver: testTypes}).Unmarshal([]byte(`{"id":"x","inner":{"x":1},"[schematest.v1.tag]":"hello"}`), m); err != nil {
		t.Fatal(err)
	}
	b, err := protojson.MarshalOptions{Resolver: testTypes}.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "[schematest.v1.tag]") {
		t.Fatalf("extension not written: %s", b)
	}
	if err := validate(compile(t, mustBuild(t, md, nil, "output")), b); err != nil {
		t.Errorf("output schema rejects an extension: %v\n%s", err, b)
	}
}
