package loadtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// SSESession is an MCP session over the legacy HTTP+SSE transport (GET
// /sse, then POSTs to the endpoint it announces); calls may run
// concurrently on it, their answers coming on the stream.
type SSESession struct {
	hc       *http.Client
	endpoint string
	stop     context.CancelFunc
	calls    *calls
}

// DialSSE opens /sse on the gateway at base and initializes the session.
func DialSSE(ctx context.Context, hc *http.Client, base string) (*SSESession, error) {
	sctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	req, _ := http.NewRequestWithContext(sctx, http.MethodGet, base+"/sse", nil)
	req.Header = http.Header{"Accept": {"text/event-stream"}}
	resp, err := hc.Do(req)
	if err != nil {
		stop()
		return nil, fmt.Errorf("loadtest: GET /sse: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		stop()
		return nil, fmt.Errorf("loadtest: GET /sse: HTTP %d", resp.StatusCode)
	}
	s := &SSESession{hc: hc, stop: stop, calls: newCalls("sse stream")}
	br := bufio.NewReader(resp.Body)
	name, data, err := nextEvent(br)
	if err != nil || name != "endpoint" {
		resp.Body.Close()
		stop()
		return nil, fmt.Errorf("loadtest: GET /sse: first event %q %q, %v; want the endpoint", name, data, err)
	}
	s.endpoint = base + data
	go s.read(resp.Body, br)
	if _, err := s.Call(ctx, "initialize", `{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"loadtest","version":"1"}}`); err != nil {
		s.Close()
		return nil, fmt.Errorf("loadtest: initialize over /sse: %w", err)
	}
	if err := s.post(ctx, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// nextEvent reads one server-sent event, skipping comments (keepalives).
func nextEvent(br *bufio.Reader) (name, data string, err error) {
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return "", "", err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "event: "):
			name = line[len("event: "):]
		case strings.HasPrefix(line, "data: "):
			data = line[len("data: "):]
		case line == "" && name != "":
			return name, data, nil
		}
	}
}

func (s *SSESession) read(body io.ReadCloser, br *bufio.Reader) {
	defer body.Close()
	for {
		name, data, err := nextEvent(br)
		if err != nil {
			s.calls.end(err)
			return
		}
		if name == "message" {
			s.calls.deliver([]byte(data))
		}
	}
}

// post sends one message; the gateway answers 202 and replies on the
// stream.
func (s *SSESession) post(ctx context.Context, msg string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.endpoint, strings.NewReader(msg))
	if err != nil {
		return err
	}
	req.Header = http.Header{"Content-Type": {"application/json"}}
	resp, err := s.hc.Do(req)
	if err != nil {
		return fmt.Errorf("loadtest: POST %s: %w", s.endpoint, err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		return fmt.Errorf("loadtest: POST %s: HTTP %d", s.endpoint, resp.StatusCode)
	}
	return nil
}

// Call implements Conn.
func (s *SSESession) Call(ctx context.Context, method, params string) (json.RawMessage, error) {
	return s.calls.do(ctx, method, params, func(msg []byte) error { return s.post(ctx, string(msg)) })
}

// Close ends the stream, which ends the session, and waits for its reader.
func (s *SSESession) Close() error {
	s.stop()
	<-s.calls.done
	if err := s.calls.err; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
