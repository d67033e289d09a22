package gateway_test

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/metadata"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// The go-sdk test client speaks no tasks, so these tests drive the wire
// directly: a 2025-11-25 session and 2026-07-28 stateless requests. The
// TypeScript SDK's task client is run against the same backend by
// interop/sdk.test.mjs.

// rpcClient posts JSON-RPC requests to /mcp, in a session (2025-11-25) or
// stateless (2026-07-28).
type rpcClient struct {
	t       *testing.T
	url     string
	version string
	session string
	id      int
	token   string      // sent as a bearer token when set
	header  http.Header // more headers for every request
}

type rpcReply struct {
	status int             // the HTTP status
	Result json.RawMessage `json:"result"`
	Error  *struct {
		Code    int64           `json:"code"`
		Message string          `json:"message"`
		Data    json.RawMessage `json:"data"`
	} `json:"error"`
}

// caps2026 are the per-request client capabilities with and without the
// tasks extension.
var (
	capsTasks   = map[string]any{"extensions": map[string]any{"io.modelcontextprotocol/tasks": map[string]any{}}}
	capsNoTasks = map[string]any{}
)

func newSessionClient(t *testing.T, url string) *rpcClient {
	return newSessionClientAs(t, url, "")
}

func newSessionClientAs(t *testing.T, url, token string) *rpcClient {
	c := &rpcClient{t: t, url: url, version: "2025-11-25", token: token}
	var init struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	c.result("initialize", map[string]any{"protocolVersion": "2025-11-25", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}, "", &init)
	// No "list": the gateway cannot prove which operations are the
	// caller's, and the revision lets a list hold only those.
	if string(init.Capabilities["tasks"]) != `{"cancel":{},"requests":{"tools":{"call":{}}}}` {
		t.Fatalf("2025-11-25 initialize capabilities: %s", init.Capabilities["tasks"])
	}
	c.notify("notifications/initialized")
	return c
}

// raw is the raw client c's requests go through.
func (c *rpcClient) raw() *testkit.Client {
	h := c.header.Clone()
	if c.token != "" {
		if h == nil {
			h = http.Header{}
		}
		h.Set("Authorization", "Bearer "+c.token)
	}
	return &testkit.Client{URL: c.url, SessionID: c.session, Version: c.version, Header: h}
}

// wire are the headers of method at c's revision; name is the Mcp-Name
// header at 2026-07-28.
func (c *rpcClient) wire(method, name string) http.Header {
	if c.version != "2026-07-28" {
		return nil
	}
	return testkit.MethodHeaders(method, name)
}

// call posts one request; name is the Mcp-Name header at 2026-07-28.
func (c *rpcClient) call(method string, params map[string]any, name string) rpcReply {
	c.t.Helper()
	c.id++
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": c.id, "method": method, "params": params})
	resp, err := c.raw().Do(context.Background(), http.MethodPost, body, c.wire(method, name))
	if err != nil {
		c.t.Fatal(err)
	}
	if s := resp.Header.Get("Mcp-Session-Id"); s != "" {
		c.session = s
	}
	data := resp.Message()
	r := rpcReply{status: resp.Status}
	if err := json.Unmarshal([]byte(data), &r); err != nil {
		c.t.Fatalf("%s: HTTP %d, undecodable reply %q: %v", method, resp.Status, data, err)
	}
	return r
}

func (c *rpcClient) result(method string, params map[string]any, name string, into any) {
	c.t.Helper()
	r := c.call(method, params, name)
	if r.Error != nil {
		c.t.Fatalf("%s: error %d %s", method, r.Error.Code, r.Error.Message)
	}
	if into != nil {
		if err := json.Unmarshal(r.Result, into); err != nil {
			c.t.Fatalf("%s: %s: %v", method, r.Result, err)
		}
	}
}

func (c *rpcClient) notify(method string) {
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": method})
	if _, err := c.raw().Post(context.Background(), body); err != nil {
		c.t.Fatal(err)
	}
}

