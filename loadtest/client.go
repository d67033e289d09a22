package loadtest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"
)

// ProtocolVersion is the MCP revision the clients negotiate: the newest
// one with sessions, what most clients speak.
const ProtocolVersion = "2025-11-25"

// Conn is one MCP session from the client's side.
type Conn interface {
	// Call sends a JSON-RPC request and returns its result. A JSON-RPC
	// error, or a tool result with isError, is an error (*RPCError).
	Call(ctx context.Context, method, params string) (json.RawMessage, error)
	// Close ends the session.
	Close() error
}

// RPCError is an answer that is not a success: a JSON-RPC error, or a
// tool result marked isError.
type RPCError struct {
	Code    int
	Message string
}

func (e *RPCError) Error() string {
	if e.Code == 0 {
		return "tool error: " + e.Message
	}
	return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message)
}

// NewTransport is an HTTP transport for many sessions to one gateway:
// enough idle connections kept that calls in flight do not redial.
func NewTransport() *http.Transport {
	return &http.Transport{MaxIdleConnsPerHost: 4096, IdleConnTimeout: time.Minute, DisableCompression: true}
}

type response struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

func (r *response) outcome() (json.RawMessage, error) {
	if r.Error != nil {
		return nil, &RPCError{Code: r.Error.Code, Message: r.Error.Message}
	}
	if bytes.Contains(r.Result, []byte(`"isError":true`)) {
		var tr struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		}
		_ = json.Unmarshal(r.Result, &tr)
		msg := "isError"
		if len(tr.Content) > 0 {
			msg = tr.Content[0].Text
		}
		return nil, &RPCError{Message: msg}
	}
	return r.Result, nil
}

// HTTPSession is a Streamable HTTP session (POST /mcp with its
// Mcp-Session-Id).
type HTTPSession struct {
	base, id string
	hc       *http.Client
	next     atomic.Int64
	get      context.CancelFunc // ends the GET stream, when open
	getDone  chan struct{}
}

