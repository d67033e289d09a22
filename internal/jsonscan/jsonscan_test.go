package jsonscan_test

import (
	"encoding/json"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonscan"
)

// FuzzValueEnd: in any document json.Valid accepts, the one value ends
// where only white space is left, and each member of a top-level array
// ends where encoding/json says it does.
func FuzzValueEnd(f *testing.F) {
	for _, s := range []string{`1`, ` "a\"]" `, `{"a":[1,{"b":"}"}],"c":null}`, `[true, false ,"x\\",-1.5e3]`, "\t[]\n", `[[[[]]]]`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		if !json.Valid(b) {
			return
		}
		start := jsonscan.SpaceEnd(b, 0)
		end := jsonscan.ValueEnd(b, start)
		if jsonscan.SpaceEnd(b, end) != len(b) {
			t.Fatalf("%q: the value ends at %d, leaving %q", s, end, b[end:])
		}
		var elems []json.RawMessage
		if b[start] != '[' || json.Unmarshal(b, &elems) != nil || len(elems) == 0 {
			return
		}
		i := jsonscan.SpaceEnd(b, start+1)
		for k, want := range elems {
			e := jsonscan.ValueEnd(b, i)
			if got := string(b[i:e]); got != string(want) {
				t.Fatalf("%q: element %d is %q, want %q", s, k, got, want)
			}
			i = jsonscan.SpaceEnd(b, jsonscan.SpaceEnd(b, e)+1) // past ','
		}
	})
}
