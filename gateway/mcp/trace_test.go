package mcp

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/internal/testutil"
)

type traceRecord struct {
	Msg       string `json:"msg"`
	Transport string `json:"transport"`
	Session   string `json:"session"`
	ID        string `json:"id"`
	Method    string `json:"method"`
	Size      int    `json:"size"`
	Body      string `json:"body"`
}

func traceRecords(t *testing.T, logs *testutil.SyncBuffer) []traceRecord {
	t.Helper()
	var out []traceRecord
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if line == "" {
			continue
		}
		var r traceRecord
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if strings.HasPrefix(r.Msg, "mcp ") {
			out = append(out, r)
		}
	}
	return out
}

const traceInput = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"echo","arguments":{"text":"secret-value"}}}
{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"fail","arguments":{}}}
{"jsonrpc":"2.0","id":4,"method":"nope"}
`

// runTraced serves traceInput on stdio with the trace on (bodies or not)
// and returns the trace records.
func runTraced(t *testing.T, trace bool, bodies bool) []traceRecord {
	t.Helper()
	logs := &testutil.SyncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := &ServerOptions{Logger: logger, TraceBodies: bodies}
	if trace {
		opts.Trace = logger
	}
	s := NewServer(testImpl, newFakeHandler(t, nil), opts)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	replies := bufio.NewScanner(outR)
	// One message at a time, each request's reply read before the next:
	// requests run concurrently, and tools/call must follow initialize.
	for _, line := range strings.Split(strings.TrimSpace(traceInput), "\n") {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"id":`) && !replies.Scan() {
			t.Fatal("no reply")
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return traceRecords(t, logs)
}

// TestTraceStdio: every message in is traced, every reply out is traced
// with its request's id and method, so the two pair; a notification has
// no reply; sizes are the bytes on the wire.
func TestTraceStdio(t *testing.T) {
	recs := runTraced(t, true, false)
	in, out := map[string]traceRecord{}, map[string]traceRecord{}
	for _, r := range recs {
		if r.Transport != "stdio" || r.Size == 0 || r.Body == "" {
			t.Errorf("record missing fields: %+v", r)
		}
		switch r.Msg {
		case "mcp in":
			in[r.ID+" "+r.Method] = r
		case "mcp out":
			out[r.ID+" "+r.Method] = r
		}
	}
	for _, k := range []string{`1 initialize`, `"two" tools/call`, `3 tools/call`, `4 nope`} {
		if _, ok := in[k]; !ok {
			t.Errorf("no trace of request %s in %v", k, recs)
		}
		if _, ok := out[k]; !ok {
			t.Errorf("no trace of the reply to %s", k)
		}
	}
	if _, ok := in[` notifications/initialized`]; !ok {
		t.Errorf("no trace of the notification")
	}
	if len(out) != 4 {
		t.Errorf("%d replies traced, want 4 (none for the notification)", len(out))
	}
	if first := in[`1 initialize`]; first.Size != len(strings.Split(traceInput, "\n")[0]) {
		t.Errorf("initialize size %d, want the line's length", first.Size)
	}
}

