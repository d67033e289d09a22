package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
)

// jobsWithAuth serves the jobs backend behind OAuth (tokens of is, for
// audience zooAudience, every call needing "jobs"), with toolScopes and
// the rest of opts.
func jobsWithAuth(t *testing.T, is *testIssuer, toolScopes map[string][]string, opts *gateway.Options) (*lrotest.Server, string) {
	t.Helper()
	srv, stop, err := lrotest.Start(lrotest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	a, err := auth.New(context.Background(), auth.Config{OAuth: &auth.OAuthConfig{
		JWKSURL: is.url, Issuer: "https://as.example.com", Resource: zooAudience,
		RequiredScopes: []string{"jobs"}, ToolScopes: toolScopes,
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	if opts == nil {
		opts = &gateway.Options{}
	}
	opts.Auth = a
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "jobs", srv.Addr)}, opts)
	return srv, base + "/mcp"
}

// startTask starts a job that never ends as a 2025-11-25 task.
func startTask(c *rpcClient) string {
	c.t.Helper()
	var created struct {
		Task wireTask `json:"task"`
	}
	c.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"never": true}, "task": map[string]any{}}, "", &created)
	return created.Task.TaskID
}

// TestTasksBelongToTheirOwner: a principal reaches only the tasks it
// started. Another principal holding the id gets "not found" from
// tasks/get, tasks/result and tasks/cancel, at both revisions, and the
// backend is not called for it.
func TestTasksBelongToTheirOwner(t *testing.T) {
	is := newTestIssuer(t)
	srv, url := jobsWithAuth(t, is, nil, nil)
	alice := newSessionClientAs(t, url, is.token(t, zooAudience, "jobs", nil))
	bob := newSessionClientAs(t, url, is.token(t, zooAudience, "jobs", map[string]any{"sub": "bob"}))
	id := startTask(alice)

	polls := srv.Polls()
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if r := bob.call(method, map[string]any{"taskId": id}, ""); r.Error == nil || r.Error.Code != -32602 || r.Error.Message != "Failed to retrieve task: Task not found" {
			t.Errorf("bob's %s of alice's task: %+v", method, r)
		}
	}
	stateless2026 := &rpcClient{t: t, url: url, version: "2026-07-28", token: is.token(t, zooAudience, "jobs", map[string]any{"sub": "bob"})}
	if r := stateless2026.call("tasks/get", stateless(map[string]any{"taskId": id}, capsTasks), id); r.Error == nil || r.Error.Code != -32602 {
		t.Errorf("bob's stateless tasks/get of alice's task: %+v", r)
	}
	if srv.Polls() != polls || len(srv.Cancelled()) != 0 {
		t.Errorf("another principal's task methods reached the backend: %d polls, cancelled %v", srv.Polls()-polls, srv.Cancelled())
	}

	// Alice's own, through another session of hers, works.
	alice2 := newSessionClientAs(t, url, is.token(t, zooAudience, "jobs", nil))
	var got wireTask
	alice2.result("tasks/get", map[string]any{"taskId": id}, "", &got)
	if got.Status != "working" || got.TaskID != id {
		t.Errorf("alice's tasks/get: %+v", got)
	}
	alice2.result("tasks/cancel", map[string]any{"taskId": id}, "", &got)
	if len(srv.Cancelled()) != 1 {
		t.Errorf("alice's tasks/cancel did not reach the backend")
	}
}

// TestTasksAuthorizedAsTheirTool: a task method is authorized as the tool
// that started the task: a token that lost the tool's scope can no longer
// read its tasks, even its own.
func TestTasksAuthorizedAsTheirTool(t *testing.T) {
	is := newTestIssuer(t)
	srv, url := jobsWithAuth(t, is, map[string][]string{"Jobs_Run": {"jobs:run"}}, nil)
	id := startTask(newSessionClientAs(t, url, is.token(t, zooAudience, "jobs jobs:run", nil)))
	without := newSessionClientAs(t, url, is.token(t, zooAudience, "jobs", nil))
	polls := srv.Polls()
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if r := without.call(method, map[string]any{"taskId": id}, ""); r.status != http.StatusForbidden || r.Error == nil || r.Error.Code != -32010 {
			t.Errorf("%s without the starting tool's scope: HTTP %d %+v", method, r.status, r.Error)
		}
	}
	if srv.Polls() != polls || len(srv.Cancelled()) != 0 {
		t.Errorf("refused task methods reached the backend")
	}
}

