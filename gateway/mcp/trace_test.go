package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonscan"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
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

func traceRecords(t *testing.T, logs *testkit.SyncBuffer) []traceRecord {
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
	var lines []stdioLine
	for _, line := range strings.Split(strings.TrimSpace(traceInput), "\n") {
		lines = append(lines, stdioLine{line, strings.Contains(line, `"id":`)})
	}
	logs := serveStdioTraced(t, newFakeHandler(t, nil), trace, bodies, lines)
	return traceRecords(t, logs)
}

// stdioLine is one message a client sends, and whether it is answered.
type stdioLine struct {
	msg   string
	reply bool
}

// serveStdioTraced serves lines on stdio with the trace on (bodies or
// not) and returns the log.
func serveStdioTraced(t *testing.T, h Handler, trace, bodies bool, lines []stdioLine) *testkit.SyncBuffer {
	t.Helper()
	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := &ServerOptions{Logger: logger, TraceBodies: bodies}
	if trace {
		opts.Trace = logger
	}
	s := NewServer(testImpl, h, opts)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() { done <- s.ServeStdio(context.Background(), inR, outW); outW.Close() }()
	replies := bufio.NewScanner(outR)
	replies.Buffer(nil, 1<<20)
	// One message at a time, each request's reply read before the next:
	// requests run concurrently, and tools/call must follow initialize.
	for _, line := range lines {
		if _, err := io.WriteString(inW, line.msg+"\n"); err != nil {
			t.Fatal(err)
		}
		if line.reply && !replies.Scan() {
			t.Fatalf("no reply to %s", line.msg)
		}
	}
	inW.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	return logs
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
	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := NewServer(testImpl, newFakeHandler(t, nil), &ServerOptions{Trace: logger})
	srv := httptest.NewServer(streamableHandler(t, s, nil))
	defer srv.Close()
	post := func(sid, body string) *testkit.Response {
		c := &testkit.Client{URL: srv.URL, SessionID: sid}
		if sid != "" {
			c.Version = "2025-11-25"
		}
		resp, err := c.Post(context.Background(), []byte(body))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	sid := post("", strings.Split(traceInput, "\n")[0]).Header.Get("Mcp-Session-Id")
	post(sid, strings.Split(traceInput, "\n")[2])
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
	logs := &testkit.SyncBuffer{}
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

// payloadSecret is in every payload traceHandler answers with.
const payloadSecret = "payload-secret-9c1e"

// traceHandler answers every method that carries a payload with
// payloadSecret in it: tool results, a task's status message and result,
// a resource's body.
type traceHandler struct {
	ts *ToolList
	rs *ResourceSet
}

func newTraceHandler(t *testing.T) *traceHandler {
	t.Helper()
	ts, err := NewToolList([]Tool{
		{Name: "job", Description: "Runs as a task when asked.", TaskSupport: TaskSupportOptional},
		{Name: "early", Description: "Fails before its task starts.", TaskSupport: TaskSupportOptional},
		{Name: "picky", Description: "Refuses its arguments, quoting them."},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := NewResourceSet([]Resource{{URI: "grpc://a/x.v1.One", Name: "x.v1.One"}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &traceHandler{ts: ts, rs: rs}
}

func (h *traceHandler) Tools() *ToolList        { return h.ts }
func (h *traceHandler) Resources() *ResourceSet { return h.rs }

func secretResult() *CallToolResult {
	return &CallToolResult{
		Content:           []Content{{Type: ContentText, Text: "result " + payloadSecret}},
		StructuredContent: json.RawMessage(`{"secret":"` + payloadSecret + `"}`),
	}
}

func secretTask(status string) *Task {
	t := &Task{ID: "task-1", Status: status, StatusMessage: "metadata " + payloadSecret, CreatedAt: time.Unix(1, 0), LastUpdatedAt: time.Unix(2, 0)}
	if status == TaskCompleted {
		// A tool error, so that isError is there to be kept.
		t.Result = secretResult()
		t.Result.IsError = true
	}
	return t
}

func (h *traceHandler) CallTool(_ context.Context, req *CallToolRequest) (*CallToolResult, error) {
	switch {
	case req.Name == "job" && req.Task != TaskNone:
		return &CallToolResult{Task: secretTask(TaskWorking)}, nil
	case req.Name == "early":
		res := secretResult()
		res.IsError = true
		return res, nil
	case req.Name == "picky":
		return nil, &Error{Code: CodeInvalidParams, Message: "bad text: " + payloadSecret, Data: json.RawMessage(`{"got":"` + payloadSecret + `"}`), Sensitive: true}
	}
	return secretResult(), nil
}

func (h *traceHandler) GetTask(context.Context, string, *TaskRequest) (*Task, error) {
	return secretTask(TaskCompleted), nil
}

func (h *traceHandler) AwaitTask(context.Context, string, *TaskRequest) (*Task, error) {
	return secretTask(TaskCompleted), nil
}

func (h *traceHandler) CancelTask(context.Context, string, *TaskRequest) (*Task, error) {
	return secretTask(TaskWorking), nil
}

func (h *traceHandler) ListTasks(context.Context, string, *TaskRequest) ([]*Task, string, error) {
	return []*Task{secretTask(TaskWorking), secretTask(TaskCompleted)}, "", nil
}

func (h *traceHandler) ReadResource(_ context.Context, req *ReadResourceRequest) (*ResourceContents, error) {
	return &ResourceContents{URI: req.URI, MIMEType: "text/plain", Text: "body " + payloadSecret}, nil
}

// TestTraceHidesEveryPayload sends every message that carries a payload
// in either direction, at 2025-11-25 and 2026-07-28, with payloadSecret
// in each, and greps the trace: without TraceBodies the secret is nowhere
// in the log and each such message shows placeholders with its envelope
// kept (an error's message too, unless the handler marked it Sensitive);
// with TraceBodies each shows the secret, so no case passes for want of a
// payload. It covers what a client may send that hides user
// data too: arguments under a method spelled with escapes or given twice,
// answers to input requests, a stray response, completion and prompt
// arguments.
func TestTraceHidesEveryPayload(t *testing.T) {
	const stateless = `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}`
	secretArgs := `{"text":"` + payloadSecret + `"}`
	cases := []struct {
		id, msg string
		reply   bool
		in, out bool     // the secret is in the message, in its reply
		keep    []string // envelope the trace keeps without TraceBodies
	}{
		{id: `"call"`, msg: `"method":"tools/call","params":{"name":"job","arguments":` + secretArgs + `}`, reply: true, in: true, out: true,
			keep: []string{`"name":"job"`, `"content":"<redacted: `, `"structuredContent":"<redacted: `}},
		{id: `"create"`, msg: `"method":"tools/call","params":{"name":"job","arguments":{},"task":{}}`, reply: true, out: true,
			keep: []string{`"taskId":"task-1"`, `"status":"working"`, `"createdAt":"1970-01-01T00:00:01Z"`, `"io.modelcontextprotocol/model-immediate-response":"<redacted: `}},
		{id: `"early"`, msg: `"method":"tools/call","params":{"name":"early","arguments":{},"task":{}}`, reply: true, out: true,
			keep: []string{`"code":-32603`, `"message":"<redacted: `, `"data":"<redacted: `}},
		{id: `"picky"`, msg: `"method":"tools/call","params":{"name":"picky","arguments":{}}`, reply: true, out: true,
			keep: []string{`"code":-32602`, `"message":"<redacted: `, `"data":"<redacted: `}},
		// An error that repeats no value is shown whole.
		{id: `"unknown"`, msg: `"method":"tools/call","params":{"name":"nope","arguments":{}}`, reply: true,
			keep: []string{`"message":"tools/call: unknown tool \"nope\""`}},
		{id: `"get"`, msg: `"method":"tasks/get","params":{"taskId":"task-1"}`, reply: true, out: true,
			keep: []string{`"taskId":"task-1"`, `"status":"failed"`, `"statusMessage":"<redacted: `}},
		{id: `"result"`, msg: `"method":"tasks/result","params":{"taskId":"task-1"}`, reply: true, out: true,
			keep: []string{`"isError":true`, `"io.modelcontextprotocol/related-task":{"taskId":"task-1"}`}},
		{id: `"list"`, msg: `"method":"tasks/list","params":{}`, reply: true, out: true,
			keep: []string{`"status":"working"`, `"status":"failed"`}},
		{id: `"cancel"`, msg: `"method":"tasks/cancel","params":{"taskId":"task-1"}`, reply: true,
			keep: []string{`"status":"cancelled"`}},
		{id: `"read"`, msg: `"method":"resources/read","params":{"uri":"grpc://a/x.v1.One"}`, reply: true, out: true,
			keep: []string{`"uri":"grpc://a/x.v1.One"`, `"mimeType":"text/plain"`}},
		{id: `"create26"`, msg: `"method":"tools/call","params":{"name":"job","arguments":{},` + stateless + `}`, reply: true, out: true,
			keep: []string{`"resultType":"task"`, `"taskId":"task-1"`}},
		{id: `"get26"`, msg: `"method":"tasks/get","params":{"taskId":"task-1",` + stateless + `}`, reply: true, out: true,
			keep: []string{`"status":"completed"`, `"result":"<redacted: `}},
		{id: `"update26"`, msg: `"method":"tasks/update","params":{"taskId":"task-1","inputResponses":{"q":{"answer":"` + payloadSecret + `"}},` + stateless + `}`, reply: true, in: true,
			keep: []string{`"taskId":"task-1"`}},
		{id: `"esc"`, msg: `"method":"tools\/call","params":{"name":"job","arguments":` + secretArgs + `}`, reply: true, in: true, out: true},
		{id: `"dup"`, msg: `"method":"tools/call","params":{"name":"job","arguments":` + secretArgs + `},"params":{"name":"job","arguments":{}}`, reply: true, in: true, out: true},
		{id: `"complete"`, msg: `"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"p"},"argument":{"name":"a","value":"` + payloadSecret + `"}}`, reply: true, in: true,
			keep: []string{`"code":-32601`}},
		{id: `"prompt"`, msg: `"method":"prompts/get","params":{"name":"p","arguments":` + secretArgs + `}`, reply: true, in: true},
		{id: `"stray"`, msg: `"result":{"content":[{"type":"text","text":"` + payloadSecret + `"}]}`, in: true},
	}
	lines := []stdioLine{
		{strings.Split(traceInput, "\n")[0], true},
		{strings.Split(traceInput, "\n")[1], false},
	}
	for _, c := range cases {
		lines = append(lines, stdioLine{`{"jsonrpc":"2.0","id":` + c.id + `,` + c.msg + `}`, c.reply})
	}
	for _, bodies := range []bool{false, true} {
		logs := serveStdioTraced(t, newTraceHandler(t), true, bodies, lines)
		if !bodies && strings.Contains(logs.String(), payloadSecret) {
			t.Errorf("without TraceBodies the secret is in the log:\n%s", logs.String())
		}
		recs := traceRecords(t, logs)
		for _, c := range cases {
			var in, out string
			for _, r := range recs {
				switch {
				case r.ID != c.id:
				case r.Msg == "mcp in":
					in = r.Body
				case r.Msg == "mcp out":
					out = r.Body
				}
			}
			if in == "" || c.reply && out == "" {
				t.Fatalf("%s: not traced: in %s, out %s", c.id, in, out)
			}
			for _, dir := range []struct {
				name, body string
				secret     bool
			}{{"message", in, c.in}, {"reply", out, c.out}} {
				switch {
				case bodies && dir.secret && !strings.Contains(dir.body, payloadSecret):
					t.Errorf("%s: with TraceBodies the %s must show its payload: %s", c.id, dir.name, dir.body)
				case !bodies && dir.secret && !strings.Contains(dir.body, "<redacted: "):
					t.Errorf("%s: the %s shows no placeholder: %s", c.id, dir.name, dir.body)
				}
			}
			if bodies {
				continue
			}
			for _, k := range c.keep {
				if !strings.Contains(in+out, k) {
					t.Errorf("%s: the trace lost %s:\n%s\n%s", c.id, k, in, out)
				}
			}
			if c.id == `"esc"` && !slices.ContainsFunc(recs, func(r traceRecord) bool { return r.ID == c.id && r.Method == "tools/call" }) {
				t.Errorf("an escaped method is traced as the server reads it, tools/call")
			}
		}
	}
}

// FuzzHideMembers: whatever a client sends, the traced body is one JSON
// value, and every member the table names for the method is a
// placeholder in it, however the message spells it (whitespace, escaped
// keys, repeated members, nesting).
func FuzzHideMembers(f *testing.F) {
	for _, seed := range []struct{ method, msg string }{
		{"tools/call", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"x","arguments":{"a":1}}}`},
		{"tools/call", `{ "params" : { "argu\u006dents" : [1, {"b": "c"}] } , "params":{"arguments":"s"}}`},
		{"tools/call", `{"result":{"task":{"statusMessage":"m"},"_meta":{"io.modelcontextprotocol/model-immediate-response":"m"}}}`},
		{"tasks/list", `{"result":{"tasks":[{"statusMessage":"a"}, {"taskId":"t"}, 3, [], {"statusMessage":{"x":[1]}}]}}`},
		{"resources/read", `{"result":{"contents":[{"text":"a","blob":"b"}]}}`},
		{"", `{"id":1,"result":{"x":"y"},"error":{"code":1,"data":[1]}}`},
		{"tools/call", `[1,2]`},
		{"tools/call", `{"params":`},
	} {
		f.Add(seed.method, []byte(seed.msg))
	}
	f.Fuzz(func(t *testing.T, method string, msg []byte) {
		out := hideMembers(msg, traceHidden[everyMethod], traceHidden[method], sensitiveError)
		if !jsonscan.Valid(out) {
			t.Fatalf("hideMembers(%q) = %q: not JSON", msg, out)
		}
		var spans [][2]int
		for _, list := range [][]memberPath{traceHidden[everyMethod], traceHidden[method], sensitiveError} {
			for _, p := range list {
				findMember(out, out, p, &spans)
			}
		}
		for _, s := range spans {
			if v := out[s[0]:s[1]]; !bytes.HasPrefix(v, []byte(`"<redacted: `)) {
				t.Fatalf("hideMembers(%q) = %q: %s is shown", msg, out, v)
			}
		}
	})
}
