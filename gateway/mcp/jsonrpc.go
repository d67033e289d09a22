package mcp

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonscan"
)

// message is one decoded JSON-RPC 2.0 message. Everything but the method
// stays raw (sub-slices of the input, never copies): ids are echoed byte for
// byte and params are decoded only by the method that owns them.
type message struct {
	JSONRPC json.RawMessage
	ID      json.RawMessage
	Method  json.RawMessage
	Params  json.RawMessage
	Result  json.RawMessage
	Error   json.RawMessage

	method string      // unquoted Method, valid after classify
	info   *methodInfo // method's row of the method table, nil if unknown; valid after classify
	raw    []byte      // the whole message as received, for the protocol trace
}

// kind is what a message turned out to be after validation.
type kind uint8

const (
	kindInvalid      kind = iota // answer -32600
	kindRequest                  // has method and id
	kindNotification             // has method, no id
	kindResponse                 // result or error, from the client: ignored
)

// decodeMessage decodes one JSON value that is not a batch. A parse error
// is reported as ok=false and answered -32700 by the caller. Keys match
// exactly (JSON-RPC is case-sensitive); the fields alias data, which must
// outlive m.
func decodeMessage(data []byte, m *message) (ok bool) {
	*m = message{raw: data}
	// A non-object (number, string, array element of the wrong type) is
	// valid JSON but not a message: classify turns the empty message into
	// -32600.
	_, ok = jsonscan.Object(data, func(key, val []byte) {
		switch string(key) {
		case "jsonrpc":
			m.JSONRPC = val
		case "id":
			m.ID = val
		case "method":
			m.Method = val
		case "params":
			m.Params = val
		case "result":
			m.Result = val
		case "error":
			m.Error = val
		}
	})
	if !ok {
		*m = message{}
	}
	return ok
}

// classify validates the envelope. For kindInvalid the returned id is the
// request id when it is well-typed (so the error can name it), else nil
// (answered with id null).
func (m *message) classify() kind {
	idOK := m.ID == nil || validID(m.ID)
	if string(m.JSONRPC) != `"2.0"` {
		if !idOK {
			m.ID = nil
		}
		return kindInvalid
	}
	if !idOK {
		m.ID = nil
		return kindInvalid
	}
	if m.Method == nil {
		if m.ID != nil && (m.Result != nil || m.Error != nil) {
			return kindResponse
		}
		return kindInvalid
	}
	name, info, ok := lookupMethod(m.Method)
	if !ok {
		return kindInvalid
	}
	m.method, m.info = name, info
	if m.ID == nil {
		return kindNotification
	}
	return kindRequest
}

// validID accepts the id types MCP allows: strings and integral numbers
// (in any JSON spelling, e.g. 1e3). null, booleans, objects, arrays and
// numbers with a fractional value are rejected. id comes from the
// validating scanner, so a leading quote means a well-formed string.
func validID(id json.RawMessage) bool {
	if len(id) == 0 {
		return false
	}
	switch c := id[0]; {
	case c == '"':
		return true
	case c == '-' || (c >= '0' && c <= '9'):
		if isPlainInt(id) {
			return true
		}
		f, err := strconv.ParseFloat(string(id), 64)
		return err == nil && f == math.Trunc(f) && !math.IsInf(f, 0)
	}
	return false
}

