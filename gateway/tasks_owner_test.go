package gateway_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/descriptorpb"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
	mcpgatewayv1 "github.com/grpc-mcp-gateway/gateway/proto/mcpgateway/v1"
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
		JWKSURL: is.URL, Issuer: "https://as.example.com", Resource: zooAudience,
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
			&gateway.Options{Catalog: gateway.CatalogOptions{Exclude: exclude}, Calls: gateway.CallOptions{OperationWait: 50 * time.Millisecond}, Transports: gateway.TransportOptions{HTTP: &mcp.StreamableHTTPOptions{SessionSecret: []byte(secret)}}})
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

// TestOperationsToolsWithheldUnderAuth: with front-door auth, a backend's
// google.longrunning.Operations tools take any operation's name, so
// unscoped they would let one principal read and cancel another's
// operations (and read the results of tools it has no scope for). They
// are withheld unless a scope rule covers them; tasks still reach each
// caller's own operations.
func TestOperationsToolsWithheldUnderAuth(t *testing.T) {
	is := newTestIssuer(t)
	srv, url := jobsWithAuth(t, is, map[string][]string{"Jobs_Run": {"jobs:run"}}, nil)
	alice := newSessionClientAs(t, url, is.token(t, zooAudience, "jobs jobs:run", nil))
	bob := newSessionClientAs(t, url, is.token(t, zooAudience, "jobs", map[string]any{"sub": "bob"}))
	id := startTask(alice)

	var list struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	bob.result("tools/list", map[string]any{}, "", &list)
	for _, tl := range list.Tools {
		if strings.HasPrefix(tl.Name, "Operations_") {
			t.Errorf("%s is listed under auth without a scope rule", tl.Name)
		}
	}
	for _, name := range []string{"Operations_ListOperations", "Operations_GetOperation", "Operations_CancelOperation"} {
		r := bob.call("tools/call", map[string]any{"name": name, "arguments": map[string]any{"name": srv.Jobs()[0]}}, "")
		if r.Error == nil {
			t.Errorf("bob called %s: %s", name, r.Result)
		}
	}
	if len(srv.Cancelled()) != 0 {
		t.Fatalf("bob cancelled %v", srv.Cancelled())
	}
	// Alice's task is hers to read, wait for and cancel.
	var got wireTask
	alice.result("tasks/get", map[string]any{"taskId": id}, "", &got)
	alice.result("tasks/cancel", map[string]any{"taskId": id}, "", &got)
	if len(srv.Cancelled()) != 1 {
		t.Errorf("alice's tasks/cancel did not reach the backend")
	}

	// Scoped, they are listed for the callers holding the scope, and
	// task methods need it too.
	is2 := newTestIssuer(t)
	srv2, url2 := jobsWithAuth(t, is2, map[string][]string{"google.longrunning.Operations/*": {"ops:admin"}}, nil)
	user := newSessionClientAs(t, url2, is2.token(t, zooAudience, "jobs", nil))
	admin := newSessionClientAs(t, url2, is2.token(t, zooAudience, "jobs ops:admin", map[string]any{"sub": "root"}))
	admin.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"steps": 1}}, "", nil)
	if r := user.call("tools/call", map[string]any{"name": "Operations_GetOperation", "arguments": map[string]any{"name": srv2.Jobs()[0]}}, ""); r.status != http.StatusForbidden {
		t.Errorf("Operations_GetOperation without ops:admin: HTTP %d %+v", r.status, r.Error)
	}
	var op struct {
		StructuredContent map[string]any `json:"structuredContent"`
	}
	admin.result("tools/call", map[string]any{"name": "Operations_GetOperation", "arguments": map[string]any{"name": srv2.Jobs()[0]}}, "", &op)
	if op.StructuredContent["done"] != true {
		t.Errorf("Operations_GetOperation with ops:admin: %+v", op)
	}
}