// TestTraceRedaction: without TraceBodies argument and result values are
// replaced by their size and the envelope is kept; with it they are shown.
func TestTraceRedaction(t *testing.T) {
	find := func(recs []traceRecord, msg, id string) traceRecord {
		for _, r := range recs {
			if r.Msg == msg && r.ID == id {
				return r
			}
		}
		t.Fatalf("no %s record for id %s", msg, id)
		return traceRecord{}
	}

	recs := runTraced(t, true, false)
	for _, r := range recs {
		if strings.Contains(r.Body, "secret-value") {
			t.Errorf("a value leaked into the trace: %s", r.Body)
		}
	}
	req := find(recs, "mcp in", `"two"`).Body
	if !strings.Contains(req, `"arguments":"<redacted: 23 bytes>"`) {
		t.Errorf("request body: %s", req)
	}
	if !strings.Contains(req, `"name":"echo"`) || !strings.Contains(req, `"id":"two"`) || !strings.Contains(req, `"method":"tools/call"`) {
		t.Errorf("request envelope lost: %s", req)
	}
	res := find(recs, "mcp out", `"two"`).Body
	if !strings.Contains(res, `redacted: `) || strings.Count(res, "redacted: ") != 2 || !strings.Contains(res, `"id":"two"`) {
		t.Errorf("result body, want content and structuredContent redacted: %s", res)
	}
	if fail := find(recs, "mcp out", "3").Body; !strings.Contains(fail, `"isError":true`) {
		t.Errorf("isError is envelope and must stay: %s", fail)
	}
	if e := find(recs, "mcp out", "4").Body; !strings.Contains(e, `"code":-32601`) {
		t.Errorf("an error reply must be shown whole: %s", e)
	}

	recs = runTraced(t, true, true)
	if !strings.Contains(find(recs, "mcp in", `"two"`).Body, "secret-value") || !strings.Contains(find(recs, "mcp out", `"two"`).Body, "secret-value") {
		t.Error("TraceBodies: the values must be shown")
	}

	if recs := runTraced(t, false, true); len(recs) != 0 {
		t.Errorf("trace off, yet %d records", len(recs))
	}
}

// TestTraceStreamableHTTP: the HTTP transport is traced through the same
// hooks, with its transport and session id.
func TestTraceStreamableHTTP(t *testing.T) {
	logs := &testutil.SyncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := NewServer(testImpl, newFakeHandler(t, nil), &ServerOptions{Trace: logger})
	srv := httptest.NewServer(s.StreamableHTTPHandler(nil))
	defer srv.Close()
	post := func(sid, body string) *http.Response {
		req, _ := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
			req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	resp := post("", strings.Split(traceInput, "\n")[0])
	resp.Body.Close()
	sid := resp.Header.Get("Mcp-Session-Id")
	resp = post(sid, strings.Split(traceInput, "\n")[2])
	resp.Body.Close()
	srv.CloseClientConnections()
	var ids []string
	for _, r := range traceRecords(t, logs) {
		if r.Transport != "streamable-http" {
			t.Errorf("transport %q", r.Transport)
		}
		// The trace shows the session's digest, never the id itself,
		// which is a credential for the session.
		if r.Method == "tools/call" && (r.Session != LogID(sid) || len(r.Session) != 16 || strings.Contains(logs.String(), sid)) {
			t.Errorf("session %q, want LogID(%q) = %q and the id nowhere in the trace", r.Session, sid, LogID(sid))
		}
		ids = append(ids, r.Msg+" "+r.ID)
	}
	if got := strings.Join(ids, ","); got != `mcp in 1,mcp out 1,mcp in "two",mcp out "two"` {
		t.Errorf("records %s", got)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = s.Shutdown(ctx)
}

// TestPanicIsAnInternalError: a handler that panics is answered with
// -32603, the log has the panic with the request's id, and the session
// goes on.
func TestPanicIsAnInternalError(t *testing.T) {
	logs := &testutil.SyncBuffer{}
	s := NewServer(testImpl, newFakeHandler(t, nil), &ServerOptions{Logger: slog.New(slog.NewJSONHandler(logs, nil))})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	replies := bufio.NewScanner(outR)
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":"p-7","method":"tools/call","params":{"name":"panic"}}
{"jsonrpc":"2.0","id":8,"method":"ping"}`), "\n") {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, `"id":`) {
			if !replies.Scan() {
				t.Fatal("no reply")
			}
			got = append(got, replies.Text())
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got[1] != `{"jsonrpc":"2.0","id":"p-7","error":{"code":-32603,"message":"internal error"}}` || got[2] != `{"jsonrpc":"2.0","id":8,"result":{}}` {
		t.Errorf("replies %q", got[1:])
	}
	var logged struct {
		Level, Msg, ID string
	}
	for _, line := range strings.Split(strings.TrimSpace(logs.String()), "\n") {
		if strings.Contains(line, "panic") {
			_ = json.Unmarshal([]byte(line), &logged)
		}
	}
	if logged.Level != "ERROR" || logged.ID != `"p-7"` {
		t.Errorf("the panic's log entry %+v, want an error with the request id:\n%s", logged, logs.String())
	}
}
