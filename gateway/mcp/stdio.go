package mcp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ServeStdio serves one MCP connection over newline-delimited JSON: one
// message (or batch) per line on in, one per line on out, and nothing else
// ever written to out. Requests run concurrently, so a slow tool call never
// holds up ping or cancellation; writes are serialized.
//
// It returns nil when in ends, after the calls in flight have finished (or
// been cancelled through ctx); ctx's error when ctx ends (in-flight calls
// are cancelled first); nil after [Server.Shutdown]. A Read blocked on in
// cannot be interrupted: the reading goroutine ends when in is closed.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	sess := newSession("stdio", "")
	w := &stdioWriter{w: bufio.NewWriter(out)}
	sc := &scope{transport: "stdio", out: w}

	l := newListener()
	s.addListener(l)
	defer s.removeListener(l)

	lines := make(chan []byte)
	readErr := make(chan error, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		br := bufio.NewReaderSize(in, 64<<10)
		for {
			line, err := br.ReadBytes('\n')
			if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- line:
				case <-stop:
					return
				}
			}
			if err != nil {
				readErr <- err
				close(lines)
				return
			}
		}
	}()

	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				wg.Wait()
				if err := <-readErr; !errors.Is(err, io.EOF) {
					return fmt.Errorf("mcp: stdio: reading: %w", err)
				}
				return nil
			}
			s.stdioLine(ctx, sess, sc, w, &wg, line)
		case <-l.kick:
			if v := sess.negotiated(); v != "" {
				_ = w.send(listChangedMsg)
			}
		case <-ctx.Done():
			sess.cancelAll()
			wg.Wait()
			return ctx.Err()
		case <-s.done:
			// Shutdown cancels the calls when its deadline passes.
			wg.Wait()
			return nil
		}
	}
}

var listChangedMsg = []byte(`{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)

// stdioLine handles one input line: synchronously up to registering a
// request, then concurrently.
func (s *Server) stdioLine(ctx context.Context, sess *session, sc *scope, w *stdioWriter, wg *sync.WaitGroup, line []byte) {
	line = bytes.TrimSpace(line)
	write := func(r reply, bp *[]byte) {
		if r.body != nil {
			_ = w.send(r.body)
			*bp = r.body
		}
		putBuf(bp)
	}
	if isBatch(line) {
		bp := getBuf()
		if !allowsBatch(sess.negotiated()) {
			write(reply{body: appendError(*bp, nil, errorf(CodeInvalidRequest, "batches are not allowed at this protocol version"))}, bp)
			return
		}
		wg.Go(func() { write(s.handleBatch(ctx, sess, sc, line, *bp), bp) })
		return
	}
	m := new(message)
	if !decodeMessage(line, m) {
		bp := getBuf()
		write(reply{body: appendError(*bp, nil, errorf(CodeParseError, "parse error"))}, bp)
		return
	}
	bp := getBuf()
	cctx, c, r, done := s.accept(ctx, sess, m, *bp)
	if done {
		write(r, bp)
		return
	}
	wg.Go(func() { write(s.finish(cctx, sess, sc, m, c, *bp), bp) })
}

// stdioWriter serializes whole lines onto the output.
type stdioWriter struct {
	mu  sync.Mutex
	w   *bufio.Writer
	err error
}

func (w *stdioWriter) send(msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	w.w.Write(msg)
	w.w.WriteByte('\n')
	if err := w.w.Flush(); err != nil {
		w.err = fmt.Errorf("mcp: stdio: writing: %w", err)
	}
	return w.err
}
