package schema

import (
	validatepb "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// protoc-gen-validate (PGV) rules, (validate.rules), are protovalidate's
// predecessor, and many APIs still carry them. Their messages are
// protovalidate's almost field for field: the same type members
// (string = 14, int32 = 3...) and, within them, the same rules under the
// same numbers (min_len = 2, pattern = 6, gte = 5...), because
// protovalidate kept PGV's numbering. So a field's PGV rules are read by
// renumbering the few that differ (pgvTranslate) and decoding the result
// as protovalidate's FieldRules: the schema then shows them as it shows
// protovalidate's, keywords and notes alike. The gateway does not enforce
// them (protovalidate reads only its own options): a PGV service checks
// them itself, with the code PGV generated.

// pgvRulesNumber is (validate.rules) on FieldOptions.
const pgvRulesNumber = 1071

// Numbers in PGV's FieldRules and type rule messages that protovalidate
// does not share.
const (
	pgvMessage         = 17 // MessageRules {skip = 1; required = 2}
	pgvMessageSkip     = 1
	pgvMessageRequired = 2
	pgvRepeated        = 18
	pgvMap             = 19
	pgvRepeatedItems   = 4
	pgvMapKeys         = 4
	pgvMapValues       = 5
)

// pgvIgnoreEmpty is each type member's ignore_empty rule, which
// protovalidate says as FieldRules.ignore = IGNORE_IF_ZERO_VALUE (float =
// 1 ... sfixed64 = 12: 8; string: 26; bytes: 14; repeated: 5; map: 6).
var pgvIgnoreEmpty = map[protowire.Number]protowire.Number{
	1: 8, 2: 8, 3: 8, 4: 8, 5: 8, 6: 8, 7: 8, 8: 8, 9: 8, 10: 8, 11: 8, 12: 8,
	14: 26, 15: 14, pgvRepeated: 5, pgvMap: 6,
}

// pgvRequired is the required rule of any (20), duration (21) and
// timestamp (22), protovalidate's FieldRules.required.
var pgvRequired = map[protowire.Number]protowire.Number{20: 1, 21: 1, 22: 1}

// pgvDropped are PGV rules protovalidate has no counterpart for:
// map.no_sparse (deprecated in PGV, for proto2 message values).
var pgvDropped = map[protowire.Number]protowire.Number{pgvMap: 3}

// Protovalidate's FieldRules numbers the translation writes.
const (
	pvRequired = 25
	pvIgnore   = 27
)

// pgvFieldRules are fd's PGV rules as protovalidate's, nil when it has
// none (or says skip).
func pgvFieldRules(fd protoreflect.FieldDescriptor) *validatepb.FieldRules {
	opts := fd.Options()
	if !hasField(opts, pgvRulesNumber) {
		return nil
	}
	raw, err := proto.MarshalOptions{AllowPartial: true}.Marshal(opts)
	if err != nil {
		return nil
	}
	var rules []byte
	for b := raw; len(b) > 0; {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return nil
		}
		b = b[n:]
		m := protowire.ConsumeFieldValue(num, typ, b)
		if m < 0 {
			return nil
		}
		if num == pgvRulesNumber && typ == protowire.BytesType {
			v, _ := protowire.ConsumeBytes(b[:m])
			rules = append(rules, v...) // repeated occurrences merge
		}
		b = b[m:]
	}
	out, ok := pgvTranslate(rules)
	if !ok {
		return nil
	}
	r := &validatepb.FieldRules{}
	if proto.Unmarshal(out, r) != nil || r.GetIgnore() == validatepb.Ignore_IGNORE_ALWAYS {
		return nil
	}
	return r
}

// pgvTranslate renumbers PGV FieldRules (wire form) as protovalidate's;
// false when they do not parse.
func pgvTranslate(in []byte) ([]byte, bool) {
	var out []byte
	required, ignore := false, validatepb.Ignore_IGNORE_UNSPECIFIED
	for len(in) > 0 {
		num, typ, n := protowire.ConsumeTag(in)
		if n < 0 {
			return nil, false
		}
		m := protowire.ConsumeFieldValue(num, typ, in[n:])
		if m < 0 {
			return nil, false
		}
		field, val := in[:n+m], in[n:n+m]
		in = in[n+m:]
		if typ != protowire.BytesType {
			out = append(out, field...)
			continue
		}
		inner, _ := protowire.ConsumeBytes(val)
		if num == pgvMessage {
			ok := eachField(inner, func(f protowire.Number, v uint64, _ []byte) {
				switch {
				case f == pgvMessageSkip && v != 0:
					ignore = validatepb.Ignore_IGNORE_ALWAYS
				case f == pgvMessageRequired && v != 0:
					required = true
				}
			})
			if !ok {
				return nil, false
			}
			continue
		}
		var member []byte
		ok := eachField(inner, func(f protowire.Number, v uint64, whole []byte) {
			switch {
			case f == pgvIgnoreEmpty[num]:
				if v != 0 && ignore == validatepb.Ignore_IGNORE_UNSPECIFIED {
					ignore = validatepb.Ignore_IGNORE_IF_ZERO_VALUE
				}
			case f == pgvRequired[num]:
				required = required || v != 0
			case f == pgvDropped[num]:
			case num == pgvRepeated && f == pgvRepeatedItems, num == pgvMap && (f == pgvMapKeys || f == pgvMapValues):
				nested, _ := protowire.ConsumeBytes(whole[protowire.SizeTag(f):])
				t, ok := pgvTranslate(nested)
				if ok {
					member = protowire.AppendTag(member, f, protowire.BytesType)
					member = protowire.AppendBytes(member, t)
				}
			default:
				member = append(member, whole...)
			}
		})
		if !ok {
			return nil, false
		}
		out = protowire.AppendTag(out, num, protowire.BytesType)
		out = protowire.AppendBytes(out, member)
	}
	if required {
		out = protowire.AppendTag(out, pvRequired, protowire.VarintType)
		out = protowire.AppendVarint(out, 1)
	}
	if ignore != validatepb.Ignore_IGNORE_UNSPECIFIED {
		out = protowire.AppendTag(out, pvIgnore, protowire.VarintType)
		out = protowire.AppendVarint(out, uint64(ignore))
	}
	return out, true
}

// eachField calls fn with each field of a message in wire form: its
// number, its value when it is a varint (0 otherwise) and its whole
// encoding, tag included.
func eachField(b []byte, fn func(num protowire.Number, varint uint64, whole []byte)) bool {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return false
		}
		m := protowire.ConsumeFieldValue(num, typ, b[n:])
		if m < 0 {
			return false
		}
		var v uint64
		if typ == protowire.VarintType {
			v, _ = protowire.ConsumeVarint(b[n:])
		}
		fn(num, v, b[:n+m])
		b = b[n+m:]
	}
	return true
}