// stateless adds the 2026-07-28 per-request _meta to params.
func stateless(params map[string]any, caps map[string]any) map[string]any {
	params["_meta"] = map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": caps,
		"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "t", "version": "1"},
	}
	return params
}

type wireTask struct {
	TaskID         string          `json:"taskId"`
	Status         string          `json:"status"`
	StatusMessage  string          `json:"statusMessage"`
	CreatedAt      string          `json:"createdAt"`
	LastUpdatedAt  string          `json:"lastUpdatedAt"`
	TTL            json.RawMessage `json:"ttl"`
	TTLMs          json.RawMessage `json:"ttlMs"`
	PollInterval   int64           `json:"pollInterval"`
	PollIntervalMs int64           `json:"pollIntervalMs"`
	ResultType     string          `json:"resultType"`
	Result         *struct {
		StructuredContent map[string]any `json:"structuredContent"`
		IsError           bool           `json:"isError"`
	} `json:"result"`
}

func TestTasks20251125(t *testing.T) {
	srv, g, url := startJobs(t, lrotest.Options{}, nil)
	c := newSessionClient(t, url)

	var list struct {
		Tools []struct {
			Name      string          `json:"name"`
			Execution json.RawMessage `json:"execution"`
		} `json:"tools"`
	}
	c.result("tools/list", map[string]any{}, "", &list)
	for _, tl := range list.Tools {
		want := ""
		if tl.Name == "Jobs_Run" || tl.Name == "slow_compute" || tl.Name == "failing_job" {
			want = `{"taskSupport":"optional"}`
		}
		if string(tl.Execution) != want {
			t.Errorf("%s execution %s, want %q", tl.Name, tl.Execution, want)
		}
	}

	// A task-augmented call answers at once with the task: its id is the
	// gateway's signed one, not the operation's name.
	var created struct {
		Task wireTask `json:"task"`
	}
	c.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": "t", "steps": 2}, "task": map[string]any{"ttl": 60000}}, "", &created)
	task := created.Task
	if task.TaskID == "" || strings.Contains(task.TaskID, srv.Jobs()[0]) || task.Status != "working" || string(task.TTL) != "null" || task.PollInterval != 1000 || srv.Polls() != 0 {
		t.Fatalf("CreateTaskResult %+v (polls %d)", task, srv.Polls())
	}
	if _, err := time.Parse(time.RFC3339Nano, task.CreatedAt); err != nil || !strings.Contains(task.StatusMessage, `"createTime"`) {
		t.Errorf("task timestamps and metadata: %+v", task)
	}
	// tasks/get polls (each poll advances the test job by a step).
	var got wireTask
	c.result("tasks/get", map[string]any{"taskId": task.TaskID}, "", &got)
	if got.TaskID != task.TaskID || got.Status != "working" || !strings.Contains(got.StatusMessage, `"step":1`) {
		t.Errorf("tasks/get: %+v", got)
	}
	// The task's times are the metadata's create_time and update_time.
	var meta struct{ CreateTime, UpdateTime time.Time }
	if err := json.Unmarshal([]byte(got.StatusMessage), &meta); err != nil {
		t.Fatal(err)
	}
	createdAt, _ := time.Parse(time.RFC3339Nano, got.CreatedAt)
	updatedAt, _ := time.Parse(time.RFC3339Nano, got.LastUpdatedAt)
	if meta.CreateTime.IsZero() || !createdAt.Equal(meta.CreateTime) || !updatedAt.Equal(meta.UpdateTime) {
		t.Errorf("task times %s, %s; metadata %s", got.CreatedAt, got.LastUpdatedAt, got.StatusMessage)
	}
	// tasks/result blocks until done and returns what the call would have.
	var res struct {
		StructuredContent map[string]any             `json:"structuredContent"`
		Meta              map[string]json.RawMessage `json:"_meta"`
	}
	c.result("tasks/result", map[string]any{"taskId": task.TaskID}, "", &res)
	if res.StructuredContent["label"] != "t" || res.StructuredContent["stepsDone"] != float64(2) ||
		string(res.Meta["io.modelcontextprotocol/related-task"]) != `{"taskId":"`+task.TaskID+`"}` {
		t.Errorf("tasks/result: %+v", res)
	}
	c.result("tasks/get", map[string]any{"taskId": task.TaskID}, "", &got)
	if got.Status != "completed" {
		t.Errorf("finished task: %+v", got)
	}
	// A terminal task cannot be cancelled.
	if r := c.call("tasks/cancel", map[string]any{"taskId": task.TaskID}, ""); r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "terminal status 'completed'") {
		t.Errorf("cancelling a completed task: %+v", r.Error)
	}

	// A failing job is a failed task whose result is the tool error.
	c.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": "f", "steps": 1, "fail": true}, "task": map[string]any{}}, "", &created)
	var failed struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
	}
	c.result("tasks/result", map[string]any{"taskId": created.Task.TaskID}, "", &failed)
	c.result("tasks/get", map[string]any{"taskId": created.Task.TaskID}, "", &got)
	if !failed.IsError || !strings.HasPrefix(failed.Content[0].Text, "FAILED_PRECONDITION: job f failed") || got.Status != "failed" || !strings.Contains(got.StatusMessage, "FAILED_PRECONDITION") {
		t.Errorf("failed task: result %+v, task %+v", failed, got)
	}

	// Cancelling a running task calls CancelOperation.
	c.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"never": true}, "task": map[string]any{}}, "", &created)
	c.result("tasks/cancel", map[string]any{"taskId": created.Task.TaskID}, "", &got)
	if got.Status != "cancelled" || len(srv.Cancelled()) != 1 || srv.Cancelled()[0] != srv.Jobs()[2] {
		t.Errorf("tasks/cancel: %+v, backend cancelled %v", got, srv.Cancelled())
	}
	c.result("tasks/get", map[string]any{"taskId": created.Task.TaskID}, "", &got)
	if got.Status != "cancelled" {
		t.Errorf("cancelled task reads %+v", got)
	}

	// There is no tasks/list (the capability declares none).
	if r := c.call("tasks/list", map[string]any{}, ""); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("tasks/list: %+v", r)
	}

	// A task-augmented call that cannot start its operation creates no
	// task: the tool's error comes as a JSON-RPC error, with the result as
	// its data.
	r := c.call("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"steps": "many"}, "task": map[string]any{}}, "")
	if r.Error == nil || r.Error.Code != -32603 || !strings.Contains(r.Error.Message, "no task was created: invalid arguments for Jobs_Run") || !strings.Contains(string(r.Error.Data), `"isError":true`) {
		t.Errorf("a task-augmented call with bad arguments: %+v", r.Error)
	}

	// Unknown tasks and tools without task support are protocol errors;
	// an id the gateway did not issue, even a real operation's name,
	// reaches no backend.
	polls := srv.Polls()
	for _, id := range []string{"operations/nope", srv.Jobs()[0], created.Task.TaskID + "x", created.Task.TaskID[:len(created.Task.TaskID)-2]} {
		if r := c.call("tasks/get", map[string]any{"taskId": id}, ""); r.Error == nil || r.Error.Code != -32602 || r.Error.Message != "Failed to retrieve task: Task not found" {
			t.Errorf("tasks/get %q: %+v", id, r)
		}
	}
	if srv.Polls() != polls {
		t.Errorf("ids the gateway did not issue reached the backend: %d GetOperation calls", srv.Polls()-polls)
	}
	if r := c.call("tools/call", map[string]any{"name": "Jobs_Peek", "arguments": map[string]any{}, "task": map[string]any{}}, ""); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("task-augmented call of a tool without task support: %+v", r)
	}
	_ = g
}