// TestTaskResultWaitsAsAllowed: tasks/result uses the backend's
// WaitOperation only when the filters and the caller's scopes allow it,
// and polls GetOperation otherwise.
func TestTaskResultWaitsAsAllowed(t *testing.T) {
	run := func(c *rpcClient, srv *lrotest.Server) int {
		t.Helper()
		var created struct {
			Task wireTask `json:"task"`
		}
		c.result("tools/call", map[string]any{"name": "Jobs_Run", "arguments": map[string]any{"steps": 2}, "task": map[string]any{}}, "", &created)
		waits := srv.Waits()
		var res struct {
			StructuredContent map[string]any `json:"structuredContent"`
		}
		c.result("tasks/result", map[string]any{"taskId": created.Task.TaskID}, "", &res)
		if res.StructuredContent["stepsDone"] != float64(2) {
			t.Errorf("tasks/result: %+v", res)
		}
		return srv.Waits() - waits
	}
	srv, _, url := startJobs(t, lrotest.Options{}, nil)
	if n := run(newSessionClient(t, url), srv); n == 0 {
		t.Fatal("tasks/result did not use WaitOperation where it may: the test shows nothing")
	}
	srv, _, url = startJobs(t, lrotest.Options{}, &gateway.Options{Catalog: gateway.CatalogOptions{Exclude: []string{"google.longrunning.Operations/WaitOperation"}}})
	if n := run(newSessionClient(t, url), srv); n != 0 {
		t.Errorf("WaitOperation excluded: tasks/result called it %d times", n)
	}
	is := newTestIssuer(t)
	srv, url = jobsWithAuth(t, is, map[string][]string{"google.longrunning.Operations/WaitOperation": {"jobs:admin"}}, nil)
	if n := run(newSessionClientAs(t, url, is.token(t, zooAudience, "jobs", nil)), srv); n != 0 {
		t.Errorf("WaitOperation scoped away from the caller: tasks/result called it %d times", n)
	}
	if n := run(newSessionClientAs(t, url, is.token(t, zooAudience, "jobs jobs:admin", nil)), srv); n == 0 {
		t.Errorf("WaitOperation scoped to the caller: tasks/result did not use it")
	}
}

// TestOperationsToolsDeclaredScope: a scope the API declares on its
// google.longrunning.Operations service counts as a scope rule: under an
// OAuth front door the Operations tools are listed, and a call without
// the scope is refused before the backend. Without a declared scope (or a
// rule) they stay withheld.
func TestOperationsToolsDeclaredScope(t *testing.T) {
	ops := func(scopes ...string) string {
		fdp := apiFile("google.longrunning", "Operations", method("GetOperation"), method("CancelOperation"))
		// Not the path of the real operations.proto, which the gateway
		// would take from its own bundle, options and all.
		fdp.Name = proto.String("fake/longrunning/operations.proto")
		if len(scopes) > 0 {
			so := &descriptorpb.ServiceOptions{}
			proto.SetExtension(so, mcpgatewayv1.E_Service, &mcpgatewayv1.Service{Scopes: scopes})
			fdp.Service[0].Options = so
		}
		api := &fakeAPI{}
		api.set(t, fdp)
		addr, _ := serveFake(t, api, "127.0.0.1:0")
		return addr
	}
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	for _, tc := range []struct {
		name   string
		scopes []string
		listed bool
	}{{"declared", []string{"ops:admin"}, true}, {"undeclared", nil, false}} {
		t.Run(tc.name, func(t *testing.T) {
			is := newTestIssuer(t)
			_, base := newGateway(t, []gateway.Backend{dialBackend(t, "ops", ops(tc.scopes...))}, &gateway.Options{Auth: oauthWithRules(t, is, nil), Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}})
			user := connectAs(ctx, t, base, "websocket", is.token(t, zooAudience, "zoo", nil))
			var listed []string
			for tl, err := range user.Tools(ctx, nil) {
				if err != nil {
					t.Fatal(err)
				}
				listed = append(listed, tl.Name)
			}
			if got := slices.Contains(listed, "Operations_GetOperation"); got != tc.listed {
				t.Fatalf("Operations_GetOperation listed: %v (%v), want %v", got, listed, tc.listed)
			}
			if !tc.listed {
				return
			}
			if got := tryCall(ctx, t, user, gateway.ToolModeTyped, "Operations_CancelOperation", map[string]any{}); got != "zoo ops:admin" {
				t.Errorf("CancelOperation without ops:admin: refusal asks for %q, want \"zoo ops:admin\"", got)
			}
			admin := connectAs(ctx, t, base, "websocket", is.token(t, zooAudience, "zoo ops:admin", nil))
			if got := tryCall(ctx, t, admin, gateway.ToolModeTyped, "Operations_CancelOperation", map[string]any{}); got != "" {
				t.Errorf("CancelOperation with ops:admin refused, asking for %q", got)
			}
		})
	}
}
