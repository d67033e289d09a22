package telemetry

import (
	"io"
	"log/slog"
	"math"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// NewLogger returns a logger writing log/slog's text format (or, with
// json, its JSON format) to w, as slog.NewTextHandler and
// slog.NewJSONHandler do, with one difference in cost only: the
// tools/call line [LogCall] writes for every call is formatted by this
// package straight into a pooled buffer, byte for byte as the standard
// handler would write it, instead of through a slog.Record of eleven
// attributes. That line is most of what the gateway logs; through slog
// it took two to three microseconds of CPU and two or three
// allocations, this way about half a microsecond and none
// (BenchmarkLogCall).
//
// Every other line, and every line of a logger derived with With or
// WithGroup, goes through the standard handler. Options the fast path
// cannot honour (ReplaceAttr, AddSource) turn it off: the logger is then
// the standard handler's alone. Each line is one Write of a complete line
// to w, made before the logging call returns, as with the standard
// handlers: nothing is held back in a buffer a crash could lose.
func NewLogger(w io.Writer, json bool, opts *slog.HandlerOptions) *slog.Logger {
	if opts == nil {
		opts = &slog.HandlerOptions{}
	}
	if opts.ReplaceAttr != nil || opts.AddSource {
		if json {
			return slog.New(slog.NewJSONHandler(w, opts))
		}
		return slog.New(slog.NewTextHandler(w, opts))
	}
	// The standard handler serialises its own writes only; both it and
	// the call line write through out, so lines never interleave on a
	// writer that is not safe for concurrent use.
	out := &lineWriter{w: w}
	h := &logHandler{out: out, json: json}
	if json {
		h.Handler = slog.NewJSONHandler(out, opts)
	} else {
		h.Handler = slog.NewTextHandler(out, opts)
	}
	return slog.New(h)
}

// logHandler is the standard handler with the call line's fast path
// beside it. With and WithGroup return the standard handler's derived
// one (through the embedded Handler), which has no fast path: the call
// line's attributes would then need the logger's own before them.
type logHandler struct {
	slog.Handler
	out  *lineWriter
	json bool
}

// lineWriter serialises whole-line writes.
type lineWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lineWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// lineBufs are the call line's buffers. A line longer than
// maxPooledLine (a long error text) is not put back, so one such line
// does not keep its buffer alive in the pool.
var lineBufs = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const maxPooledLine = 4 << 10

// writeCall writes r's call line at level with code as its code, as the
// standard handler would format LogCall's attributes.
func (h *logHandler) writeCall(r *CallRecord, level slog.Level, code string) {
	bp := lineBufs.Get().(*[]byte)
	b := (*bp)[:0]
	t := r.End
	if t.IsZero() {
		t = time.Now()
	}
	e := lineEncoder{json: h.json}
	if e.json {
		b = append(b, `{"time":"`...)
		b = t.Round(0).AppendFormat(b, time.RFC3339Nano)
		b = append(b, '"')
	} else {
		b = append(b, "time="...)
		b = appendMillis(b, t)
	}
	// The level names, the message and the code names need no quoting
	// or escaping in either format.
	b = e.plain(b, "level", level.String())
	b = e.plain(b, "msg", "tools/call")
	b = e.str(b, "tool", r.Tool)
	b = e.str(b, "backend", r.Backend)
	b = e.plain(b, "code", code)
	b = e.key(b, "duration_ms")
	b = e.millis(b, r.Duration.Microseconds())
	b = e.key(b, "id")
	b = appendValue(e.json, b, []byte(r.CallInfo.RequestID))
	if r.CallInfo.SessionID != "" {
		b = e.str(b, "session", r.CallInfo.SessionID)
	}
	if r.CallInfo.Transport != "" {
		b = e.str(b, "transport", r.CallInfo.Transport)
	}
	if r.Span.IsValid() {
		tid, sid := r.Span.TraceID(), r.Span.SpanID()
		b = e.key(b, "trace_id")
		b = e.hex(b, tid[:])
		b = e.key(b, "span_id")
		b = e.hex(b, sid[:])
	}
	if r.Outcome.Err != nil {
		b = e.str(b, "err", r.Outcome.Err.Error())
	}
	if e.json {
		b = append(b, '}')
	}
	b = append(b, '\n')
	// As the standard handlers do, a failed write is dropped: logging
	// never fails a call.
	_, _ = h.out.Write(b)
	if cap(b) <= maxPooledLine {
		*bp = b
		lineBufs.Put(bp)
	}
}

// appendMillis is the text handler's time: RFC 3339 with exactly three
// fractional digits, truncated.
func appendMillis(b []byte, t time.Time) []byte {
	// Format the fast RFC3339Nano layout with a tenth of a millisecond
	// added to the truncated time, so exactly four fractional digits
	// print (trailing zeros are trimmed otherwise), then drop the fourth.
	const fracEnd = len("2006-01-02T15:04:05.000")
	n := len(b)
	b = t.Truncate(time.Millisecond).Add(100*time.Microsecond).AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+fracEnd], b[n+fracEnd+1:]...)
}

// lineEncoder appends the attributes of one line in the text or JSON
// format of log/slog's handlers.
type lineEncoder struct{ json bool }

