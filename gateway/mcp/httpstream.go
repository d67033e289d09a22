package mcp

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"
)

// httpStream is the response to one POST (or GET): plain JSON unless a
// notification must go out before the response, in which case it becomes
// an SSE stream and everything, the response included, is an event.
type httpStream struct {
	mu           sync.Mutex
	w            http.ResponseWriter
	writeTimeout time.Duration
	rc           *http.ResponseController // set when the stream turns SSE
	srv          *Server                  // told when a write times out
	sse          bool
	done         bool
	failed       bool // a write failed: told once
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
