package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// traceSecret labels every job of TestProtocolTraceHidesPayloads: the
// backend repeats it in results, in a failed job's error (a task's
// status message) and, through the result budget, in a kept result.
const traceSecret = "TRACE-SECRET-d41d8cd9"

// traceLine is one record of the JSON log: the trace's members, and
// every string value the record holds, whatever its attribute.
type traceLine struct {
	Msg, Method, Body string
	strings           []string
}

// traceWatch captures the log of a gateway and cuts it into the records
// each step wrote.
type traceWatch struct {
	t    *testing.T
	logs *testkit.SyncBuffer
	mark int
}

// since returns the log records written since the last call.
func (w *traceWatch) since() []traceLine {
	w.t.Helper()
	all := w.logs.String()
	raw := all[w.mark:]
	w.mark = len(all)
	var recs []traceLine
	for _, line := range strings.Split(strings.TrimSpace(raw), "\n") {
		if line == "" {
			continue
		}
		var attrs map[string]any
		if err := json.Unmarshal([]byte(line), &attrs); err != nil {
			w.t.Fatalf("log line %q: %v", line, err)
		}
		var r traceLine
		r.Msg, _ = attrs["msg"].(string)
		r.Method, _ = attrs["method"].(string)
		r.Body, _ = attrs["body"].(string)
		for _, v := range attrs {
			if s, ok := v.(string); ok {
				r.strings = append(r.strings, s)
			}
		}
		recs = append(recs, r)
	}
	return recs
}

// leaks returns the secrets that some record holds, as they are or as a
// JSON string carries them (a status message is JSON inside a body's
// JSON string).
func leaks(recs []traceLine, secrets map[string]bool) []string {
	var out []string
	for s := range secrets {
		for _, r := range recs {
			if slices.ContainsFunc(r.strings, func(v string) bool { return strings.Contains(v, s) || strings.Contains(v, inBody(s)) }) {
				out = append(out, s)
				break
			}
		}
	}
	return out
}

// inBody is how s appears inside a traced body: a JSON string's content.
func inBody(s string) string {
	b, _ := json.Marshal(s)
	return string(b[1 : len(b)-1])
}

// TestProtocolTraceHidesPayloads drives every method whose reply carries
// a tool result, a resource body, a task result or operation metadata
// through a real gateway in front of the long-running-operations
// backend, at 2025-11-25 (a session) and 2026-07-28 (stateless), and
// greps the --log-level debug log: without LogArguments (TraceBodies)
// neither the jobs' label nor any status message the client was sent
// appears anywhere in it; with it, every one of those replies shows
// them, so the test cannot pass for want of traffic. Notifications the
// server sends on a subscriptions/listen stream (notifications/tasks,
// which carry a finished task's result) are not traced at all.
func TestProtocolTraceHidesPayloads(t *testing.T) {
	for _, bodies := range []bool{false, true} {
		name := "redacted"
		if bodies {
			name = "log-arguments"
		}
		t.Run(name, func(t *testing.T) { traceEveryPayload(t, bodies) })
	}
}