// key appends the separator and key (always plain ASCII here).
func (e lineEncoder) key(b []byte, k string) []byte {
	if e.json {
		b = append(b, ',', '"')
		b = append(b, k...)
		return append(b, '"', ':')
	}
	b = append(b, ' ')
	b = append(b, k...)
	return append(b, '=')
}

// plain appends a string value known to need no quoting or escaping.
func (e lineEncoder) plain(b []byte, k, v string) []byte {
	b = e.key(b, k)
	if e.json {
		b = append(b, '"')
		b = append(b, v...)
		return append(b, '"')
	}
	return append(b, v...)
}

func (e lineEncoder) str(b []byte, k, v string) []byte {
	return appendValue(e.json, e.key(b, k), v)
}

// appendValue appends a string value: quoted and escaped in JSON; in
// text, bare unless it needs quoting, then quoted as strconv.Quote does.
func appendValue[S string | []byte](json bool, b []byte, v S) []byte {
	if json {
		b = append(b, '"')
		b = appendJSONEscaped(b, v)
		return append(b, '"')
	}
	if needsQuoting(v) {
		return appendQuoted(b, v)
	}
	return append(b, v...)
}

// appendQuoted is strconv.AppendQuote, without its string conversion
// for the ASCII values call lines hold (a request id of "req-7").
func appendQuoted[S string | []byte](b []byte, s S) []byte {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return strconv.AppendQuote(b, string(s))
		}
	}
	b = append(b, '"')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '"', '\\':
			b = append(b, '\\', c)
		case '\a':
			b = append(b, '\\', 'a')
		case '\b':
			b = append(b, '\\', 'b')
		case '\f':
			b = append(b, '\\', 'f')
		case '\n':
			b = append(b, '\\', 'n')
		case '\r':
			b = append(b, '\\', 'r')
		case '\t':
			b = append(b, '\\', 't')
		case '\v':
			b = append(b, '\\', 'v')
		default:
			if c < ' ' || c == 0x7f {
				const digits = "0123456789abcdef"
				b = append(b, '\\', 'x', digits[c>>4], digits[c&0xf])
				continue
			}
			b = append(b, c)
		}
	}
	return append(b, '"')
}

// hex appends the lower-case hex of an id, which never needs quoting.
func (e lineEncoder) hex(b []byte, id []byte) []byte {
	const digits = "0123456789abcdef"
	if e.json {
		b = append(b, '"')
	}
	for _, c := range id {
		b = append(b, digits[c>>4], digits[c&0xf])
	}
	if e.json {
		b = append(b, '"')
	}
	return b
}

// millis appends µs/1000, the duration in milliseconds, as e.float
// would; below 1,000 s it writes the decimal itself, which is what both
// formats print for it (the shortest decimal of the nearest float64 to
// a number of at most 9 significant digits is that number).
func (e lineEncoder) millis(b []byte, us int64) []byte {
	if us < 0 || us >= 1e9 {
		return e.float(b, float64(us)/1000)
	}
	b = strconv.AppendInt(b, us/1000, 10)
	frac := us % 1000
	if frac == 0 {
		return b
	}
	digits := [3]byte{byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
	n := 3
	for digits[n-1] == '0' {
		n--
	}
	b = append(b, '.')
	return append(b, digits[:n]...)
}

// float appends f as the text handler (strconv's shortest %g) or the JSON
// handler (encoding/json's: %f, or %e outside [1e-6, 1e21) with a
// one-digit negative exponent unpadded) writes a float64.
func (e lineEncoder) float(b []byte, f float64) []byte {
	if !e.json {
		return strconv.AppendFloat(b, f, 'g', -1, 64)
	}
	abs := math.Abs(f)
	if abs == 0 || (abs >= 1e-6 && abs < 1e21) {
		return strconv.AppendFloat(b, f, 'f', -1, 64)
	}
	b = strconv.AppendFloat(b, f, 'e', -1, 64)
	if n := len(b); n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
		b[n-2] = b[n-1]
		b = b[:n-1]
	}
	return b
}

// jsonSafe are the ASCII bytes a JSON string holds as they are: the
// printable ones and DEL, but for the quote and the backslash.
var jsonSafe = func() (safe [utf8.RuneSelf]bool) {
	for c := ' '; c < utf8.RuneSelf; c++ {
		safe[c] = c != '"' && c != '\\'
	}
	return safe
}()

// textQuoted are the ASCII bytes that make the text handler quote a
// value: those a JSON string escapes, but for the backslash, and space
// and '='.
var textQuoted = func() (quoted [utf8.RuneSelf]bool) {
	for c := range quoted {
		quoted[c] = c != '\\' && (c == ' ' || c == '=' || !jsonSafe[c])
	}
	return quoted
}()

// needsQuoting is the text handler's rule: a value is quoted when empty,
// or when it holds a space, '=', a quote, a control character, invalid
// UTF-8 or a non-printing or space rune.
func needsQuoting[S string | []byte](s S) bool {
	if len(s) == 0 {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if textQuoted[c] {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// appendJSONEscaped is the JSON handler's string escaping: \\, \", \n,
// \r, \t, \u00XX for the other control bytes, \ufffd for invalid UTF-8,
// and \u2028 and \u2029 escaped.
func appendJSONEscaped[S string | []byte](b []byte, s S) []byte {
	const digits = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', digits[c>>4], digits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', digits[r&0xf])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(b, s[start:]...)
}
