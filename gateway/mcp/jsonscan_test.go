package mcp

import (
	"encoding/json"
	"strings"
	"testing"
)

var scanSeeds = []string{
	`{}`, `[]`, `{"a":1}`, ` {"jsonrpc":"2.0","id":1,"method":"ping"} `, `{"a":[1,2,{"b":null}],"c":-1.5e+3}`,
	`"str"`, `"\u00e9\n\""`, `-0`, `0.5`, `1e5`, `1E-5`, `true`, `false`, `null`,
	`{"a":1,}`, `[1,]`, `01`, `-`, `1.`, `1e`, `.5`, `+1`, `"\x"`, "\"a\x01\"", `"\u12"`, `{"a" 1}`, `{a:1}`,
	`{"a":1} x`, `nul`, `tru`, ``, ` `, `{`, `[`, `"`, `{"a":}`, `{"a":1 "b":2}`, "\"\xff\"", `[[[[]]]]`,
	strings.Repeat("[", maxNesting+1) + strings.Repeat("]", maxNesting+1),
}

func TestValidJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range scanSeeds {
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%.40q) = %v, json.Valid = %v", s, got, want)
		}
	}
}

// FuzzScanner checks the hand-rolled scanner against encoding/json: the same
// inputs are valid, and the envelope members it picks out are the ones a
// case-sensitive decoder sees.
func FuzzScanner(f *testing.F) {
	for _, s := range scanSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := validJSON(data), json.Valid(data); got != want {
			t.Fatalf("validJSON = %v, json.Valid = %v", got, want)
		}
		var m message
		if !decodeMessage(data, &m) {
			return
		}
		var generic map[string]json.RawMessage
		if json.Unmarshal(data, &generic) != nil {
			return // not an object
		}
		for key, got := range map[string]json.RawMessage{"jsonrpc": m.JSONRPC, "id": m.ID, "method": m.Method, "params": m.Params} {
			want, ok := generic[key]
			if ok != (got != nil) || (ok && string(want) != string(got)) {
				t.Fatalf("%s: scanner %q, encoding/json %q", key, got, want)
			}
		}
	})
}
