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
	w := &stdioWriter{w: bufio.NewWriter(out)}
	lines := make(chan []byte)
	readErr := make(chan error, 1)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		defer close(lines)
		// The default 4 KiB buffer: readLine gathers longer lines, and an
		// idle connection holds 60 KiB less than with a large buffer.
		br := bufio.NewReader(in)
		for {
			// readLine returns a fresh slice per line: the request may
			// alias it while it runs.
			line, tooLong, err := readLine(br, s.maxLine)
			if tooLong {
				// Answered and skipped; the session goes on. The id
				// cannot be known without reading what was dropped.
				_ = w.send(appendError(nil, nil, errorf(CodeInvalidRequest, "message exceeds the limit of %d bytes", s.maxLine)))
			} else if len(bytes.TrimSpace(line)) > 0 {
				select {
				case lines <- line:
				case <-stop:
					return
				}
			}
			if err != nil {
				readErr <- err
				return
			}
		}
	}()

	switch s.serveConn(ctx, &connConfig{transport: "stdio", out: w, in: lines}) {
	case endInput:
		if err := <-readErr; !errors.Is(err, io.EOF) {
			return fmt.Errorf("mcp: stdio: reading: %w", err)
		}
		return nil
	case endContext:
		return ctx.Err()
	}
	return nil
}

// readLine reads one line (its newline included) of at most max bytes
// before the newline. A longer line is read to its end but not kept, so it
// costs the reader's buffer, not its length; it is reported as tooLong.
func readLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong {
			content := len(line) + len(frag)
			if len(frag) > 0 && frag[len(frag)-1] == '\n' {
				content--
			}
			if content > max {
				tooLong, line = true, nil
			} else {
				line = append(line, frag...)
			}
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return line, tooLong, err
	}
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
