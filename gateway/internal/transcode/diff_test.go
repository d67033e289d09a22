package transcode_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/transcode"
)

// differ compares AppendJSON with the pipeline it replaces:
// proto.Unmarshal into dynamicpb, then protojson.Marshal.
type differ struct {
	md      protoreflect.MessageDescriptor
	protoNm bool
	enc     *transcode.Encoder
}

var encoders sync.Map // differKey -> *differ

type differKey struct {
	md      protoreflect.FullName
	protoNm bool
}

func newDiffer(tb testing.TB, md protoreflect.MessageDescriptor, protoNames bool) *differ {
	tb.Helper()
	if d, ok := encoders.Load(differKey{md.FullName(), protoNames}); ok {
		return d.(*differ)
	}
	enc, err := transcode.Compile(md, &transcode.Options{UseProtoNames: protoNames, Resolver: resolver{schema().types}})
	if err != nil {
		tb.Fatalf("Compile(%s): %v", md.FullName(), err)
	}
	d := &differ{md: md, protoNm: protoNames, enc: enc}
	encoders.Store(differKey{md.FullName(), protoNames}, d)
	return d
}

// errReferencePanic marks inputs on which the reference pipeline panics.
// protobuf v1.36.12's reflective decoder (the one dynamicpb uses) panics on a
// map entry whose key appears once validly and then again with a mismatched
// wire type: it overwrites the decoded key with an invalid value. There is no
// reference output to compare with for such inputs; AppendJSON treats the
// mismatched occurrence as an unknown field, as the wire format specifies.
var errReferencePanic = errors.New("reference pipeline panicked")

// reference runs the pipeline AppendJSON replaces and returns compact JSON.
func (d *differ) reference(wire []byte) (out []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, errReferencePanic
		}
	}()
	m := dynamicpb.NewMessage(d.md)
	if err := proto.Unmarshal(wire, m); err != nil {
		return nil, err
	}
	js, err := protojson.MarshalOptions{UseProtoNames: d.protoNm, Resolver: resolver{schema().types}}.Marshal(m)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, js); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// check reports whether both sides agree on wire; ok is whether they
// succeeded.
func (d *differ) check(tb testing.TB, wire []byte) (ok bool) {
	tb.Helper()
	want, wantErr := d.reference(wire)
	prefix := []byte("prefix")
	got, gotErr := d.enc.AppendJSON(prefix, wire)
	if errors.Is(wantErr, errReferencePanic) {
		return gotErr == nil
	}
	if (wantErr == nil) != (gotErr == nil) {
		tb.Fatalf("%s: error mismatch on wire %x:\nprotojson: %v\ntranscode: %v\nwant %s\ngot  %s", d.md.FullName(), wire, wantErr, gotErr, want, got)
	}
	if !bytes.HasPrefix(got, prefix) {
		tb.Fatalf("AppendJSON dropped dst contents")
	}
	if wantErr != nil {
		if string(got) != "prefix" {
			tb.Fatalf("AppendJSON returned %q with error", got)
		}
		return false
	}
	got = got[len(prefix):]
	var compact bytes.Buffer
	if err := json.Compact(&compact, got); err != nil {
		tb.Fatalf("%s: invalid JSON %s: %v", d.md.FullName(), got, err)
	}
	if !bytes.Equal(compact.Bytes(), got) {
		tb.Fatalf("%s: output is not compact: %s", d.md.FullName(), got)
	}
	if !bytes.Equal(got, want) {
		tb.Fatalf("%s: mismatch on wire %x\nwant %s\ngot  %s", d.md.FullName(), wire, want, got)
	}
	return true
}

// filler builds random messages biased towards edge values.
type filler struct {
	r *rand.Rand
	// invalid allows values that make protojson fail (out-of-range
	// well-known types, NaN in Value, invalid UTF-8 in proto2 strings,
	// missing required fields), to exercise error agreement.
	invalid bool
}