func TestTasks20260728(t *testing.T) {
	// GetOperation polling (no WaitOperation) is slow enough that a job of
	// 50 steps is still running when the 200ms wait ends.
	srv, _, url := startJobs(t, lrotest.Options{NoWait: true}, &gateway.Options{Calls: gateway.CallOptions{OperationWait: 200 * time.Millisecond}})
	c := &rpcClient{t: t, url: url, version: "2026-07-28"}

	var disc struct {
		Capabilities struct {
			Extensions map[string]json.RawMessage `json:"extensions"`
		} `json:"capabilities"`
	}
	c.result("server/discover", stateless(map[string]any{}, capsNoTasks), "", &disc)
	if string(disc.Capabilities.Extensions["io.modelcontextprotocol/tasks"]) != "{}" {
		t.Fatalf("server/discover does not advertise the tasks extension: %+v", disc)
	}

	// A call that finishes within the wait is answered with its result,
	// even to a client that takes tasks.
	var res wireTask
	c.result("tools/call", stateless(map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": "quick"}}, capsTasks), "Jobs_Run", &res)
	if res.ResultType != "complete" {
		t.Errorf("a quick call should complete: %+v", res)
	}

	// One that does not becomes a task for a client that takes tasks...
	var task wireTask
	c.result("tools/call", stateless(map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": "slow", "never": true}}, capsTasks), "Jobs_Run", &task)
	if task.ResultType != "task" || task.TaskID == "" || task.TaskID == srv.Jobs()[1] || task.Status != "working" || string(task.TTLMs) != "null" || task.PollIntervalMs <= 0 {
		t.Fatalf("CreateTaskResult: %+v", task)
	}
	// ...and the handle for one that does not.
	var handle struct {
		StructuredContent map[string]map[string]any `json:"structuredContent"`
	}
	c.result("tools/call", stateless(map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"never": true}}, capsNoTasks), "Jobs_Run", &handle)
	if handle.StructuredContent["operation"]["done"] != false {
		t.Errorf("without the extension the unfinished call returns the handle: %+v", handle)
	}

	var got wireTask
	c.result("tasks/get", stateless(map[string]any{"taskId": task.TaskID}, capsTasks), task.TaskID, &got)
	if got.ResultType != "complete" || got.Status != "working" || got.Result != nil {
		t.Errorf("tasks/get of a running task: %+v", got)
	}
	// tasks/update is acknowledged (no task of the gateway needs input).
	var ack wireTask
	c.result("tasks/update", stateless(map[string]any{"taskId": task.TaskID, "inputResponses": map[string]any{}}, capsTasks), task.TaskID, &ack)
	if ack.ResultType != "complete" {
		t.Errorf("tasks/update: %+v", ack)
	}
	c.result("tasks/cancel", stateless(map[string]any{"taskId": task.TaskID}, capsTasks), task.TaskID, &ack)
	if ack.ResultType != "complete" || len(srv.Cancelled()) != 1 {
		t.Errorf("tasks/cancel: %+v, backend cancelled %v", ack, srv.Cancelled())
	}
	c.result("tasks/get", stateless(map[string]any{"taskId": task.TaskID}, capsTasks), task.TaskID, &got)
	if got.Status != "cancelled" {
		t.Errorf("cancelled task: %+v", got)
	}

	// A failing job: completed, its result the tool error (the extension
	// keeps "failed" for JSON-RPC errors).
	var failed wireTask
	c.result("tools/call", stateless(map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"fail": true, "steps": 50}}, capsTasks), "Jobs_Run", &failed)
	if failed.ResultType != "task" {
		t.Fatalf("want a task: %+v", failed)
	}
	for got.Status = ""; got.Status != "completed"; {
		c.result("tasks/get", stateless(map[string]any{"taskId": failed.TaskID}, capsTasks), failed.TaskID, &got)
		if got.Status != "working" && got.Status != "completed" {
			t.Fatalf("failing task: %+v", got)
		}
	}
	if got.Result == nil || !got.Result.IsError {
		t.Errorf("a failed operation is a completed task with an isError result: %+v", got)
	}

	// Without the extension the task methods are refused with -32021; a
	// wrong Mcp-Name is a header mismatch.
	if r := c.call("tasks/get", stateless(map[string]any{"taskId": task.TaskID}, capsNoTasks), task.TaskID); r.Error == nil || r.Error.Code != -32021 || !strings.Contains(string(r.Error.Data), "io.modelcontextprotocol/tasks") {
		t.Errorf("tasks/get without the extension: %+v", r.Error)
	}
	if r := c.call("tasks/get", stateless(map[string]any{"taskId": task.TaskID}, capsTasks), "other"); r.Error == nil || r.Error.Code != -32020 {
		t.Errorf("tasks/get with a wrong Mcp-Name: %+v", r.Error)
	}
}

