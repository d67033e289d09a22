package schema

import (
	"bytes"
	"encoding/base64"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/grpc-mcp-gateway/gateway/internal/wellknown"
)

// Bytes values.
//
// protojson writes bytes as padded standard base64 and accepts four
// spellings: the standard or URL-safe alphabet, padded or not (it also
// skips line breaks). The unpadded forms make almost any short word valid:
// "json/plain", which a model writes when a field wants the base64 of
// json/plain ("anNvbi9wbGFpbg=="), decodes to seven bytes of garbage, and
// the backend gets them without a word. So the gateway narrows what it
// accepts to the canonical forms, and says when an accepted value still
// looks like text that was meant literally:
//
//   - Accepted: the standard (+/) or URL-safe (-_) alphabet, one of them,
//     padded with "=" to a multiple of 4 characters, nothing else (no
//     line breaks or spaces). That is protojson's own output (and the
//     gateway's), Python's base64.b64encode and urlsafe_b64encode, Java's
//     Base64.getEncoder(), JavaScript's btoa. Unpadded values are refused
//     with the padded form and, when the value looks like a word, the
//     base64 of that word, so a model corrects itself in one step.
//   - Warned: a canonical value with no padding, with lower-case letters
//     and no upper-case ones (digits and the separators / + - _
//     anywhere), which is how words, media types and paths look ("json",
//     "gzip", "binary/plain"), and whose bytes are not text (not UTF-8,
//     or control characters). Real base64 of binary data mixes cases
//     past a few characters, and real base64 of text decodes to text, so
//     neither is warned about. The call proceeds; the warning names the
//     field's path and the base64 of the text that was probably meant.
//
// Which fields hold bytes is decided once per type, at NewValidator: a
// type whose arguments can hold no bytes (no bytes field, BytesValue or
// Any anywhere in it) costs nothing more than a nil check per call.

// MaxWarnings caps the warnings one Decode explains; further ones are
// counted in Warnings.Omitted.
const MaxWarnings = 10

// Warning is a value the arguments set that converted, but probably not
// as the caller meant: for bytes, text sent where base64 belongs.
type Warning struct {
	// Path is the JSON path of the value, in the names the schema uses.
	Path string
	// Message says what the value became and what was probably meant.
	Message string
}

func (w Warning) String() string { return w.Path + ": " + w.Message }

// Warnings are what one Decode warns about: the first MaxWarnings, and a
// count of the rest.
type Warnings struct {
	List    []Warning
	Omitted int
}

// Len is the number of warnings, the omitted included.
func (ws *Warnings) Len() int { return len(ws.List) + ws.Omitted }

// String is the warnings one per line, then "and N more".
func (ws *Warnings) String() string {
	var b strings.Builder
	for i, w := range ws.List {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(w.String())
	}
	if ws.Omitted > 0 {
		b.WriteString("\nand " + strconv.Itoa(ws.Omitted) + " more values like these")
	}
	return b.String()
}

// Merge adds more, the warnings about the value at the JSON path prefix
// (one message of a stream, "requests[2]"), to ws, within MaxWarnings.
func (ws *Warnings) Merge(prefix string, more Warnings) {
	for _, w := range more.List {
		ws.add(func() string { return JoinPath(prefix, w.Path) }, func() string { return w.Message })
	}
	ws.Omitted += more.Omitted
}

// JoinPath is the JSON path of path (a Violation's or a Warning's)
// inside the value at prefix.
func JoinPath(prefix, path string) string {
	switch {
	case path == "":
		return prefix
	case path[0] == '[':
		return prefix + path
	}
	return prefix + "." + path
}

// add appends a warning, or counts it once MaxWarnings are explained;
// the message is built only when it will be shown.
func (ws *Warnings) add(path func() string, message func() string) {
	if len(ws.List) >= MaxWarnings {
		ws.Omitted++
		return
	}
	ws.List = append(ws.List, Warning{Path: path(), Message: message()})
}

// base64Form classifies the text of a bytes value.
type base64Form int

const (
	// canonical: one alphabet, padded to a multiple of 4.
	canonical base64Form = iota
	// unpadded: one alphabet, no "=", not a multiple of 4 characters;
	// protojson would take it.
	unpadded
	// notBase64: anything else.
	notBase64
)

// classify reads the text of a bytes value once, without decoding it.
func classify(s []byte) base64Form {
	n := len(s)
	pad := 0
	for pad < 2 && pad < n && s[n-1-pad] == '=' {
		pad++
	}
	std, url := false, false
	for _, c := range s[:n-pad] {
		switch {
		case c >= 'A' && c <= 'Z', c >= 'a' && c <= 'z', c >= '0' && c <= '9':
		case c == '+' || c == '/':
			std = true
		case c == '-' || c == '_':
			url = true
		default:
			return notBase64
		}
	}
	switch {
	case std && url:
		return notBase64
	case n%4 == 0:
		return canonical
	case pad == 0 && n%4 != 1:
		return unpadded
	}
	return notBase64
}