var (
	edgeStrings = []string{"", "a", "hello world", "h\u00e9llo w\u00f6rld", "\x00\x01\x1f\x7f", "\u2028\u2029",
		"<>&'", `"\/`, "\u65e5\u672c\u8a9e", "\U0001F600", "\uFFFD", "tab\tnl\ncr\rbs\bff\f", strings.Repeat("x", 300)}
	edgeFloats = []float64{0, math.Copysign(0, -1), 1, -1, 0.1, 1e-7, 1e-6, 1e20, 1e21, 1e-300, 123456789.125,
		math.MaxFloat32, -math.MaxFloat32, math.SmallestNonzeroFloat32, math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.NaN(), math.Inf(1), math.Inf(-1)}
	edgeInts = []int64{0, 1, -1, 127, 128, -128, math.MaxInt32, math.MinInt32, math.MaxInt64, math.MinInt64, 1 << 53, -(1 << 53)}
)

func (g *filler) int() int64 {
	if g.r.IntN(2) == 0 {
		return edgeInts[g.r.IntN(len(edgeInts))]
	}
	return g.r.Int64() >> g.r.IntN(64)
}

func (g *filler) float() float64 {
	if g.r.IntN(2) == 0 {
		return edgeFloats[g.r.IntN(len(edgeFloats))]
	}
	return (g.r.Float64() - 0.5) * math.Pow(10, float64(g.r.IntN(60)-30))
}

func (g *filler) string(fd protoreflect.FieldDescriptor) string {
	if g.invalid && fd.Syntax() == protoreflect.Proto2 && g.r.IntN(40) == 0 {
		return "bad\xff"
	}
	if g.r.IntN(2) == 0 {
		return edgeStrings[g.r.IntN(len(edgeStrings))]
	}
	var b strings.Builder
	for range g.r.IntN(12) {
		b.WriteRune(rune(g.r.IntN(0x3000)))
	}
	return strings.ToValidUTF8(b.String(), "?")
}

func (g *filler) scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	switch fd.Kind() {
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(g.r.IntN(2) == 0)
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		if g.r.IntN(5) == 0 {
			return protoreflect.ValueOfEnum(protoreflect.EnumNumber(g.r.IntN(7) - 3)) // maybe unknown
		}
		return protoreflect.ValueOfEnum(vals.Get(g.r.IntN(vals.Len())).Number())
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(g.int()))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(g.int())
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(g.int()))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(g.int()))
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(g.float()))
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(g.float())
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(g.string(fd))
	case protoreflect.BytesKind:
		b := make([]byte, g.r.IntN(20))
		for i := range b {
			b[i] = byte(g.r.IntN(256))
		}
		return protoreflect.ValueOfBytes(b)
	}
	panic("unexpected kind " + fd.Kind().String())
}

// fill populates m randomly; depth bounds recursion.
func (g *filler) fill(m protoreflect.Message, depth int) {
	md := m.Descriptor()
	if g.wellKnown(m, depth) {
		return
	}
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if fd.Cardinality() == protoreflect.Required && !(g.invalid && g.r.IntN(30) == 0) {
			g.set(m, fd, depth)
			continue
		}
		if g.r.IntN(3) != 0 {
			continue
		}
		if fd.Message() != nil && depth <= 0 {
			continue
		}
		g.set(m, fd, depth)
	}
}

func (g *filler) set(m protoreflect.Message, fd protoreflect.FieldDescriptor, depth int) {
	switch {
	case fd.IsMap():
		mp := m.Mutable(fd).Map()
		for range g.r.IntN(4) {
			k := g.scalar(fd.MapKey()).MapKey()
			if fd.MapValue().Message() != nil {
				v := mp.NewValue()
				if depth > 0 {
					g.fill(v.Message(), depth-1)
				}
				mp.Set(k, v)
			} else {
				mp.Set(k, g.scalar(fd.MapValue()))
			}
		}
	case fd.IsList():
		l := m.Mutable(fd).List()
		for range g.r.IntN(4) {
			if fd.Message() != nil {
				v := l.NewElement()
				g.fill(v.Message(), depth-1)
				l.Append(v)
			} else {
				l.Append(g.scalar(fd))
			}
		}
	case fd.Message() != nil:
		g.fill(m.Mutable(fd).Message(), depth-1)
	default:
		m.Set(fd, g.scalar(fd))
	}
}