// TestTasksBelongToTheCatalog: task methods reach a backend's Operations
// only through the methods this gateway exposes. Without GetOperation, no
// tool runs as a task; without CancelOperation, no task is cancelled;
// with the starting tool filtered out, its tasks are not reachable. Three
// gateways share a secret, so one's task id is valid at the others.
func TestTasksBelongToTheCatalog(t *testing.T) {
	srv, stop, err := lrotest.Start(lrotest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	const secret = "a shared secret of thirty-two bytes or more"
	start := func(exclude ...string) string {
		_, base := newGateway(t, []gateway.Backend{dialBackend(t, "jobs", srv.Addr)},
			&gateway.Options{Exclude: exclude, OperationWait: 50 * time.Millisecond, HTTP: &mcp.StreamableHTTPOptions{SessionSecret: []byte(secret)}})
		return base + "/mcp"
	}
	full := newSessionClient(t, start())
	noGet := newSessionClient(t, start("google.longrunning.Operations/GetOperation"))
	noCancel := newSessionClient(t, start("google.longrunning.Operations/CancelOperation"))
	noRun := newSessionClient(t, start("lrotest.v1.Jobs/Run"))
	id := startTask(full)

	// Without GetOperation: no task support, and no task method.
	var list struct {
		Tools []struct {
			Name      string          `json:"name"`
			Execution json.RawMessage `json:"execution"`
		} `json:"tools"`
	}
	noGet.result("tools/list", map[string]any{}, "", &list)
	for _, tl := range list.Tools {
		if tl.Name == "Jobs_Run" && tl.Execution != nil {
			t.Errorf("Jobs_Run declares %s with GetOperation excluded", tl.Execution)
		}
	}
	if r := noGet.call("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"never": true}, "task": map[string]any{}}, ""); r.Error == nil || r.Error.Code != -32601 {
		t.Errorf("a task-augmented call with GetOperation excluded: %+v", r)
	}
	polls := srv.Polls()
	refused := func(what string) {
		t.Helper()
		if n := srv.Polls() - polls; n != 0 || len(srv.Cancelled()) != 0 {
			t.Errorf("%s: refused task methods reached the backend: %d GetOperation calls, cancelled %v", what, n, srv.Cancelled())
		}
	}
	for _, method := range []string{"tasks/get", "tasks/result", "tasks/cancel"} {
		if r := noGet.call(method, map[string]any{"taskId": id}, ""); r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "not supported") {
			t.Errorf("%s with GetOperation excluded: %+v", method, r)
		}
	}
	refused("GetOperation excluded")
	// A 2026-07-28 client that takes tasks gets the operation's handle.
	stateless2026 := &rpcClient{t: t, url: noGet.url, version: "2026-07-28"}
	var handle struct {
		ResultType        string                    `json:"resultType"`
		StructuredContent map[string]map[string]any `json:"structuredContent"`
	}
	stateless2026.result("tools/call", stateless(map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"never": true}}, capsTasks), "Jobs_Run", &handle)
	if handle.ResultType == "task" || handle.StructuredContent["operation"]["done"] != false {
		t.Errorf("with GetOperation excluded, a call answered %+v, want the handle", handle)
	}

	// Without CancelOperation: reading works, cancelling is refused.
	var got wireTask
	noCancel.result("tasks/get", map[string]any{"taskId": id}, "", &got)
	if got.Status != "working" {
		t.Errorf("tasks/get with CancelOperation excluded: %+v", got)
	}
	polls = srv.Polls()
	if r := noCancel.call("tasks/cancel", map[string]any{"taskId": id}, ""); r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "not supported") {
		t.Errorf("tasks/cancel with CancelOperation excluded: %+v", r)
	}

	// Without the tool that started it: the task is not reachable.
	if r := noRun.call("tasks/get", map[string]any{"taskId": id}, ""); r.Error == nil || r.Error.Code != -32602 || !strings.Contains(r.Error.Message, "no longer exposed") {
		t.Errorf("tasks/get with the starting tool excluded: %+v", r)
	}
	refused("CancelOperation or the starting tool excluded")
}