// notifications/tasks: a 2026-07-28 subscriptions/listen naming a task
// gets its status changes, and the result once it is done.
func TestTaskNotifications(t *testing.T) {
	srv, _, url := startJobs(t, lrotest.Options{NoWait: true}, &gateway.Options{Calls: gateway.CallOptions{OperationWait: -1}})
	c := &rpcClient{t: t, url: url, version: "2026-07-28"}
	var task wireTask
	c.result("tools/call", stateless(map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": "n", "steps": 2}}, capsTasks), "Jobs_Run", &task)
	if task.ResultType != "task" || task.TaskID == "" || task.TaskID == srv.Jobs()[0] {
		t.Fatalf("want a task: %+v", task)
	}
	if r := c.call("subscriptions/listen", stateless(map[string]any{"notifications": map[string]any{"taskIds": []string{task.TaskID}}}, capsNoTasks), ""); r.Error == nil || r.Error.Code != -32021 {
		t.Errorf("listening for tasks without the extension: %+v", r.Error)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "subscriptions/listen",
		"params": stateless(map[string]any{"notifications": map[string]any{"taskIds": []string{task.TaskID}}}, capsTasks)})
	raw := &testkit.Client{URL: url, Version: "2026-07-28"}
	resp, err := raw.Send(ctx, http.MethodPost, body, testkit.MethodHeaders("subscriptions/listen", ""))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	var statuses []string
	acked := false
	for sc.Scan() {
		line, ok := strings.CutPrefix(sc.Text(), "data: ")
		if !ok {
			continue
		}
		var msg struct {
			Method string `json:"method"`
			Params struct {
				Notifications struct {
					TaskIDs []string `json:"taskIds"`
				} `json:"notifications"`
				wireTask
			} `json:"params"`
		}
		if err := json.Unmarshal([]byte(line), &msg); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		switch msg.Method {
		case "notifications/subscriptions/acknowledged":
			acked = len(msg.Params.Notifications.TaskIDs) == 1 && msg.Params.Notifications.TaskIDs[0] == task.TaskID
		case "notifications/tasks":
			statuses = append(statuses, msg.Params.Status)
			if msg.Params.TaskID != task.TaskID {
				t.Errorf("notification for %q", msg.Params.TaskID)
			}
			if msg.Params.Status == "completed" {
				if msg.Params.Result == nil || msg.Params.Result.StructuredContent["stepsDone"] != float64(2) {
					t.Errorf("the completed task's notification carries the result: %+v", msg.Params.Result)
				}
				cancel()
			}
		}
	}
	if !acked || len(statuses) != 2 || statuses[0] != "working" || statuses[1] != "completed" {
		t.Errorf("acknowledged %v, statuses %v; want working then completed", acked, statuses)
	}
}

// Tasks live in the backend: a task started through one gateway is
// answered by another in front of the same backend that shares its
// session secret, and by no other. And they exist only at the revisions
// that define them.
func TestTasksAnyReplicaAndRevisions(t *testing.T) {
	srv, stop, err := lrotest.Start(lrotest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	fleet := func(secret string) *gateway.Options {
		return &gateway.Options{Transports: gateway.TransportOptions{HTTP: &mcp.StreamableHTTPOptions{SessionSecret: []byte(secret)}}}
	}
	const secret = "a shared secret of thirty-two bytes or more"
	_, a := newGateway(t, []gateway.Backend{dialBackend(t, "jobs", srv.Addr)}, fleet(secret))
	_, b := newGateway(t, []gateway.Backend{dialBackend(t, "jobs", srv.Addr)}, fleet(secret))
	_, other := newGateway(t, []gateway.Backend{dialBackend(t, "jobs", srv.Addr)}, fleet("another secret of thirty-two bytes or more"))
	_, alone := newGateway(t, []gateway.Backend{dialBackend(t, "jobs", srv.Addr)}, nil)
	var created struct {
		Task wireTask `json:"task"`
	}
	newSessionClient(t, a+"/mcp").result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"steps": 1}, "task": map[string]any{}}, "", &created)
	var res struct {
		StructuredContent map[string]any `json:"structuredContent"`
	}
	newSessionClient(t, b+"/mcp").result("tasks/result", map[string]any{"taskId": created.Task.TaskID}, "", &res)
	if res.StructuredContent["stepsDone"] != float64(1) {
		t.Errorf("tasks/result through the other gateway: %+v", res)
	}
	for _, g := range []string{other, alone} {
		if r := newSessionClient(t, g+"/mcp").call("tasks/get", map[string]any{"taskId": created.Task.TaskID}, ""); r.Error == nil || r.Error.Code != -32602 {
			t.Errorf("a gateway with another key answered the task: %+v", r)
		}
	}

	// At 2025-06-18 there are no tasks: no capability, no methods, and
	// params.task is ignored (the call is answered normally).
	old := &rpcClient{t: t, url: a + "/mcp", version: "2025-06-18"}
	var init struct {
		Capabilities map[string]json.RawMessage `json:"capabilities"`
	}
	old.result("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "t", "version": "1"}}, "", &init)
	old.notify("notifications/initialized")
	if init.Capabilities["tasks"] != nil {
		t.Errorf("2025-06-18 capabilities: %v", init.Capabilities)
	}
	if r := old.call("tasks/get", map[string]any{"taskId": created.Task.TaskID}, ""); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("tasks/get at 2025-06-18: %+v", r)
	}
	old.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"steps": 1}, "task": map[string]any{}}, "", &res)
	if res.StructuredContent["stepsDone"] != float64(1) {
		t.Errorf("params.task at 2025-06-18 should be ignored: %+v", res)
	}
}