// isPlainInt reports whether raw is -?[0-9]+, the common spelling of an id
// that needs no float parsing.
func isPlainInt(raw []byte) bool {
	if len(raw) > 0 && raw[0] == '-' {
		raw = raw[1:]
	}
	if len(raw) == 0 || len(raw) > 18 {
		return false
	}
	for _, c := range raw {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// unquoteIntern is jsonscan.Unquote that returns the matching string of table
// (without allocating) when the value is one of them.
func unquoteIntern(raw json.RawMessage, table []string) (string, bool) {
	if len(raw) >= 2 && raw[0] == '"' && raw[len(raw)-1] == '"' {
		inner := raw[1 : len(raw)-1]
		for _, t := range table {
			if string(inner) == t {
				return t, true
			}
		}
	}
	return jsonscan.Unquote(raw)
}

// isBatch reports whether data is a JSON array (after leading whitespace).
func isBatch(data []byte) bool {
	for _, c := range data {
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '[':
			return true
		default:
			return false
		}
	}
	return false
}

// splitBatch returns the elements of the JSON array data as sub-slices
// of it, validating each. It stops counting at max+1 elements, so a batch
// of a million tiny values costs no more than one just over the limit;
// ok is false when data is not valid JSON.
func splitBatch(data []byte, max int) (elems [][]byte, ok bool) {
	i := jsonscan.SpaceEnd(data, 0)
	if i >= len(data) || data[i] != '[' {
		return nil, false
	}
	i = jsonscan.SpaceEnd(data, i+1)
	if i < len(data) && data[i] == ']' {
		return nil, jsonscan.SpaceEnd(data, i+1) == len(data)
	}
	for {
		start := i
		end, ok := jsonscan.Skip(data, i, 1)
		if !ok {
			return nil, false
		}
		elems = append(elems, data[start:end])
		if len(elems) > max {
			return elems, true
		}
		i = jsonscan.SpaceEnd(data, end)
		if i >= len(data) {
			return nil, false
		}
		switch data[i] {
		case ',':
			i = jsonscan.SpaceEnd(data, i+1)
		case ']':
			return elems, jsonscan.SpaceEnd(data, i+1) == len(data)
		default:
			return nil, false
		}
	}
}

// bufPool holds encoding buffers; responses are built with append and the
// buffer returned after the bytes have been written out.
var bufPool = sync.Pool{New: func() any { b := make([]byte, 0, 1024); return &b }}

func getBuf() *[]byte { return bufPool.Get().(*[]byte) }

func putBuf(b *[]byte) {
	if cap(*b) > 1<<20 { // do not keep huge one-off buffers alive
		return
	}
	*b = (*b)[:0]
	bufPool.Put(b)
}

// nullID is the id of errors about a message whose id could not be read.
var nullID = json.RawMessage("null")

func orNull(id json.RawMessage) json.RawMessage {
	if id == nil {
		return nullID
	}
	return id
}

// appendResultHead starts a success response; the caller appends the result
// value and then '}'.
func appendResultHead(b []byte, id json.RawMessage) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, orNull(id)...)
	return append(b, `,"result":`...)
}

// appendResult appends a complete success response with a pre-encoded result.
func appendResult(b []byte, id, result json.RawMessage) []byte {
	b = appendResultHead(b, id)
	b = append(b, result...)
	return append(b, '}')
}

// appendError appends a complete error response.
func appendError(b []byte, id json.RawMessage, e *Error) []byte {
	b = append(b, `{"jsonrpc":"2.0","id":`...)
	b = append(b, orNull(id)...)
	b = append(b, `,"error":{"code":`...)
	b = strconv.AppendInt(b, e.Code, 10)
	b = append(b, `,"message":`...)
	b = appendString(b, e.Message)
	// Data comes from handlers: invalid JSON is left out, and line breaks
	// are compacted away, since stdio and SSE frame messages by line.
	if len(e.Data) > 0 && jsonscan.Valid(e.Data) {
		b = append(b, `,"data":`...)
		b = appendRawCompact(b, e.Data)
	}
	return append(b, "}}"...)
}

// errorf builds a protocol error whose message is format, formatted as
// fmt.Sprintf does with args.
func errorf(code int64, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

const hexDigits = "0123456789abcdef"

// plainByte marks the bytes appendString copies as they are: printable
// ASCII but for the quote, the backslash and <, >, &. One lookup a byte
// where the tests it replaces were six: a tool result's JSON, escaped
// whole as its text block, is a few hundred to thousands of such bytes
// per call.
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendString appends s as a JSON string, byte for byte as encoding/json
// writes it: the protocol layer's own contract (internal/jsonstr says why
// the module has more than one string encoder). It escapes what encoding/json
// escapes (quotes, backslashes, control characters, <, >, &, U+2028, U+2029)
// and replaces invalid UTF-8 with U+FFFD, so the output is identical.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plainByte[c] {
			i++
			continue
		}
		if c < 0x80 {
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == 0xFFFD && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