// wellKnown fills the well-known types with mostly valid values, since
// random field values would almost always be out of range.
func (g *filler) wellKnown(m protoreflect.Message, depth int) bool {
	md := m.Descriptor()
	fds := md.Fields()
	bad := g.invalid && g.r.IntN(25) == 0
	switch md.FullName() {
	case "google.protobuf.Timestamp":
		secs := g.r.Int64N(253402300799+62135596800) - 62135596800
		nanos := []int64{0, 1, 500000000, 123456000, 999999999, 1000, g.r.Int64N(1e9)}[g.r.IntN(7)]
		if bad {
			secs, nanos = []int64{-62135596801, 253402300800, 0}[g.r.IntN(3)], []int64{0, 0, -1, 1e9}[g.r.IntN(4)]
		}
		m.Set(fds.ByNumber(1), protoreflect.ValueOfInt64(secs))
		m.Set(fds.ByNumber(2), protoreflect.ValueOfInt32(int32(nanos)))
	case "google.protobuf.Duration":
		secs := g.r.Int64N(2*315576000000+1) - 315576000000
		nanos := []int64{0, 1, 500000000, 123456000, 999999999, 1000, g.r.Int64N(1e9)}[g.r.IntN(7)]
		if secs < 0 || (secs == 0 && g.r.IntN(2) == 0) {
			nanos = -nanos
		}
		if bad {
			secs, nanos = []int64{315576000001, 5, -5}[g.r.IntN(3)], []int64{0, -1, 1, 1e9}[g.r.IntN(4)]
		}
		m.Set(fds.ByNumber(1), protoreflect.ValueOfInt64(secs))
		m.Set(fds.ByNumber(2), protoreflect.ValueOfInt32(int32(nanos)))
	case "google.protobuf.FieldMask":
		good := []string{"foo", "foo_bar", "a.b_c", "x1.y2_z3", "deeply.nested.path_name"}
		l := m.Mutable(fds.ByNumber(1)).List()
		for range g.r.IntN(4) {
			l.Append(protoreflect.ValueOfString(good[g.r.IntN(len(good))]))
		}
		if bad {
			l.Append(protoreflect.ValueOfString([]string{"", "fooBar", "a__b", "_x", "1a", "a..b", "foo_"}[g.r.IntN(7)]))
		}
	case "google.protobuf.Value":
		g.value(m, depth, bad)
	case "google.protobuf.Struct":
		mp := m.Mutable(fds.ByNumber(1)).Map()
		for range g.r.IntN(4) {
			v := mp.NewValue()
			g.value(v.Message(), depth-1, bad)
			mp.Set(protoreflect.ValueOfString(g.string(fds.ByNumber(1).MapKey())).MapKey(), v)
		}
	case "google.protobuf.ListValue":
		l := m.Mutable(fds.ByNumber(1)).List()
		for range g.r.IntN(4) {
			v := l.NewElement()
			g.value(v.Message(), depth-1, bad)
			l.Append(v)
		}
	case "google.protobuf.Any":
		g.any(m, depth, bad)
	default:
		return false
	}
	return true
}

func (g *filler) value(m protoreflect.Message, depth int, bad bool) {
	fds := m.Descriptor().Fields()
	n := g.r.IntN(6)
	if depth <= 0 {
		n = g.r.IntN(4)
	}
	switch n {
	case 0:
		m.Set(fds.ByName("null_value"), protoreflect.ValueOfEnum(0))
	case 1:
		f := g.float()
		if !bad && (math.IsNaN(f) || math.IsInf(f, 0)) {
			f = 42.5
		}
		m.Set(fds.ByName("number_value"), protoreflect.ValueOfFloat64(f))
	case 2:
		m.Set(fds.ByName("string_value"), protoreflect.ValueOfString(g.string(fds.ByName("string_value"))))
	case 3:
		m.Set(fds.ByName("bool_value"), protoreflect.ValueOfBool(g.r.IntN(2) == 0))
	case 4:
		g.wellKnown(m.Mutable(fds.ByName("struct_value")).Message(), depth-1)
	case 5:
		g.wellKnown(m.Mutable(fds.ByName("list_value")).Message(), depth-1)
	}
	if bad && g.r.IntN(3) == 0 {
		m.Clear(m.WhichOneof(m.Descriptor().Oneofs().ByName("kind")))
	}
}

