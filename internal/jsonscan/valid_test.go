package jsonscan_test

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonscan"
)

var validSeeds = []string{
	`{}`, `[]`, `{"a":1}`, ` {"jsonrpc":"2.0","id":1,"method":"ping"} `, `{"a":[1,2,{"b":null}],"c":-1.5e+3}`,
	`"str"`, `"\u00e9\n\""`, `-0`, `0.5`, `1e5`, `1E-5`, `true`, `false`, `null`,
	`{"a":1,}`, `[1,]`, `01`, `-`, `1.`, `1e`, `.5`, `+1`, `"\x"`, "\"a\x01\"", `"\u12"`, `{"a" 1}`, `{a:1}`,
	`{"a":1} x`, `nul`, `tru`, ``, ` `, `{`, `[`, `"`, `{"a":}`, `{"a":1 "b":2}`, "\"\xff\"", `[[[[]]]]`,
	`{"na\u006de":1,"Name":2,"name":3}`, `[1, "two" ,{"3":[]}]`,
	strings.Repeat("[", jsonscan.MaxNesting+1) + strings.Repeat("]", jsonscan.MaxNesting+1),
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	for _, s := range validSeeds {
		if got, want := jsonscan.Valid([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("Valid(%.40q) = %v, json.Valid = %v", s, got, want)
		}
	}
}

// TestObjectKeys: keys match exactly, escapes are undone, and duplicates
// are all visited in order.
func TestObjectKeys(t *testing.T) {
	t.Parallel()
	var keys, vals []string
	isObject, ok := jsonscan.Object([]byte(` {"na\u006de" : 1,"Name":"x", "name":[2] } `), func(k, v []byte) {
		keys, vals = append(keys, string(k)), append(vals, string(v))
	})
	if !isObject || !ok || strings.Join(keys, "|") != "name|Name|name" || strings.Join(vals, "|") != `1|"x"|[2]` {
		t.Errorf("isObject=%v ok=%v keys=%q vals=%q", isObject, ok, keys, vals)
	}
	for _, s := range []string{`[1]`, `"s"`, `1`} {
		if isObject, ok := jsonscan.Object([]byte(s), nil); isObject || !ok {
			t.Errorf("Object(%s) = %v, %v, want false, true", s, isObject, ok)
		}
	}
	if isObject, ok := jsonscan.Object([]byte(`{"a":1`), nil); !isObject || ok {
		t.Errorf("Object of a cut object = %v, %v, want true, false", isObject, ok)
	}
}

func TestUnquote(t *testing.T) {
	t.Parallel()
	for raw, want := range map[string]string{`"tools/call"`: "tools/call", `""`: "", `"a\"b\u00e9"`: `a"bé`, `"\ud83d\ude00"`: "😀"} {
		if got, ok := jsonscan.Unquote([]byte(raw)); !ok || got != want {
			t.Errorf("Unquote(%s) = %q, %v, want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{``, `"`, `1`, `null`, `"a` + "\x01" + `"`, `"\x"`} {
		if got, ok := jsonscan.Unquote([]byte(raw)); ok {
			t.Errorf("Unquote(%q) = %q, want not ok", raw, got)
		}
	}
}

// FuzzValid checks the validating scanner against encoding/json: the same
// inputs are valid, Object sees the members (last duplicate winning) an
// encoding/json map would hold, byte for byte and with keys matched
// exactly, and Elements sees the elements of an array.
func FuzzValid(f *testing.F) {
	for _, s := range validSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		valid := json.Valid(data)
		if got := jsonscan.Valid(data); got != valid {
			t.Fatalf("Valid = %v, json.Valid = %v", got, valid)
		}
		members := map[string]string{}
		isObject, ok := jsonscan.Object(data, func(k, v []byte) { members[string(k)] = string(v) })
		if ok != valid {
			t.Fatalf("Object ok = %v, json.Valid = %v", ok, valid)
		}
		if !valid {
			return
		}
		var obj map[string]json.RawMessage
		if err := json.Unmarshal(data, &obj); (err == nil && obj != nil) != isObject {
			t.Fatalf("isObject = %v, but encoding/json: %v", isObject, err)
		}
		// encoding/json replaces invalid UTF-8 in keys; the scanner hands
		// out the bytes as they are.
		if isObject && utf8.Valid(data) {
			if len(obj) != len(members) {
				t.Fatalf("Object saw %d keys, encoding/json %d", len(members), len(obj))
			}
			for k, want := range obj {
				if got, ok := members[k]; !ok || got != string(want) {
					t.Fatalf("member %q: Object %q, encoding/json %q", k, got, want)
				}
			}
		}
		var elems []json.RawMessage
		if json.Unmarshal(data, &elems) != nil {
			return
		}
		var got []string
		jsonscan.Elements(data, func(el []byte) { got = append(got, string(el)) })
		if len(got) != len(elems) {
			t.Fatalf("Elements saw %d elements, encoding/json %d", len(got), len(elems))
		}
		for i, want := range elems {
			if got[i] != string(want) {
				t.Fatalf("element %d: Elements %q, encoding/json %q", i, got[i], want)
			}
		}
	})
}

var sink string

// TestUnquoteAllocs: a string without escapes costs its one conversion and
// nothing else (a named result whose address json.Unmarshal takes once cost
// a second allocation on every call).
func TestUnquoteAllocs(t *testing.T) {
	raw := []byte(`"a method name longer than thirty-two bytes"`)
	if n := testing.AllocsPerRun(100, func() { sink, _ = jsonscan.Unquote(raw) }); n > 1 {
		t.Errorf("Unquote allocates %.1f times, want at most 1", n)
	}
}