// encodingOf is the encoding of a canonical or unpadded value.
func encodingOf(s []byte) *base64.Encoding {
	url := bytes.ContainsAny(s, "-_")
	switch {
	case len(s)%4 != 0 && url:
		return base64.RawURLEncoding
	case len(s)%4 != 0:
		return base64.RawStdEncoding
	case url:
		return base64.URLEncoding
	}
	return base64.StdEncoding
}

// wordLike: no padding, lower-case letters and no upper-case ones
// (digits and the separators / + - _ anywhere). Words, media types and
// paths look so ("json", "gzip", "binary/plain"); base64 of binary data
// rarely does past a few characters (at 8 characters about 1 in 100, at
// 16 about 1 in 10,000). Upper case is left out: base64 of small byte
// values is upper case ("AQID" is 1, 2, 3), so warning about "NONE"
// would also warn about real data.
func wordLike(s []byte) bool {
	if len(s) == 0 || s[len(s)-1] == '=' {
		return false
	}
	lower := false
	for _, c := range s {
		switch {
		case c >= 'a' && c <= 'z':
			lower = true
		case c >= 'A' && c <= 'Z':
			return false
		}
	}
	return lower
}

// isText: valid UTF-8 without control characters other than tab and
// line breaks, which is what base64 of text decodes to.
func isText(b []byte) bool {
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size <= 1 {
			return false
		}
		if unicode.IsControl(r) && r != '\t' && r != '\n' && r != '\r' {
			return false
		}
		b = b[size:]
	}
	return true
}

// decodedText decodes a canonical or unpadded value into scratch and
// reports whether the bytes are text.
func decodedText(s []byte, scratch *[]byte) (n int, text bool) {
	enc := encodingOf(s)
	*scratch = append((*scratch)[:0], make([]byte, enc.DecodedLen(len(s)))...)
	n, err := enc.Decode(*scratch, s)
	if err != nil {
		return 0, false
	}
	return n, isText((*scratch)[:n])
}

// suggestLimit bounds the text a hint quotes and encodes, so a long value
// cannot make a long answer.
const suggestLimit = 96

// meantText is the hint for a value s that was probably meant as text:
// the base64 of that text, "" when s is too long to quote or is not
// printable text.
func meantText(s []byte) string {
	if len(s) == 0 || len(s) > suggestLimit || !utf8.Valid(s) || bytes.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return ""
	}
	return "the base64 of the text " + strconv.Quote(string(s)) + " is " + strconv.Quote(base64.StdEncoding.EncodeToString(s))
}

// bytesExpected is the Expected of a violation for a bytes value that is
// not canonical base64: what the gateway takes and, where the value says
// what was meant, the exact value to send instead.
func bytesExpected(s []byte) string {
	const rule = `base64 padded with "=" to a multiple of 4 characters`
	switch classify(s) {
	case unpadded:
		// A word was probably meant as text, anything else as base64
		// whose padding was left out; a short word could be either, so
		// it gets both answers.
		padded := string(s) + strings.Repeat("=", 4-len(s)%4)
		if len(padded) > suggestLimit {
			return rule
		}
		if hint := meantText(s); hint != "" && wordLike(s) {
			return rule + "; " + hint + "; if it is base64 already, pad it: " + strconv.Quote(padded)
		}
		return rule + ": " + strconv.Quote(padded)
	case notBase64:
		// protojson skips line breaks (MIME's wrapping); the gateway
		// takes one spelling per value.
		if bytes.ContainsAny(s, "\r\n") {
			return rule + ", with no line breaks"
		}
		// A value with letters in it was probably text; one without
		// (such as "***") was neither.
		if hint := meantText(s); hint != "" && bytes.ContainsFunc(s, unicode.IsLetter) {
			return rule + "; " + hint
		}
	}
	return "base64-encoded bytes"
}

// literalMessage is the warning for a canonical, word-like value s
// whose n bytes are not text.
func literalMessage(s []byte, n int) string {
	msg := strconv.Quote(string(s)) + " was read as base64 and sent as " + strconv.Itoa(n) + " bytes that are not text"
	if hint := meantText(s); hint != "" {
		msg += "; if you meant the text, " + hint
	}
	return msg
}

// bytesPlan lists, for one message type, the members of its JSON object
// that hold bytes or lead to them; a type whose JSON can hold no bytes
// has none.
type bytesPlan struct {
	// members are by JSON name and by proto name, as protojson accepts both.
	members map[string]bytesMember
	// any: the object is a google.protobuf.Any, whose "@type" says at
	// call time which plan applies.
	any bool
}