// anyPayloads are the types packed into Any: dynamic test types, generated
// well-known types, and descriptorpb (generated, with closed enums and
// extension ranges).
var anyPayloads = []protoreflect.FullName{
	"tt3.All", "tt2.P2", "tte.E", "google.protobuf.Timestamp", "google.protobuf.Duration", "google.protobuf.Value",
	"google.protobuf.Struct", "google.protobuf.Empty", "google.protobuf.Int64Value", "google.protobuf.Any",
	"google.protobuf.FieldMask", "google.protobuf.FieldDescriptorProto", "google.protobuf.FileOptions",
}

func (g *filler) any(m protoreflect.Message, depth int, bad bool) {
	fds := m.Descriptor().Fields()
	if g.r.IntN(8) == 0 {
		return // empty Any
	}
	name := anyPayloads[g.r.IntN(len(anyPayloads))]
	mt, err := resolver{schema().types}.FindMessageByName(name)
	if err != nil {
		panic(err)
	}
	inner := mt.New()
	if depth > 0 {
		g.fill(inner, depth-1)
	} else {
		g.wellKnown(inner, 0)
	}
	b, err := proto.MarshalOptions{AllowPartial: true}.Marshal(inner.Interface())
	if err != nil {
		panic(err)
	}
	url := "type.googleapis.com/" + string(name)
	if bad {
		url = []string{"", "type.googleapis.com/no.Such", "example.com/" + string(name)}[g.r.IntN(3)]
	}
	m.Set(fds.ByNumber(1), protoreflect.ValueOfString(url))
	m.Set(fds.ByNumber(2), protoreflect.ValueOfBytes(b))
}

func descriptors() []protoreflect.MessageDescriptor {
	s := schema()
	return []protoreflect.MessageDescriptor{
		s.all, s.p2, s.ext, s.e,
		(&descriptorpb.FileDescriptorProto{}).ProtoReflect().Descriptor(),
		(&descriptorpb.DescriptorProto{}).ProtoReflect().Descriptor(),
	}
}

// TestDifferentialRandom fills messages of every test type randomly and
// requires byte-identical JSON (after compaction) from both pipelines.
func TestDifferentialRandom(t *testing.T) {
	t.Parallel()
	for _, md := range descriptors() {
		for _, protoNames := range []bool{false, true} {
			t.Run(string(md.FullName())+map[bool]string{false: "/json", true: "/proto"}[protoNames], func(t *testing.T) {
				t.Parallel()
				d := newDiffer(t, md, protoNames)
				for _, invalid := range []bool{false, true} {
					g := &filler{r: rand.New(rand.NewPCG(1, uint64(len(md.FullName())))), invalid: invalid}
					okCount, n := 0, 300
					for range n {
						m := dynamicpb.NewMessage(md)
						g.fill(m, 3)
						wire, err := proto.MarshalOptions{AllowPartial: true}.Marshal(m)
						if err != nil {
							t.Fatalf("marshal: %v", err)
						}
						if d.check(t, wire) {
							okCount++
						}
					}
					if !invalid && okCount < n/2 {
						t.Errorf("only %d of %d valid messages rendered; generator too aggressive", okCount, n)
					}
				}
			})
		}
	}
}

// TestDifferentialDescriptors renders real descriptor sets: proto2, deeply
// nested, with options messages that take the dynamicpb fallback.
func TestDifferentialDescriptors(t *testing.T) {
	t.Parallel()
	d := newDiffer(t, (&descriptorpb.FileDescriptorSet{}).ProtoReflect().Descriptor(), false)
	set := &descriptorpb.FileDescriptorSet{}
	set.File = append(set.File, proto3File(), proto2File(), editionsFile())
	set.File = append(set.File, protodescFile((&descriptorpb.FileDescriptorProto{}).ProtoReflect().Descriptor()))
	wire, err := proto.Marshal(set)
	if err != nil {
		t.Fatal(err)
	}
	if !d.check(t, wire) {
		t.Fatal("descriptor set did not render")
	}
}
