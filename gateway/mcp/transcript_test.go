package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/gorilla/websocket"
	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the transcripts' expected output")

// TestTranscripts replays testdata/transcripts/*.txtar. Each archive has an
// "input" file and a "transcript" file holding the exchange ("> " sent,
// "< " received). The header comment names the transport (stdio or http).
//
// stdio input lines: "send JSON" waits for the next response line;
// "notify JSON" does not wait (notifications, or requests left running).
// http input lines: "post [Header=Value ...] BODY", "get [...]",
// "delete [...]"; the Mcp-Session-Id from initialize is sent automatically
// unless a Mcp-Session-Id=... token overrides it.
func TestTranscripts(t *testing.T) {
	replayTranscripts(t, "testdata/transcripts/*.txtar", func(t *testing.T, mode string, input []byte) string {
		switch {
		case strings.HasPrefix(mode, "stdio"):
			return runStdioTranscript(t, newFakeHandler(t, &ToolListOptions{PageSize: 3}), input, transcriptServerOptions(mode))
		case strings.HasPrefix(mode, "websocket"):
			return runWebSocketTranscript(t, input, transcriptServerOptions(mode))
		case strings.HasPrefix(mode, "http"):
			return runHTTPTranscript(t, input)
		}
		t.Fatalf("unknown transport in comment %q", mode)
		return ""
	})
}

