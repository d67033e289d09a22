package jsonstr_test

import (
	"encoding/json"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonstr"
)

// FuzzAppend: whatever the input, the output is a JSON string that
// decodes to the input (invalid UTF-8 read as U+FFFD, as encoding/json
// reads it too).
func FuzzAppend(f *testing.F) {
	for _, s := range []string{"", "plain", "<a & b>", "quote \" back \\ slash", "\n\r\t\x00\x1f\x7f", "\u2028\u2029", "\xff\xfe", "日本語"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		js := jsonstr.Append(nil, s)
		var got string
		if err := json.Unmarshal(js, &got); err != nil {
			t.Fatalf("%q: not a JSON string: %s: %v", s, js, err)
		}
		want, _ := json.Marshal(s)
		var wantS string
		_ = json.Unmarshal(want, &wantS)
		if got != wantS {
			t.Fatalf("%q: decodes to %q, want %q", s, got, wantS)
		}
	})
}

func TestAppendLeavesHTMLAlone(t *testing.T) {
	if got := string(jsonstr.Append([]byte("x="), "<a & b>")); got != `x="<a & b>"` {
		t.Errorf("got %s", got)
	}
}