// bytesMember is one field of a bytesPlan: bytes (or BytesValue) values
// when kid is nil, else messages to scan with kid.
type bytesMember struct {
	fd  protoreflect.FieldDescriptor
	kid *bytesPlan
}

// anyBytesPlan is the plan of every google.protobuf.Any.
var anyBytesPlan = &bytesPlan{any: true}

// isBytesValue: fd's values (list items, map values) are bytes in JSON.
func isBytesValue(fd protoreflect.FieldDescriptor) bool {
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	if fd.Kind() == protoreflect.BytesKind {
		return true
	}
	m := fd.Message()
	return m != nil && m.FullName() == "google.protobuf.BytesValue"
}

// newBytesPlan is md's plan, nil when md's JSON can hold no bytes. The
// types md reaches are visited once each; whether each can hold bytes is
// settled by iterating to a fixpoint, which recursive types need.
func newBytesPlan(md protoreflect.MessageDescriptor) *bytesPlan {
	switch wellknown.Of(md) {
	case wellknown.Any:
		return anyBytesPlan
	case wellknown.None:
	default:
		return nil
	}
	var order []protoreflect.MessageDescriptor
	seen := map[protoreflect.FullName]bool{}
	var visit func(protoreflect.MessageDescriptor)
	visit = func(md protoreflect.MessageDescriptor) {
		if seen[md.FullName()] {
			return
		}
		seen[md.FullName()] = true
		order = append(order, md)
		fields := md.Fields()
		for i := range fields.Len() {
			if m := messageOf(fields.Get(i)); m != nil && wellknown.Of(m) == wellknown.None {
				visit(m)
			}
		}
	}
	visit(md)
	holds := map[protoreflect.FullName]bool{}
	for changed := true; changed; {
		changed = false
		for _, m := range order {
			if holds[m.FullName()] {
				continue
			}
			fields := m.Fields()
			for i := range fields.Len() {
				fd := fields.Get(i)
				k := messageOf(fd)
				if isBytesValue(fd) || k != nil && (wellknown.Of(k) == wellknown.Any || holds[k.FullName()]) {
					holds[m.FullName()], changed = true, true
					break
				}
			}
		}
	}
	if !holds[md.FullName()] {
		return nil
	}
	plans := map[protoreflect.FullName]*bytesPlan{}
	for _, m := range order {
		if holds[m.FullName()] {
			plans[m.FullName()] = &bytesPlan{members: map[string]bytesMember{}}
		}
	}
	for _, m := range order {
		p := plans[m.FullName()]
		if p == nil {
			continue
		}
		fields := m.Fields()
		for i := range fields.Len() {
			fd := fields.Get(i)
			var member bytesMember
			switch k := messageOf(fd); {
			case isBytesValue(fd):
				member = bytesMember{fd: fd}
			case k != nil && wellknown.Of(k) == wellknown.Any:
				member = bytesMember{fd: fd, kid: anyBytesPlan}
			case k != nil && plans[k.FullName()] != nil:
				member = bytesMember{fd: fd, kid: plans[k.FullName()]}
			default:
				continue
			}
			p.members[fd.JSONName()] = member
			p.members[fd.TextName()] = member
		}
	}
	return plans[md.FullName()]
}

// messageOf is the message type of fd's values (a map's values), nil for
// scalars and unresolved placeholders.
func messageOf(fd protoreflect.FieldDescriptor) protoreflect.MessageDescriptor {
	if fd.IsMap() {
		fd = fd.MapValue()
	}
	m := fd.Message()
	if m == nil || m.IsPlaceholder() {
		return nil
	}
	return m
}

// anyPlans caches the plans of the types Any values name, built on first
// use: which types a client will put in an Any is known only then. The
// types come from the Validator's resolver, a fixed set, so the cache is
// bounded by the backend's own types.
type anyPlans struct{ m sync.Map } // protoreflect.FullName -> *bytesPlan (nil: none)

func (a *anyPlans) get(md protoreflect.MessageDescriptor) *bytesPlan {
	if p, ok := a.m.Load(md.FullName()); ok {
		return p.(*bytesPlan)
	}
	p, _ := a.m.LoadOrStore(md.FullName(), newBytesPlan(md))
	return p.(*bytesPlan)
}

// bytesScan walks arguments protojson has accepted (so the JSON is valid
// and each member is a field of its type) along a bytesPlan, checking
// every bytes value: skipped members cost what finding their end costs.
type bytesScan struct {
	cursor
	v    *Validator
	path pathBuf
	// bad is set at the first value that is not canonical base64; the
	// scan stops there, and the caller explains the arguments.
	bad      *Violation
	warnings Warnings
	scratch  []byte
}