// With front-door auth, a task method is authorized as the Operations
// tool it amounts to: a token without CancelOperation's scope may read a
// task but not cancel it, and the backend never sees the refused cancel.
func TestTaskScopes(t *testing.T) {
	is := newTestIssuer(t)
	srv, stop, err := lrotest.Start(lrotest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	a, err := auth.New(context.Background(), auth.Config{OAuth: &auth.OAuthConfig{
		JWKSURL: is.URL, Issuer: "https://as.example.com", Resource: zooAudience,
		RequiredScopes: []string{"jobs"}, ToolScopes: map[string][]string{"Operations_CancelOperation": {"jobs:admin"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	url := serveGateway(t, srv.Addr, &gateway.Options{Auth: a}) + "/mcp"

	user := newSessionClientAs(t, url, is.token(t, zooAudience, "jobs", nil))
	var created struct {
		Task wireTask `json:"task"`
	}
	user.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"never": true}, "task": map[string]any{}}, "", &created)
	var got wireTask
	user.result("tasks/get", map[string]any{"taskId": created.Task.TaskID}, "", &got)
	if got.Status != "working" {
		t.Errorf("tasks/get: %+v", got)
	}
	if r := user.call("tasks/cancel", map[string]any{"taskId": created.Task.TaskID}, ""); r.status != http.StatusForbidden || r.Error == nil || r.Error.Code != -32010 {
		t.Errorf("tasks/cancel without jobs:admin: HTTP %d %+v", r.status, r.Error)
	}
	if n := len(srv.Cancelled()); n != 0 {
		t.Errorf("the refused cancel reached the backend")
	}
	admin := newSessionClientAs(t, url, is.token(t, zooAudience, "jobs jobs:admin", nil))
	admin.result("tasks/cancel", map[string]any{"taskId": created.Task.TaskID}, "", &got)
	if got.Status != "cancelled" || len(srv.Cancelled()) != 1 {
		t.Errorf("tasks/cancel with jobs:admin: %+v, backend cancelled %v", got, srv.Cancelled())
	}
}

// A task's result is held to the result budget as the call's would be.
func TestTaskResultBudget(t *testing.T) {
	_, _, url := startJobs(t, lrotest.Options{}, &gateway.Options{Results: gateway.ResultOptions{MaxBytes: gateway.MinMaxResultBytes}})
	c := newSessionClient(t, url)
	label := strings.Repeat("x", 4*gateway.MinMaxResultBytes)
	var created struct {
		Task wireTask `json:"task"`
	}
	c.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": label, "steps": 1}, "task": map[string]any{}}, "", &created)
	var res struct {
		StructuredContent map[string]any `json:"structuredContent"`
		Content           []struct {
			Type string `json:"type"`
			Text string `json:"text"`
			URI  string `json:"uri"`
		} `json:"content"`
	}
	c.result("tasks/result", map[string]any{"taskId": created.Task.TaskID}, "", &res)
	got, _ := res.StructuredContent["label"].(string)
	if len(got) >= len(label) || res.StructuredContent["stepsDone"] != float64(1) {
		t.Errorf("the task's result was not cut to the budget: label of %d bytes", len(got))
	}
	link := false
	for _, c := range res.Content {
		link = link || c.Type == "resource_link" && c.URI != ""
	}
	if !link {
		t.Errorf("the cut result should link to the whole one: %+v", res.Content)
	}
}

// TestTaskMethodsForwardHeaders: tasks/get, tasks/result and tasks/cancel
// reach the backend's Operations service with the forwarded
// headers, the token's forwarded claims and the static metadata, as a tool
// call does, so a backend that scopes operations by the caller's identity
// sees the same identity.
func TestTaskMethodsForwardHeaders(t *testing.T) {
	is := newTestIssuer(t)
	const aud = "https://jobs.example.com/mcp"
	a, err := auth.New(context.Background(), auth.Config{OAuth: &auth.OAuthConfig{
		JWKSURL: is.URL, Issuer: "https://as.example.com", Resource: aud,
		ForwardClaims: []auth.ClaimHeader{{Claim: "sub", Header: "X-User-Id"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	srv, _, url := startJobs(t, lrotest.Options{}, &gateway.Options{
		Auth: a,
		Calls: gateway.CallOptions{
			ForwardHeaders: []string{"X-Tenant", "X-User-Id"},
			Metadata:       metadata.Pairs("x-gateway", "tasks-test"),
		},
	})
	c := newSessionClientAs(t, url, is.token(t, aud, "", nil))
	c.header = http.Header{"X-Tenant": {"acme"}, "X-User-Id": {"forged"}}
	var created struct {
		Task wireTask `json:"task"`
	}
	c.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"label": "t", "steps": 50}, "task": map[string]any{}}, "", &created)
	id := created.Task.TaskID
	for _, step := range []struct{ method, backend string }{
		{"tasks/get", "google.longrunning.Operations/GetOperation"},
		{"tasks/cancel", "google.longrunning.Operations/CancelOperation"},
	} {
		if r := c.call(step.method, map[string]any{"taskId": id}, ""); r.Error != nil {
			t.Fatalf("%s: %+v", step.method, r.Error)
		}
		md := srv.Metadata(step.backend)
		if got := md.Get("x-tenant"); len(got) != 1 || got[0] != "acme" {
			t.Errorf("%s: the backend's %s got x-tenant %q, want the client's \"acme\"", step.method, step.backend, got)
		}
		if got := md.Get("x-user-id"); len(got) != 1 || got[0] != "alice" {
			t.Errorf("%s: the backend's %s got x-user-id %q, want the token's sub \"alice\", not the client's header", step.method, step.backend, got)
		}
		if got := md.Get("x-gateway"); len(got) != 1 || got[0] != "tasks-test" {
			t.Errorf("%s: the backend's %s got x-gateway %q, want the static metadata", step.method, step.backend, got)
		}
	}
}
