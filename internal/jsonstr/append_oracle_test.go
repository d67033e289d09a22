package jsonstr

import (
	"testing"
	"unicode/utf8"
)

// appendByRune is Append as it was before it copied runs whole: one
// character at a time. It is the oracle Append must equal byte for byte.
func appendByRune(b []byte, s string) []byte {
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}

// FuzzAppendAsByRune: Append writes what writing one character at a time
// writes, after whatever b holds.
func FuzzAppendAsByRune(f *testing.F) {
	for _, s := range []string{"", "plain", "<a & b>", "quote \" back \\ slash", "\n\r\t\x00\x1f\x7f", "a\u2028b\u2029c", "x\xff\xfey", "日本語", "\xe2\x80", "end\\"} {
		f.Add([]byte("x="), s)
	}
	f.Fuzz(func(t *testing.T, prefix []byte, s string) {
		got := Append(append([]byte(nil), prefix...), s)
		want := appendByRune(append([]byte(nil), prefix...), s)
		if string(got) != string(want) {
			t.Fatalf("Append(%q) = %q, want %q", s, got, want)
		}
	})
}

// BenchmarkAppend is Append of a description-like text.
func BenchmarkAppend(b *testing.B) {
	const s = "The name of the resource, in the form projects/{project}/locations/{location}/things/{thing}.\n\nOutput only: set by the server (<a & b>), \"quoted\"."
	buf := make([]byte, 0, 256)
	b.ReportAllocs()
	for b.Loop() {
		buf = Append(buf[:0], s)
	}
}