// scanBytes checks the bytes values in raw, the arguments protojson has
// accepted (unwrapped, for a type that is not a JSON object): it returns
// the warnings, or the first value that is not canonical base64. Types
// that can hold no bytes return at once.
func (v *Validator) scanBytes(raw []byte) (Warnings, *Violation) {
	if raw == nil || v.bytes == nil && !v.bytesRoot {
		return Warnings{}, nil
	}
	// The path of most arguments fits here, so building it need not
	// allocate.
	var path [64]byte
	s := bytesScan{cursor: cursor{in: raw}, v: v, path: pathBuf{b: path[:0]}}
	if v.bytesRoot {
		s.path.field(WrapperProperty)
		s.value(bytesMember{})
	} else {
		s.object(v.bytes)
	}
	return s.warnings, s.bad
}

func (s *bytesScan) object(p *bytesPlan) {
	if s.peek() != '{' {
		s.raw()
		return
	}
	if p.any {
		s.anyObject()
		return
	}
	s.open()
	for s.bad == nil {
		rawKey, ok := s.nextMember()
		if !ok {
			return
		}
		// Indexing with the converted bytes themselves does not allocate.
		var m bytesMember
		var found bool
		if inner := rawKey[1 : len(rawKey)-1]; bytes.IndexByte(inner, '\\') < 0 {
			m, found = p.members[string(inner)]
		} else {
			m, found = p.members[unquote(rawKey)]
		}
		if !found {
			s.raw()
			continue
		}
		mark := s.path.len()
		s.path.field(s.v.fieldName(m.fd))
		s.member(m)
		s.path.truncate(mark)
	}
}

func (s *bytesScan) member(m bytesMember) {
	switch c := s.peek(); {
	case m.fd.IsList() && c == '[':
		s.open()
		for i := 0; s.bad == nil && s.nextElement(); i++ {
			mark := s.path.len()
			s.path.index(i)
			s.value(m)
			s.path.truncate(mark)
		}
	case m.fd.IsMap() && c == '{':
		s.open()
		for s.bad == nil {
			rawKey, ok := s.nextMember()
			if !ok {
				return
			}
			mark := s.path.len()
			s.path.rawKey(rawKey)
			s.value(m)
			s.path.truncate(mark)
		}
	case m.fd.IsList() || m.fd.IsMap():
		s.raw() // null
	default:
		s.value(m)
	}
}

// value checks one value: a message along its plan, or bytes.
func (s *bytesScan) value(m bytesMember) {
	if m.kid != nil {
		s.object(m.kid)
		return
	}
	raw := s.raw()
	if raw[0] != '"' {
		return // null: unset
	}
	s.text(raw)
}

// text checks the raw JSON string of one bytes value.
func (s *bytesScan) text(raw []byte) {
	text := raw[1 : len(raw)-1]
	if bytes.IndexByte(text, '\\') >= 0 {
		text = appendUnquoted(nil, raw)
	}
	if classify(text) != canonical {
		s.bad = &Violation{Path: s.path.String(), Rule: "type", Expected: bytesExpected(text), Received: describe(raw)}
		return
	}
	if !wordLike(text) {
		return
	}
	if n, isText := decodedText(text, &s.scratch); !isText {
		s.warnings.add(s.path.String, func() string { return literalMessage(text, n) })
	}
}

// anyObject checks an Any: the plan of the type its "@type" names (the
// value under "value" for a BytesValue), none for a type the resolver
// does not know (protojson has accepted the arguments, so it knows it).
func (s *bytesScan) anyObject() {
	var url []byte
	probe := s.cursor
	probe.members(func(rawKey []byte) {
		if v := probe.raw(); string(rawKey) == `"@type"` {
			url = v
		}
	})
	if url == nil || url[0] != '"' {
		s.raw()
		return
	}
	mt, err := s.v.resolver.FindMessageByURL(unquote(url))
	if err != nil {
		s.raw()
		return
	}
	md := mt.Descriptor()
	switch wellknown.Of(md) {
	case wellknown.None:
		p := s.v.anyPlans.get(md)
		if p == nil {
			s.raw()
			return
		}
		s.object(p)
	case wellknown.Wrapper:
		if md.FullName() != "google.protobuf.BytesValue" {
			s.raw()
			return
		}
		s.open()
		for s.bad == nil {
			rawKey, ok := s.nextMember()
			if !ok {
				return
			}
			if string(rawKey) != `"`+WrapperProperty+`"` {
				s.raw()
				continue
			}
			mark := s.path.len()
			s.path.field(WrapperProperty)
			s.value(bytesMember{})
			s.path.truncate(mark)
		}
	default:
		s.raw()
	}
}
