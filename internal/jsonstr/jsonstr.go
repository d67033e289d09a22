// Package jsonstr writes JSON strings for text people and models read:
// schemas, result notes, cut results. The module has one string encoder
// per contract, and this is the "readable" one; the others exist
// because their output must equal another library's byte for byte:
//
//   - gateway/mcp's appendString equals encoding/json (HTML characters
//     escaped), so the protocol layer's hand-written encoder and the
//     official SDKs it is tested against agree on every message;
//   - gateway/internal/transcode's appendString equals protojson (and fails on
//     invalid UTF-8 as protojson does), so a response transcoded from wire
//     bytes is what protojson would have written;
//   - gateway/telemetry's appendJSONEscaped and appendQuoted equal
//     log/slog's JSON and text handlers, so the access line it formats
//     itself reads as every other log line.
package jsonstr

import "unicode/utf8"

const hexDigits = "0123456789abcdef"

// Append appends s to b as a JSON string. Unlike encoding/json it leaves <,
// > and & alone, so text taken from proto comments or backend messages
// stays readable; it escapes control characters, and U+2028 and U+2029
// (valid JSON, but they break JavaScript that embeds it), and writes
// invalid UTF-8 as U+FFFD.
func Append(b []byte, s string) []byte {
	b = append(b, '"')
	// Runs of characters written as they are are copied whole: schemas
	// are mostly descriptions, long runs of plain text.
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' && c != 0x7f {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c == '\n':
				b = append(b, '\\', 'n')
			case c == '\r':
				b = append(b, '\\', 'r')
			case c == '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