// DialHTTP initializes a session on the gateway at base.
func DialHTTP(ctx context.Context, hc *http.Client, base string) (*HTTPSession, error) {
	s := &HTTPSession{base: base, hc: hc}
	resp, err := s.post(ctx, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"`+ProtocolVersion+`","capabilities":{},"clientInfo":{"name":"loadtest","version":"1"}}}`)
	if err != nil {
		return nil, fmt.Errorf("loadtest: initialize: %w", err)
	}
	s.id = resp.Header.Get("Mcp-Session-Id")
	if _, err := readAnswer(resp); err != nil {
		return nil, fmt.Errorf("loadtest: initialize: %w", err)
	}
	if s.id == "" {
		return nil, errors.New("loadtest: initialize: no Mcp-Session-Id")
	}
	resp, err = s.post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if err != nil {
		return nil, fmt.Errorf("loadtest: notifications/initialized: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return nil, fmt.Errorf("loadtest: notifications/initialized: HTTP %d", resp.StatusCode)
	}
	return s, nil
}

func (s *HTTPSession) post(ctx context.Context, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/mcp", strings.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header = http.Header{
		"Content-Type": {"application/json"},
		"Accept":       {"application/json, text/event-stream"},
	}
	if s.id != "" {
		req.Header["Mcp-Session-Id"] = []string{s.id}
		req.Header["Mcp-Protocol-Version"] = []string{ProtocolVersion}
	}
	return s.hc.Do(req)
}

// readAnswer reads a POST's answer: one JSON message, or an SSE stream
// whose last message with an id is the answer (progress notifications
// before it are skipped).
func readAnswer(resp *http.Response) (json.RawMessage, error) {
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		// An answer that is still a JSON-RPC error (503 "retry shortly",
		// 404 for a session gone) is an MCP answer, not a broken exchange.
		var r response
		if json.Unmarshal(b, &r) == nil && r.Error != nil {
			return nil, &RPCError{Code: r.Error.Code, Message: fmt.Sprintf("HTTP %d: %s", resp.StatusCode, r.Error.Message)}
		}
		return nil, fmt.Errorf("HTTP %d: %s", resp.StatusCode, bytes.TrimSpace(b))
	}
	var msg []byte
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(nil, 64<<20)
		for sc.Scan() {
			if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok && !bytes.Contains(d[:min(len(d), 64)], []byte(`"method"`)) {
				msg = append(msg[:0], d...)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, fmt.Errorf("reading the event stream: %w", err)
		}
	} else {
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			return nil, fmt.Errorf("reading the answer: %w", err)
		}
		msg = b
	}
	var r response
	if err := json.Unmarshal(msg, &r); err != nil {
		return nil, fmt.Errorf("decoding the answer %.200q: %w", msg, err)
	}
	return r.outcome()
}

// Post sends one JSON-RPC message in the session and returns the raw
// answer, for a test that reads a call's event stream as it comes (its
// progress notifications) rather than waiting for the answer.
func (s *HTTPSession) Post(ctx context.Context, body string) (*http.Response, error) {
	return s.post(ctx, body)
}

// Call implements Conn.
func (s *HTTPSession) Call(ctx context.Context, method, params string) (json.RawMessage, error) {
	id := s.next.Add(1)
	resp, err := s.post(ctx, `{"jsonrpc":"2.0","id":`+strconv.FormatInt(id, 10)+`,"method":"`+method+`","params":`+params+`}`)
	if err != nil {
		return nil, err
	}
	return readAnswer(resp)
}

// OpenStream opens the session's GET stream (server-to-client messages)
// and keeps it open, reading it, until Close.
func (s *HTTPSession) OpenStream(ctx context.Context) error {
	ctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, s.base+"/mcp", nil)
	req.Header = http.Header{"Accept": {"text/event-stream"}, "Mcp-Session-Id": {s.id}, "Mcp-Protocol-Version": {ProtocolVersion}}
	resp, err := s.hc.Do(req)
	if err != nil {
		cancel()
		return fmt.Errorf("loadtest: GET stream: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		cancel()
		return fmt.Errorf("loadtest: GET stream: HTTP %d", resp.StatusCode)
	}
	s.get, s.getDone = cancel, make(chan struct{})
	go func() {
		defer close(s.getDone)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}()
	return nil
}

// Close ends the GET stream, if open, and DELETEs the session.
func (s *HTTPSession) Close() error {
	if s.get != nil {
		s.get()
		<-s.getDone
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodDelete, s.base+"/mcp", nil)
	req.Header = http.Header{"Mcp-Session-Id": {s.id}, "Mcp-Protocol-Version": {ProtocolVersion}}
	resp, err := s.hc.Do(req)
	if err != nil {
		return fmt.Errorf("loadtest: DELETE session: %w", err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return nil
}

// WSConn is an MCP session over WebSocket (/ws); calls may run
// concurrently on it.
type WSConn struct {
	c     *websocket.Conn
	wmu   sync.Mutex
	calls *calls
}

// DialWS opens /ws on the gateway at base and initializes the session.
func DialWS(ctx context.Context, base string) (*WSConn, error) {
	d := websocket.Dialer{Subprotocols: []string{"mcp"}, HandshakeTimeout: 10 * time.Second}
	c, resp, err := d.DialContext(ctx, "ws"+strings.TrimPrefix(base, "http")+"/ws", nil)
	if err != nil {
		return nil, fmt.Errorf("loadtest: dial /ws: %w", err)
	}
	resp.Body.Close()
	w := &WSConn{c: c, calls: newCalls("websocket")}
	go w.read()
	if _, err := w.Call(ctx, "initialize", `{"protocolVersion":"`+ProtocolVersion+`","capabilities":{},"clientInfo":{"name":"loadtest","version":"1"}}`); err != nil {
		w.Close()
		return nil, fmt.Errorf("loadtest: initialize over /ws: %w", err)
	}
	if err := w.send([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)); err != nil {
		w.Close()
		return nil, err
	}
	return w, nil
}

func (w *WSConn) read() {
	for {
		_, msg, err := w.c.ReadMessage()
		if err != nil {
			w.calls.end(err)
			return
		}
		w.calls.deliver(msg)
	}
}

func (w *WSConn) send(msg []byte) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	_ = w.c.SetWriteDeadline(time.Now().Add(10 * time.Second))
	if err := w.c.WriteMessage(websocket.TextMessage, msg); err != nil {
		return fmt.Errorf("loadtest: websocket write: %w", err)
	}
	return nil
}

// Call implements Conn.
func (w *WSConn) Call(ctx context.Context, method, params string) (json.RawMessage, error) {
	return w.calls.do(ctx, method, params, w.send)
}

// Closed is closed when the connection has ended.
func (w *WSConn) Closed() <-chan struct{} { return w.calls.done }

// Close closes the connection and waits for its reader.
func (w *WSConn) Close() error {
	w.wmu.Lock()
	_ = w.c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	w.wmu.Unlock()
	err := w.c.Close()
	<-w.calls.done
	return err
}

// ID is the session's Mcp-Session-Id.
func (s *HTTPSession) ID() string { return s.id }

// On is the same session reached through another gateway at base: a
// replica of the same fleet serves it (its id is a signed token).
func (s *HTTPSession) On(base string) *HTTPSession {
	return &HTTPSession{base: base, id: s.id, hc: s.hc}
}
