package mcp

// HTTP plumbing shared by the HTTP transports (/mcp, /sse, /ws): reading
// bodies within their limits, writing JSON-RPC errors, and header helpers
// that avoid allocating on the hot path.

import (
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net"
	"net/http"
	"strings"
	"time"
)

// writeJSONError answers with an HTTP status and a JSON-RPC error body.
func writeJSONError(w http.ResponseWriter, status int, id json.RawMessage, e *Error) {
	setWriteDeadline(w, DefaultWriteTimeout)
	bp := getBuf()
	b := appendError(*bp, id, e)
	w.Header()["Content-Type"] = hvJSON
	w.WriteHeader(status)
	w.Write(b)
	*bp = b
	putBuf(bp)
}

// Header values assigned straight into the header map: Header.Set would
// canonicalise the (already canonical) key and allocate a one-element slice
// per response. Each slice has capacity 1, so a later Add copies instead of
// writing into the shared array.
var (
	hvJSON        = []string{"application/json"}
	hvEventStream = []string{"text/event-stream"}
	hvNoCache     = []string{"no-cache, no-transform"}
	hvNo          = []string{"no"}
	hvClose       = []string{"close"}
)

// headerValue is Header.Get for a key already in canonical form, skipping
// the canonicalisation scan.
func headerValue(h http.Header, canonicalKey string) string {
	if v := h[canonicalKey]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// isJSONContentType reports whether ct is application/json, with or
// without parameters; the common spellings skip mime.ParseMediaType.
func isJSONContentType(ct string) bool {
	const mt = "application/json"
	if len(ct) >= len(mt) && strings.EqualFold(ct[:len(mt)], mt) && (len(ct) == len(mt) || ct[len(mt)] == ';') {
		return true
	}
	t, _, err := mime.ParseMediaType(ct)
	return err == nil && t == mt
}

// readBody reads the whole body into buf, which grows with what actually
// arrives: a declared Content-Length over the limit is refused before
// reading, but a declared length under it reserves nothing, so a client
// that announces 4 MiB and sends one byte holds one buffer's worth of
// memory, not 4 MiB. An unbounded (chunked) body is cut at limit+1 bytes.
// Unlike http.MaxBytesReader it allocates nothing of its own. The server
// closes a connection whose body was not read to the end.
func readBody(r *http.Request, limit int64, buf []byte) ([]byte, error) {
	if r.ContentLength > limit {
		return buf, &http.MaxBytesError{Limit: limit}
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			return buf, &http.MaxBytesError{Limit: limit}
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}

// drainLimit is how much of an oversized body is read and dropped before
// the 413 is answered: four times the limit, at most 64 MiB (and within
// the request's read deadline, RequestDeadlines).
func drainLimit(limit int64) int64 {
	return min(4*limit, 64<<20)
}

// drainBody reads and drops r's body up to n bytes, and reports whether
// it reached the body's end.
func drainBody(r *http.Request, n int64) bool {
	if r.ContentLength > n {
		return false
	}
	m, err := io.Copy(io.Discard, io.LimitReader(r.Body, n+1))
	return err == nil && m <= n
}

// writeBodyError answers a body that could not be read. The client gets a
// generic text (the error names the connection's addresses); the detail
// goes to the log at debug level.
func (s *Server) writeBodyError(w http.ResponseWriter, r *http.Request, err error) {
	var mbe *http.MaxBytesError
	var ne net.Error
	switch {
	case errors.As(err, &mbe):
		// Read (and drop) what the client is still sending before
		// answering: many HTTP clients (the Python SDK's among them)
		// write the whole body before they read, and fail with a broken
		// connection, never seeing the answer, when the server answers
		// early and closes. Past drainLimit the connection is closed
		// after the answer instead: the bytes are not worth reading.
		if !drainBody(r, drainLimit(mbe.Limit)) {
			w.Header().Set("Connection", "close")
		}
		writeJSONError(w, http.StatusRequestEntityTooLarge, nil, errorf(CodeInvalidRequest,
			"request body exceeds the limit of %d bytes (MaxRequestBytes; the gateway's --max-request-bytes): send less, or ask the operator to raise the limit", mbe.Limit))
		return
	case errors.As(err, &ne) && ne.Timeout():
		writeJSONError(w, http.StatusRequestTimeout, nil, errorf(CodeInvalidRequest, "request body not received in time"))
	default:
		writeJSONError(w, http.StatusBadRequest, nil, errorf(CodeParseError, "could not read the request body"))
	}
	s.log.Debug("mcp: reading a request body", "remote", r.RemoteAddr, "error", err)
}

// RequestDeadlines wraps an HTTP handler (the gateway wraps its whole
// front door) with per-request deadlines, where a server-wide
// ReadTimeout or WriteTimeout would cut the long-lived GET/SSE streams
// and WebSockets:
//
//   - a request with a body must deliver all of it within readTimeout of
//     the handler's start, or its read fails (the transports answer 408)
//     and the connection closes: a slow sender holds a connection for
//     readTimeout at most, on top of the server's ReadHeaderTimeout. The
//     deadline is lifted once the body has been read, so a long call or
//     its response stream is not cut. (net/http lifts it too when the
//     body ends, HTTP/1.1 to watch for the client going away and HTTP/2
//     because a stream's deadline bounds only its body; deadlineBody does
//     it explicitly so this does not rest on those internals.)
//   - a write deadline left on a keep-alive connection by the previous
//     response (the transports set one before each write, see
//     StreamableHTTPOptions.WriteTimeout) is cleared, so it cannot fail
//     the next request's writes.
//
// A readTimeout <= 0 sets no read deadline.
func RequestDeadlines(readTimeout time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc := http.NewResponseController(w)
		_ = rc.SetWriteDeadline(time.Time{})
		if readTimeout > 0 && r.Body != nil && r.Body != http.NoBody && (r.ContentLength != 0) {
			if rc.SetReadDeadline(time.Now().Add(readTimeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// deadlineBody lifts the read deadline when the body ends (or is closed).
type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && !b.done {
		b.done = true
		if errors.Is(err, io.EOF) {
			_ = b.rc.SetReadDeadline(time.Time{})
		}
	}
	return n, err
}

func (b *deadlineBody) Close() error {
	if !b.done {
		b.done = true
		_ = b.rc.SetReadDeadline(time.Time{})
	}
	return b.ReadCloser.Close()
}

// setWriteDeadline bounds the next writes of a response; a client that
// does not read is cut instead of pinning the handler.
func setWriteDeadline(w http.ResponseWriter, d time.Duration) {
	if d > 0 {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(d))
	}
}

// acceptsBoth reports whether a POST's Accept admits both JSON and SSE
// answers; the spelling every SDK sends is recognised without parsing.
func acceptsBoth(h http.Header) bool {
	if v := h["Accept"]; len(v) == 1 && v[0] == "application/json, text/event-stream" {
		return true
	}
	return accepts(h, "application/json") && accepts(h, "text/event-stream")
}

// accepts reports whether the Accept header admits media type mt, exactly
// or through a wildcard.
func accepts(h http.Header, mt string) bool {
	major := mt[:strings.IndexByte(mt, '/')]
	for _, v := range h.Values("Accept") {
		for part := range strings.SplitSeq(v, ",") {
			if i := strings.IndexByte(part, ';'); i >= 0 {
				part = part[:i]
			}
			part = strings.TrimSpace(part)
			if strings.EqualFold(part, mt) || part == "*/*" || strings.EqualFold(part, major+"/*") {
				return true
			}
		}
	}
	return false
}