// replayTranscripts runs every archive matching glob through run (given the
// archive's comment and its "input" file) and compares the result with its
// "transcript" file, or rewrites that file with -update.
func replayTranscripts(t *testing.T, glob string, run func(t *testing.T, mode string, input []byte) string) {
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		t.Fatalf("no transcripts: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			ar, err := txtar.ParseFile(file)
			if err != nil {
				t.Fatal(err)
			}
			var input, want []byte
			wantIdx := -1
			for i, f := range ar.Files {
				switch f.Name {
				case "input":
					input = f.Data
				case "transcript":
					want, wantIdx = f.Data, i
				}
			}
			got := run(t, strings.TrimSpace(string(ar.Comment)), input)
			if *update {
				if wantIdx < 0 {
					ar.Files = append(ar.Files, txtar.File{Name: "transcript"})
					wantIdx = len(ar.Files) - 1
				}
				ar.Files[wantIdx].Data = []byte(got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if diff := cmp.Diff(string(want), got); diff != "" {
				t.Errorf("transcript mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func inputLines(input []byte) []string {
	var out []string
	for _, l := range strings.Split(string(input), "\n") {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// transcriptServerOptions reads server options from the comment's first
// line: "maxcalls=N" sets MaxConcurrentCalls.
func transcriptServerOptions(mode string) *ServerOptions {
	o := &ServerOptions{Instructions: "Use the tools."}
	first, _, _ := strings.Cut(mode, "\n")
	for _, f := range strings.FieldsFunc(first, func(r rune) bool { return r == ' ' || r == ',' }) {
		if v, ok := strings.CutPrefix(f, "maxcalls="); ok {
			fmt.Sscan(v, &o.MaxConcurrentCalls)
		}
	}
	return o
}

// runStdioTranscript serves h over stdio pipes and replays input.
func runStdioTranscript(t *testing.T, h Handler, input []byte, opts *ServerOptions) string {
	s := NewServer(testImpl, h, opts)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	lines := make(chan string, 64)
	go func() {
		sc := bufio.NewScanner(outR)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	tr := runLineTranscript(t, input, func(msg string) error {
		_, err := io.WriteString(inW, msg+"\n")
		return err
	}, lines, func() { inW.Close() })
	if err := <-done; err != nil {
		t.Errorf("ServeStdio: %v", err)
	}
	return tr
}

// runWebSocketTranscript runs the stdio format over /ws: one message per
// text frame instead of per line.
func runWebSocketTranscript(t *testing.T, input []byte, opts *ServerOptions) string {
	h := newFakeHandler(t, &ToolListOptions{PageSize: 3})
	s := NewServer(testImpl, h, opts)
	srv := httptest.NewServer(s.WebSocketHandler(nil))
	defer srv.Close()
	defer s.Shutdown(context.Background())
	c, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), http.Header{"Sec-WebSocket-Protocol": {"mcp"}})
	if err != nil {
		t.Fatal(err)
	}
	lines := make(chan string, 64)
	go func() {
		defer close(lines)
		for {
			_, data, err := c.ReadMessage()
			if err != nil {
				return
			}
			lines <- string(data)
		}
	}()
	return runLineTranscript(t, input, func(msg string) error {
		return c.WriteMessage(websocket.TextMessage, []byte(msg))
	}, lines, func() {
		c.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	})
}

// runLineTranscript plays the send/notify input over a message connection
// and records the exchange. closeIn ends the client's side; the output is
// drained until the server closes its side.
func runLineTranscript(t *testing.T, input []byte, write func(string) error, lines <-chan string, closeIn func()) string {
	var tr strings.Builder
	isResponse := func(l string) bool {
		var probe struct {
			Method *string `json:"method"`
		}
		return strings.HasPrefix(l, "[") || (json.Unmarshal([]byte(l), &probe) == nil && probe.Method == nil)
	}
	for _, l := range inputLines(input) {
		verb, msg, _ := strings.Cut(l, " ")
		fmt.Fprintf(&tr, "> %s\n", msg)
		if err := write(msg); err != nil {
			t.Fatal(err)
		}
		switch verb {
		case "notify":
			continue
		case "send":
		default:
			t.Fatalf("unknown verb %q", verb)
		}
		for {
			select {
			case got, ok := <-lines:
				if !ok {
					t.Fatalf("output ended waiting for the response to %s", msg)
				}
				fmt.Fprintf(&tr, "< %s\n", got)
				if !isResponse(got) {
					continue
				}
			case <-time.After(5 * time.Second):
				t.Fatalf("no response to %s", msg)
			}
			break
		}
	}
	closeIn()
	for got := range lines {
		fmt.Fprintf(&tr, "< %s\n", got)
	}
	return tr.String()
}

func runHTTPTranscript(t *testing.T, input []byte) string {
	h := newFakeHandler(t, &ToolListOptions{PageSize: 3})
	s := NewServer(testImpl, h, &ServerOptions{Instructions: "Use the tools."})
	srv := httptest.NewServer(streamableHandler(t, s, nil))
	defer srv.Close()
	defer s.Shutdown(context.Background())
	var tr strings.Builder
	sid := ""
	for _, l := range inputLines(input) {
		verb, rest, _ := strings.Cut(l, " ")
		hdr := http.Header{}
		hdr.Set("Accept", "application/json, text/event-stream")
		hdr.Set("Content-Type", "application/json")
		if sid != "" {
			hdr.Set(headerSessionID, sid)
		}
		body := ""
		for rest != "" && rest[0] != '{' && rest[0] != '[' {
			var tok string
			tok, rest, _ = strings.Cut(rest, " ")
			k, v, _ := strings.Cut(tok, "=")
			if v == "" {
				hdr.Del(k)
			} else {
				hdr.Set(k, v)
			}
		}
		body = rest
		fmt.Fprintf(&tr, "> %s\n", l)
		req, err := http.NewRequest(strings.ToUpper(verb), srv.URL, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header = hdr
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if id := resp.Header.Get(headerSessionID); id != "" {
			sid = id
		}
		ct := resp.Header.Get("Content-Type")
		fmt.Fprintf(&tr, "< %d %s\n", resp.StatusCode, ct)
		if strings.HasPrefix(ct, "text/event-stream") {
			for _, dl := range strings.Split(string(data), "\n") {
				if d, ok := strings.CutPrefix(dl, "data: "); ok {
					fmt.Fprintf(&tr, "< sse %s\n", d)
				}
			}
		} else if len(bytes.TrimSpace(data)) > 0 {
			fmt.Fprintf(&tr, "< %s\n", bytes.TrimSpace(data))
		}
	}
	return tr.String()
}
