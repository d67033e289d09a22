package mcp

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// httpStream is the response to one POST (or GET): plain JSON unless a
// notification must go out before the response, in which case it becomes
// an SSE stream and everything, the response included, is an event.
type httpStream struct {
	mu           sync.Mutex
	w            http.ResponseWriter
	conn         net.Conn // set once detached from net/http: events are written here, as chunks
	writeTimeout time.Duration
	rc           *http.ResponseController // set when the stream turns SSE
	srv          *Server                  // told when a write times out
	sse          bool
	done         bool
	failed       bool // a write failed: told once
	closed       bool // a detached stream's connection is closed
}

// failLocked wraps a failed write's error, and tells the server the
// first time.
func (st *httpStream) failLocked(err error) error {
	if !st.failed {
		st.failed = true
		st.srv.observeWriteFailure("streamable-http", err)
	}
	return fmt.Errorf("mcp: sse: %w", err)
}

var errStreamDone = errors.New("mcp: response stream already finished")

func (st *httpStream) startLocked() {
	h := st.w.Header()
	h["Content-Type"] = hvEventStream
	h["Cache-Control"] = hvNoCache
	h["X-Accel-Buffering"] = hvNo
	st.w.WriteHeader(http.StatusOK)
	st.sse = true
	st.rc = http.NewResponseController(st.w)
	_ = st.rc.Flush()
}

// start switches to SSE at once (GET streams).
func (st *httpStream) start() {
	st.mu.Lock()
	st.startLocked()
	st.mu.Unlock()
}

func (st *httpStream) send(msg []byte) error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.done {
		return errStreamDone
	}
	if !st.sse {
		st.startLocked()
	}
	return st.eventLocked(msg)
}

func (st *httpStream) eventLocked(msg []byte) error {
	if st.conn != nil {
		return st.chunkLocked(msg)
	}
	if st.writeTimeout > 0 {
		_ = st.rc.SetWriteDeadline(time.Now().Add(st.writeTimeout))
	}
	if _, err := io.WriteString(st.w, "event: message\ndata: "); err != nil {
		return st.failLocked(err)
	}
	st.w.Write(msg)
	if _, err := io.WriteString(st.w, "\n\n"); err != nil {
		return st.failLocked(err)
	}
	// A wrapping ResponseWriter without Unwrap cannot flush: the event
	// then goes out with the response, as before.
	if err := st.rc.Flush(); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return st.failLocked(err)
	}
	return nil
}

// finishReply is finish for a reply that may be a [Refusal]: while the
// answer is still plain JSON it goes out with the refusal's status and
// headers (403 and its WWW-Authenticate challenge); once the stream is SSE
// the JSON-RPC error alone says it.
func (st *httpStream) finishReply(status int, body []byte, rf *Refusal) {
	if rf != nil && body != nil {
		st.mu.Lock()
		if !st.sse {
			for k, vs := range rf.Header {
				st.w.Header()[k] = vs
			}
			status = rf.Status
		}
		st.mu.Unlock()
	}
	st.finish(status, body)
}

// finish writes the response (nil: none, e.g. a cancelled request) and
// closes the stream to later notifications.
func (st *httpStream) finish(status int, body []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.done = true
	if st.sse {
		if body != nil {
			_ = st.eventLocked(body)
		}
		return
	}
	if body == nil {
		st.w.WriteHeader(http.StatusAccepted)
		return
	}
	setWriteDeadline(st.w, st.writeTimeout)
	st.w.Header()["Content-Type"] = hvJSON
	st.w.WriteHeader(status)
	if _, err := st.w.Write(body); err != nil {
		_ = st.failLocked(err)
	}
}

// An HTTP/1.1 GET stream is detached from net/http once its headers are
// out: the stream writes its events as chunks on the connection itself,
// and a goroutine reading the connection (with a few bytes of stack and
// no buffer) notices the client leaving, as net/http's own background
// read would. What the client receives is the same chunked event stream;
// the connection closes when the stream ends, which the response's
// "Connection: close" announced.

const sseEventPrefix = "event: message\ndata: "

// detach takes the connection from net/http, and reports whether it
// could: not over HTTP/2, nor through a ResponseWriter without Hijack;
// the stream then stays with net/http.
func (st *httpStream) detach() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.rc == nil {
		return false
	}
	conn, ok := takeConn(st.w, st.rc)
	if !ok {
		return false
	}
	st.conn = conn
	// Nothing of net/http's is kept: the response writer would hold its
	// connection's state and buffers alive.
	st.w, st.rc = nil, nil
	return true
}

// takeConn takes a response's connection from net/http (Hijack), once
// its headers are out, if they said "Connection: close": without it the
// client would send its next request on a connection that only ends.
// A client may not send on a connection whose response is still coming
// but for pipelined requests, which "Connection: close" tells it to send
// again elsewhere: what net/http had read ahead is dropped with its
// buffers, and so is whatever comes next.
func takeConn(w http.ResponseWriter, rc *http.ResponseController) (net.Conn, bool) {
	if w.Header().Get("Connection") != "close" {
		return nil, false
	}
	conn, brw, err := rc.Hijack()
	if err != nil {
		return nil, false
	}
	_, _ = brw.Reader.Discard(brw.Reader.Buffered())
	return conn, true
}

// writeChunk writes head, body and tail as one HTTP/1.1 chunk on a
// detached stream's connection, bounded by timeout (none when not
// positive).
func writeChunk(conn net.Conn, timeout time.Duration, head string, body []byte, tail string) error {
	bp := getBuf()
	defer putBuf(bp)
	b := strconv.AppendInt((*bp)[:0], int64(len(head)+len(body)+len(tail)), 16)
	b = append(b, "\r\n"...)
	b = append(b, head...)
	b = append(b, body...)
	b = append(b, tail...)
	b = append(b, "\r\n"...)
	*bp = b
	if timeout > 0 {
		_ = conn.SetWriteDeadline(time.Now().Add(timeout))
	}
	_, err := conn.Write(b)
	return err
}

// endChunked ends a detached stream as net/http ends a response, with the
// last chunk (unless a write has failed: the client is not reading), and
// closes its connection.
func endChunked(conn net.Conn, timeout time.Duration, failed bool) {
	if !failed {
		if timeout > 0 {
			_ = conn.SetWriteDeadline(time.Now().Add(timeout))
		}
		_, _ = io.WriteString(conn, "0\r\n\r\n")
	}
	_ = conn.Close()
}

// discardUntilClosed reads the connection until it fails: the client
// has gone, or the connection was closed.
func discardUntilClosed(conn net.Conn) {
	var buf [64]byte
	for {
		if _, err := conn.Read(buf[:]); err != nil {
			return
		}
	}
}

// chunkLocked writes one event as one HTTP/1.1 chunk.
func (st *httpStream) chunkLocked(msg []byte) error {
	if err := writeChunk(st.conn, st.writeTimeout, sseEventPrefix, msg, "\n\n"); err != nil {
		return st.failLocked(err)
	}
	return nil
}

// abort ends a detached stream, once, as net/http ends a response (its
// last chunk, unless a write has failed), and closes the connection,
// which ends its reader.
func (st *httpStream) abort() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return
	}
	st.closed, st.done = true, true
	endChunked(st.conn, st.writeTimeout, st.failed)
}