func traceEveryPayload(t *testing.T, bodies bool) {
	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// No operation wait: a call of a job not finished at once is a task
	// at 2026-07-28. The smallest result budget makes a long label a cut
	// result kept whole as a resource.
	srv, _, url := startJobs(t, lrotest.Options{}, &gateway.Options{
		Logger: logger, Telemetry: gateway.TelemetryOptions{
			ProtocolTrace: true,
			LogArguments:  bodies,
		},
		Calls: gateway.CallOptions{
			OperationWait: -1,
		}, Results: gateway.ResultOptions{
			MaxBytes: gateway.MinMaxResultBytes,
		},
	})
	w := &traceWatch{t: t, logs: logs}
	// Every payload the client was sent: the label, and the status
	// messages (operation metadata) as the client read them.
	secrets := map[string]bool{traceSecret: true}
	var all []traceLine
	// check looks at what one step traced: with bodies the reply to
	// method must show one of the step's payloads; without, no payload
	// seen so far may be anywhere in the log, and the reply must show
	// placeholders.
	check := func(step, method string, payloads ...string) {
		t.Helper()
		recs := w.since()
		all = append(all, recs...)
		for _, p := range payloads {
			secrets[p] = true
		}
		if leaked := leaks(recs, secrets); !bodies && leaked != nil {
			t.Errorf("%s: %q in the log without LogArguments: %+v", step, leaked, recs)
		}
		out := ""
		for _, r := range recs {
			if r.Msg == "mcp out" && r.Method == method {
				out = r.Body
			}
		}
		switch {
		case out == "":
			t.Fatalf("%s: no trace of the reply to %s: %+v", step, method, recs)
		case bodies && !slices.ContainsFunc(payloads, func(p string) bool { return strings.Contains(out, inBody(p)) }):
			t.Errorf("%s: with LogArguments the reply's payload must be traced: %s", step, out)
		case !bodies && !strings.Contains(out, "<redacted: "):
			t.Errorf("%s: the reply shows no placeholder: %s", step, out)
		}
	}

	c := newSessionClient(t, url)
	w.since()

	// tools/call: a finished job's result, too large for the budget, so
	// it is cut and kept whole.
	big := traceSecret + strings.Repeat("x", 4*gateway.MinMaxResultBytes)
	var res struct {
		Content []struct {
			Type, Text, URI string
		} `json:"content"`
	}
	c.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": big, "steps": 0}}, "", &res)
	check("tools/call", "tools/call", traceSecret)
	link := ""
	for _, b := range res.Content {
		if b.Type == "resource_link" {
			link = b.URI
		}
	}
	if link == "" {
		t.Fatalf("the cut result links to no kept result: %+v", res)
	}

	// resources/read of the kept result.
	var read struct {
		Contents []struct{ Text string } `json:"contents"`
	}
	c.result("resources/read", map[string]any{"uri": link}, "", &read)
	if len(read.Contents) != 1 || !strings.HasPrefix(read.Contents[0].Text, `{"label":"`+traceSecret) {
		t.Fatalf("resources/read of the kept result: %+v", read)
	}
	check("resources/read", "resources/read", traceSecret)

	// Task creation (2025-11-25): a running job's metadata is its status
	// message.
	var created struct {
		Task wireTask `json:"task"`
	}
	c.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": traceSecret, "steps": 2}, "task": map[string]any{}}, "", &created)
	running := created.Task.TaskID
	if created.Task.StatusMessage == "" {
		t.Fatalf("the created task has no status message: %+v", created.Task)
	}
	check("task creation", "tools/call", created.Task.StatusMessage)

	// A job that failed at once: the created task's status message (and
	// the hint in _meta that repeats it) hold the job's error.
	var createdFailed struct {
		Task wireTask                   `json:"task"`
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	c.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": traceSecret, "steps": 0, "fail": true}, "task": map[string]any{}}, "", &createdFailed)
	hint := string(createdFailed.Meta["io.modelcontextprotocol/model-immediate-response"])
	if !strings.Contains(createdFailed.Task.StatusMessage, traceSecret) || !strings.Contains(hint, traceSecret) {
		t.Fatalf("the failed job's task should carry its error: %+v, _meta %s", createdFailed.Task, hint)
	}
	check("task creation of a failed job", "tools/call", traceSecret)

	// tasks/get (2025-11-25): metadata, and a failed job's error.
	var got wireTask
	c.result("tasks/get", map[string]any{"taskId": running}, "", &got)
	check("tasks/get of a running task", "tasks/get", got.StatusMessage)
	c.result("tasks/get", map[string]any{"taskId": createdFailed.Task.TaskID}, "", &got)
	check("tasks/get of a failed task", "tasks/get", traceSecret)

	// tasks/list is not served (tasks.go); TestTraceHidesEveryPayload in
	// gateway/mcp covers its replies for a handler that lists.

	// tasks/result: the task's result.
	c.result("tasks/result", map[string]any{"taskId": running}, "", nil)
	check("tasks/result", "tasks/result", traceSecret)

	// A task-augmented call that created no task: a JSON-RPC error whose
	// message quotes the tool's result and whose data is that result.
	r := c.call("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": traceSecret, "steps": traceSecret}, "task": map[string]any{}}, "")
	if r.Error == nil || !strings.Contains(r.Error.Message, "no task was created") || !strings.Contains(r.Error.Message+string(r.Error.Data), traceSecret) {
		t.Fatalf("a task-augmented call with bad arguments: %+v", r.Error)
	}
	check("task not created", "tools/call", traceSecret)

	// With InputErrorsProtocol, arguments the tool cannot take are a
	// JSON-RPC error whose message quotes them.
	_, strict := newGateway(t, []gateway.Backend{dialBackend(t, "jobs", srv.Addr)}, &gateway.Options{
		Logger: logger, Telemetry: gateway.TelemetryOptions{
			ProtocolTrace: true,
			LogArguments:  bodies,
		}, Calls: gateway.CallOptions{
			InputErrors: gateway.InputErrorsProtocol,
		},
	})
	p := newSessionClient(t, strict+"/mcp")
	w.since()
	r = p.call("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"steps": traceSecret}}, "")
	if r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, traceSecret) {
		t.Fatalf("invalid arguments with InputErrorsProtocol: %+v", r.Error)
	}
	check("invalid arguments, as a protocol error", "tools/call", traceSecret)

	// 2026-07-28: a task's creation, its tasks/get with the result, and
	// notifications/tasks on subscriptions/listen.
	s := &rpcClient{t: t, url: url, version: "2026-07-28"}
	var task wireTask
	s.result("tools/call", stateless(map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": traceSecret, "steps": 2}}, capsTasks), "Jobs_Run", &task)
	if task.ResultType != "task" || task.StatusMessage == "" {
		t.Fatalf("want a task with its metadata: %+v", task)
	}
	check("task creation (2026-07-28)", "tools/call", task.StatusMessage)
	for got = (wireTask{}); got.Status != "completed"; {
		// Each poll advances the job by a step.
		s.result("tasks/get", stateless(map[string]any{"taskId": task.TaskID}, capsTasks), task.TaskID, &got)
		if got.Status != "completed" {
			check("tasks/get of a running task (2026-07-28)", "tasks/get", got.StatusMessage)
		}
	}
	if got.Result == nil || got.Result.StructuredContent["label"] != traceSecret {
		t.Fatalf("the finished task's result: %+v", got.Result)
	}
	check("tasks/get of a finished task (2026-07-28)", "tasks/get", traceSecret)

	var listened wireTask
	s.result("tools/call", stateless(map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": traceSecret, "steps": 1}}, capsTasks), "Jobs_Run", &listened)
	check("task creation for listen", "tools/call", listened.StatusMessage)
	note := listenUntilDone(t, url, listened.TaskID)
	if !strings.Contains(note, traceSecret) {
		t.Fatalf("the finished task's notification carries no result: %s", note)
	}
	recs := w.since()
	all = append(all, recs...)
	for _, rec := range recs {
		if strings.HasPrefix(rec.Msg, "mcp ") && rec.Method != "subscriptions/listen" {
			t.Errorf("a message of the listen stream was traced: %+v", rec)
		}
	}
	if leaked := leaks(recs, map[string]bool{traceSecret: true}); leaked != nil {
		t.Errorf("the listen stream's result is in the log: %+v", recs)
	}
	if leaked := leaks(all, secrets); !bodies && leaked != nil {
		t.Errorf("%q in the log without LogArguments", leaked)
	}
}

// listenUntilDone opens a 2026-07-28 subscriptions/listen for the task
// and returns the notifications/tasks line that reports it finished.
func listenUntilDone(t *testing.T, url, taskID string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": "listen", "method": "subscriptions/listen",
		"params": stateless(map[string]any{"notifications": map[string]any{"taskIds": []string{taskID}}}, capsTasks)})
	raw := &testkit.Client{URL: url, Version: "2026-07-28"}
	resp, err := raw.Send(ctx, http.MethodPost, body, testkit.MethodHeaders("subscriptions/listen", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if ok && strings.Contains(line, `"notifications/tasks"`) && strings.Contains(line, `"status":"completed"`) {
			return line
		}
	}
	t.Fatalf("the listen stream ended without the task finishing: %v", sc.Err())
	return ""
}
