package gateway

import (
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/longrunning"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/rpcstatus"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/taskid"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// MCP tasks over long-running operations.
//
// A long-running tool may run as an MCP task (gateway/mcp/tasks.go has
// the two revisions' wire forms). Every task method is a call to the
// backend's google.longrunning.Operations: tasks/get is GetOperation,
// tasks/result waits like a call does, tasks/cancel is CancelOperation.
// The gateway keeps no task state, so any replica answers for any task,
// and a task lives as long as the backend keeps its operation.
//
// A task belongs to whoever started it and to the catalog: its id is
// signed and names its owner, its backend, the method of the tool that
// started it and the operation (gateway/internal/taskid). A task method checks the id
// before any backend is called, then authorizes the caller as the tool
// that started the task and as the Operations tool it amounts to, both
// as this catalog exposes them: with GetOperation filtered out, a
// backend's tools do not run as tasks at all; with CancelOperation
// filtered out, its tasks cannot be cancelled; with the starting tool
// filtered out or renamed away, its tasks are no longer reachable. There
// is no tasks/list: the backend's ListOperations lists operations, not
// tasks the gateway can prove are the caller's, and the 2025-11-25 text
// lets a list hold only the caller's. The caller's forwarded headers go
// with every call, as with a tool call.

// operationsBackend is one backend's Operations service, for the task
// methods, which name no tool.
type operationsBackend struct {
	name string
	ops  *longrunning.Client
	md   metadata.MD
	// getTool, waitTool and cancelTool are the backend's GetOperation,
	// WaitOperation and CancelOperation as this catalog's filters let the
	// gateway call them (nil when filtered out), with the scopes their
	// rules give; listed as tools, or withheld (assemble).
	getTool, waitTool, cancelTool *compiled.Tool
}

// taskOwner is whose tasks a request may reach: the principal the front
// door authenticated, "" without authentication (stdio, or an open
// loopback listener: then the unguessable id is the only key, as the
// tasks text allows).
func taskOwner(ctx context.Context) string {
	if p, ok := auth.FromContext(ctx); ok {
		return p.Identity()
	}
	return ""
}

// authorizeTask authorizes a task method as a call of t, with t's scopes
// in its catalog, as authorize does a tools/call.
func (g *Gateway) authorizeTask(ctx context.Context, req *mcp.TaskRequest, t *compiled.Tool) error {
	if g.opts.Auth == nil || req.Session.Transport == "stdio" {
		return nil
	}
	err := g.opts.Auth.Authorize(ctx, t.Access.Scopes)
	var ref *auth.Refusal
	if errors.As(err, &ref) {
		return refusal(ref)
	}
	return err
}

// taskNotFound is the answer for an id that is not the caller's task:
// forged, issued by another gateway, or another principal's. The three
// are not told apart.
var taskNotFound = &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Failed to retrieve task: Task not found"}

// newTaskID mints the id of a task t starts for the caller; false when the
// operation's name is too long for one (the call then answers without a
// task).
func (g *Gateway) newTaskID(ctx context.Context, t *compiled.Tool, op *longrunning.Operation) (string, bool) {
	return g.taskKeys.Mint(taskid.Ref{Backend: t.Backend, Method: t.Call.Method, Operation: op.Name(), Started: time.Now()}, taskOwner(ctx))
}

// taskResult is the answer to a long-running tool's call that runs as a
// task; nil when op cannot be one (its name is too long for an id), and
// the call answers as one that does not run as a task.
func (g *Gateway) taskResult(ctx context.Context, t *compiled.Tool, op *longrunning.Operation) *mcp.CallToolResult {
	id, ok := g.newTaskID(ctx, t, op)
	if !ok {
		return nil
	}
	return &mcp.CallToolResult{Task: longrunning.TaskOf(ctx, id, time.Now(), op, t.LRO, t.LRO.Ops, true)}
}

// taskAccess is a task method's way to its task: what the id says, the
// tool that started it and the backend's Operations service.
type taskAccess struct {
	ref   taskid.Ref
	start *compiled.Tool
	b     *operationsBackend
	ctx   context.Context // the outgoing context of the backend calls
	// in is the listing of the endpoint the task method came through.
	in *listing
}

// may reports whether the task method may call ot, one of the backend's
// Operations tools: one the catalog exposes (listed or withheld) and,
// through a toolset, one the toolset holds (toolsetOperations).
func (a *taskAccess) may(ot *compiled.Tool) bool {
	return ot != nil && (!a.in.restricted || a.in.ops[ot])
}

// openTask checks id for the caller and authorizes the task method, as
// the tool that started the task and as the backend's Operations tool
// (opsTool picks GetOperation or CancelOperation), before any backend is
// called. A task started by a tool outside a toolset is not found
// through the toolset's endpoint, as another principal's is not.
func (e *endpoint) openTask(ctx context.Context, id string, req *mcp.TaskRequest, what string, opsTool func(*operationsBackend) *compiled.Tool) (*taskAccess, error) {
	g := e.g
	ref, err := g.taskKeys.Parse(id, taskOwner(ctx))
	if err != nil {
		return nil, taskNotFound
	}
	c := g.catalog.Load()
	start := c.byMethod[ref.Backend+"\x00"+ref.Method]
	b := c.operations[ref.Backend]
	if start == nil || b == nil {
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("%s: the tool that started the task (%s of backend %s) is no longer exposed by this gateway", what, ref.Method[1:], ref.Backend)}
	}
	a := &taskAccess{ref: ref, start: start, b: b, in: e.of(c)}
	if a.in.restricted && a.in.byName[start.Definition.Name] != start && !a.in.replaced[start] {
		return nil, taskNotFound
	}
	if err := g.authorizeTask(ctx, req, start); err != nil {
		return nil, err
	}
	ot := opsTool(b)
	switch {
	case ot == nil:
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("%s: not supported: this gateway does not expose backend %s's Operations method for it", what, b.name)}
	case !a.may(ot):
		// A toolset calls only the Operations methods it holds, as
		// tools/call through it does.
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("%s: not supported: this endpoint does not expose backend %s's Operations method for it", what, b.name)}
	}
	if err := g.authorizeTask(ctx, req, ot); err != nil {
		return nil, err
	}
	a.ctx = g.md.Context(ctx, req.Header, b.md)
	if start.Access.Exchanger != nil {
		if a.ctx, err = g.withBackendToken(a.ctx, ref.Backend, start.Access.Exchanger, start.Access.TokenScopes); err != nil {
			return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: what + ": " + err.Error()}
		}
	}
	return a, nil
}

func getTool(b *operationsBackend) *compiled.Tool    { return b.getTool }
func cancelTool(b *operationsBackend) *compiled.Tool { return b.cancelTool }

// fetch is the operation's current state.
func (a *taskAccess) fetch(ctx context.Context, what string) (*longrunning.Operation, error) {
	op, err := a.b.ops.Get(a.ctx, longrunning.Named(a.ref.Operation))
	if err == nil {
		return op, nil
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	st := status.Convert(err)
	if st.Code() == codes.NotFound {
		// The backend no longer keeps the operation.
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: what + ": Task not found: the backend no longer has its operation"}
	}
	return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: fmt.Sprintf("%s: backend %s: %s: %s", what, a.b.name, telemetry.CodeName(st.Code()), rpcstatus.ClientMessage(st))}
}

// task is the task of op with its result cut to the result budget as the
// call of the tool that started it would have been.
func (g *Gateway) task(ctx context.Context, id string, a *taskAccess, op *longrunning.Operation, req *mcp.TaskRequest) *mcp.Task {
	task := longrunning.TaskOf(ctx, id, a.ref.Started, op, a.start.LRO, a.b.ops, true)
	if task.Result == nil || task.Result.StructuredContent == nil {
		return task
	}
	task.Result = g.fitResult(ctx, req.Session, a.start, task.Result)
	return task
}

// GetTask is mcp.TaskHandler: tasks/get with GetOperation, for the tasks
// of the endpoint's tools.
func (e *endpoint) GetTask(ctx context.Context, id string, req *mcp.TaskRequest) (*mcp.Task, error) {
	g := e.g
	a, err := e.openTask(ctx, id, req, "Failed to retrieve task", getTool)
	if err != nil {
		return nil, err
	}
	op, err := a.fetch(ctx, "Failed to retrieve task")
	if err != nil {
		return nil, err
	}
	return g.task(ctx, id, a, op, req), nil
}

// AwaitTask is mcp.TaskHandler: tasks/result, for the tasks of the
// endpoint's tools. It polls the operation as a waiting call does, for as
// long as the request lasts.
func (e *endpoint) AwaitTask(ctx context.Context, id string, req *mcp.TaskRequest) (*mcp.Task, error) {
	g := e.g
	a, err := e.openTask(ctx, id, req, req.Method, getTool)
	if err != nil {
		return nil, err
	}
	op, err := a.fetch(ctx, req.Method)
	if err != nil {
		return nil, err
	}
	// WaitOperation only as the filters and the caller's scopes allow it.
	mayWait := a.may(a.b.waitTool) && g.authorizeTask(ctx, req, a.b.waitTool) == nil
	op, st, err := a.b.ops.Poll(a.ctx, a.ctx, op, false, mayWait, nil)
	switch {
	case err != nil:
		return nil, err
	case st != nil:
		return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: fmt.Sprintf("%s: polling the operation failed: %s: %s", req.Method, telemetry.CodeName(st.Code()), rpcstatus.ClientMessage(st))}
	case !op.Done():
		return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: req.Method + ": the operation did not finish"}
	}
	return g.task(ctx, id, a, op, req), nil
}

// CancelTask is mcp.TaskHandler: tasks/cancel with CancelOperation, for
// the tasks of the endpoint's tools and an operation not yet done; it
// returns the state before.
func (e *endpoint) CancelTask(ctx context.Context, id string, req *mcp.TaskRequest) (*mcp.Task, error) {
	g := e.g
	a, err := e.openTask(ctx, id, req, "Cannot cancel task", cancelTool)
	if err != nil {
		return nil, err
	}
	// Reading the state first is GetOperation: the caller must be allowed
	// that too.
	if !a.may(a.b.getTool) {
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("Cannot cancel task: not supported: this endpoint does not expose backend %s's GetOperation", a.b.name)}
	}
	if err := g.authorizeTask(ctx, req, a.b.getTool); err != nil {
		return nil, err
	}
	op, err := a.fetch(ctx, "Cannot cancel task")
	if err != nil {
		return nil, err
	}
	t := longrunning.TaskOf(ctx, id, a.ref.Started, op, nil, a.b.ops, true)
	if op.Done() {
		return t, nil
	}
	if err := a.b.ops.Cancel(a.ctx, a.ref.Operation); err != nil {
		st := status.Convert(err)
		return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: fmt.Sprintf("Cannot cancel task: %s: %s", telemetry.CodeName(st.Code()), rpcstatus.ClientMessage(st))}
	}
	return t, nil
}
