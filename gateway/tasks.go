package gateway

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// MCP tasks over long-running operations.
//
// A long-running tool may run as an MCP task (gateway/mcp/tasks.go has
// the two revisions' wire forms): the task id is the operation's name,
// and every task method is a call to the backend's
// google.longrunning.Operations: tasks/get is GetOperation, tasks/result
// waits like a call does, tasks/cancel is CancelOperation, tasks/list is
// ListOperations. The gateway keeps no task state, so any replica answers
// for any task, and a task lives as long as the backend keeps its
// operation. The caller's forwarded headers go with every call, so a
// backend that scopes operations by caller scopes tasks the same way.

// taskPollInterval is the poll interval suggested to task clients.
const taskPollInterval = time.Second

// taskListPageSize is the ListOperations page size of one tasks/list page.
const taskListPageSize = 50

// operationsBackend is one backend's Operations service, for the task
// methods, which name no tool.
type operationsBackend struct {
	name string
	ops  *operationsClient
	md   metadata.MD
	// getTool, cancelTool and listTool name the backend's Operations
	// tools, which the task methods are authorized as ("" when not
	// exposed: then only the scopes every call needs apply).
	getTool, cancelTool, listTool string
}

// authorizeTask authorizes a task method as the call of the Operations
// tool it amounts to, as authorize does a tools/call.
func (g *Gateway) authorizeTask(ctx context.Context, req *mcp.TaskRequest, tool string) error {
	if g.opts.Auth == nil || req.Session.Transport == "stdio" {
		return nil
	}
	err := g.opts.Auth.Authorize(ctx, tool)
	var ref *auth.Refusal
	if errors.As(err, &ref) {
		return refusal(ref)
	}
	return err
}

var _ mcp.TaskHandler = (*Gateway)(nil)

// taskOf is the task state of op; withResult adds the result of a
// finished one. lr, when known, renders the response (see doneResult).
func taskOf(op *operation, lr *longRunning, ops *operationsClient, withResult bool) *mcp.Task {
	t := &mcp.Task{ID: op.name, Status: mcp.TaskWorking, PollInterval: taskPollInterval}
	t.CreatedAt, t.LastUpdatedAt = ops.times(op)
	switch st := operationStatus(op); {
	case !op.done:
		if op.metadata.typeURL != "" {
			if js, err := ops.anyJSON(nil, op.metadata); err == nil {
				t.StatusMessage = string(js)
			}
		}
	case st != nil && st.Code() == codes.Canceled:
		t.Status, t.StatusMessage = mcp.TaskCancelled, CodeName(st.Code())+": "+st.Message()
	case st != nil:
		t.Status, t.StatusMessage = mcp.TaskCompleted, CodeName(st.Code())+": "+st.Message()
	default:
		t.Status = mcp.TaskCompleted
	}
	if op.done && withResult {
		// A task's result is read by tasks/result, not observed as a call.
		t.Result = doneResult(context.Background(), op, lr, ops, ops.types)
	}
	return t
}

// times are the task's creation and last update, from the metadata's
// timestamps (found at discovery) when it has them; the operation itself
// carries none, so otherwise both are now.
func (c *operationsClient) times(op *operation) (created, updated time.Time) {
	now := time.Now()
	created, updated = now, now
	if c == nil || op.metadata.typeURL == "" {
		return created, updated
	}
	tf := c.timeFields[op.metadata.typeName()]
	if t, ok := timestampField(op.metadata.value, tf.created); ok {
		created, updated = t, t
	}
	if t, ok := timestampField(op.metadata.value, tf.updated); ok {
		updated = t
	}
	return created, updated
}

// taskResult is the answer to a long-running tool's call that runs as a
// task.
func taskResult(op *operation, lr *longRunning) *mcp.CallToolResult {
	return &mcp.CallToolResult{Task: taskOf(op, lr, lr.ops, true)}
}

// findOperation asks the backends that serve Operations for the
// operation id, in backend order, and returns the first that knows it.
// A backend answering NOT_FOUND or INVALID_ARGUMENT (a name not of its
// form) does not know it; any other failure is the answer.
func (g *Gateway) findOperation(ctx context.Context, id string, req *mcp.TaskRequest) (*operationsBackend, *operation, context.Context, error) {
	for _, b := range g.catalog.Load().operations {
		if !b.ops.hasGet {
			continue
		}
		if err := g.authorizeTask(ctx, req, b.getTool); err != nil {
			return nil, nil, nil, err
		}
		bctx := g.md.outgoingContext(ctx, req.Header, b.md)
		op, err := b.ops.get(bctx, &operation{name: id})
		if err == nil {
			return b, op, bctx, nil
		}
		switch status.Code(err) {
		case codes.NotFound, codes.InvalidArgument:
			continue
		}
		if ctx.Err() != nil {
			return nil, nil, nil, ctx.Err()
		}
		st := status.Convert(err)
		return nil, nil, nil, &mcp.Error{Code: mcp.CodeInternalError, Message: fmt.Sprintf("Failed to retrieve task: backend %s: %s: %s", b.name, CodeName(st.Code()), clientMessage(st))}
	}
	return nil, nil, nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: "Failed to retrieve task: Task not found"}
}

// GetTask serves tasks/get with GetOperation; it is part of
// mcp.TaskHandler.
func (g *Gateway) GetTask(ctx context.Context, id string, req *mcp.TaskRequest) (*mcp.Task, error) {
	b, op, _, err := g.findOperation(ctx, id, req)
	if err != nil {
		return nil, err
	}
	return g.fitTask(ctx, b, op, req), nil
}

// fitTask is the task of op with its result cut to the result budget as
// the call of the tool that started it would have been.
func (g *Gateway) fitTask(ctx context.Context, b *operationsBackend, op *operation, req *mcp.TaskRequest) *mcp.Task {
	task := taskOf(op, nil, b.ops, true)
	if task.Result == nil || task.Result.StructuredContent == nil {
		return task
	}
	if t := g.catalog.Load().lroByResponse[b.name+"\x00"+string(op.response.typeName())]; t != nil {
		task.Result = g.fitResult(ctx, &mcp.CallToolRequest{Name: t.def.Name, Header: req.Header, Session: req.Session}, t, task.Result)
	}
	return task
}

// AwaitTask serves tasks/result: it polls the operation as a waiting
// call does, for as long as the request lasts; it is part of
// mcp.TaskHandler.
func (g *Gateway) AwaitTask(ctx context.Context, id string, req *mcp.TaskRequest) (*mcp.Task, error) {
	b, op, bctx, err := g.findOperation(ctx, id, req)
	if err != nil {
		return nil, err
	}
	op, st, err := b.ops.poll(bctx, bctx, op, false, nil)
	switch {
	case err != nil:
		return nil, err
	case st != nil:
		return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: fmt.Sprintf("tasks/result: polling the operation failed: %s: %s", CodeName(st.Code()), clientMessage(st))}
	case !op.done:
		return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: "tasks/result: the operation did not finish"}
	}
	return g.fitTask(ctx, b, op, req), nil
}

// CancelTask serves tasks/cancel with CancelOperation, for an operation
// not yet done; it returns the state before; it is part of
// mcp.TaskHandler.
func (g *Gateway) CancelTask(ctx context.Context, id string, req *mcp.TaskRequest) (*mcp.Task, error) {
	b, op, bctx, err := g.findOperation(ctx, id, req)
	if err != nil {
		return nil, err
	}
	t := taskOf(op, nil, b.ops, true)
	if op.done {
		return t, nil
	}
	if err := g.authorizeTask(ctx, req, b.cancelTool); err != nil {
		return nil, err
	}
	if !b.ops.hasCancel {
		return nil, &mcp.Error{Code: mcp.CodeInvalidParams, Message: fmt.Sprintf("Cannot cancel task: backend %s does not serve CancelOperation", b.name)}
	}
	if err := b.ops.cancel(bctx, id); err != nil {
		st := status.Convert(err)
		return nil, &mcp.Error{Code: mcp.CodeInternalError, Message: fmt.Sprintf("Cannot cancel task: %s: %s", CodeName(st.Code()), clientMessage(st))}
	}
	return t, nil
}

// ListTasks serves tasks/list with ListOperations on each backend that
// serves it, one page at a time; the cursor is the backend's position and
// its page token. It is part of mcp.TaskHandler.
func (g *Gateway) ListTasks(ctx context.Context, cursor string, req *mcp.TaskRequest) ([]*mcp.Task, string, error) {
	var backends []*operationsBackend
	for _, b := range g.catalog.Load().operations {
		if b.ops.hasList {
			backends = append(backends, b)
		}
	}
	i, token, err := decodeTaskCursor(cursor, len(backends))
	if err != nil {
		return nil, "", &mcp.Error{Code: mcp.CodeInvalidParams, Message: "tasks/list: invalid cursor"}
	}
	if i >= len(backends) {
		return nil, "", nil
	}
	b := backends[i]
	if err := g.authorizeTask(ctx, req, b.listTool); err != nil {
		return nil, "", err
	}
	var out rawFrame
	defer out.release()
	bctx := g.md.outgoingContext(ctx, req.Header, b.md)
	if err := b.ops.conn.Invoke(bctx, listOperationsMethod, wireMessage(listRequest("", token, taskListPageSize)), &out, callCodec); err != nil {
		st := status.Convert(err)
		return nil, "", &mcp.Error{Code: mcp.CodeInternalError, Message: fmt.Sprintf("tasks/list: backend %s: %s: %s", b.name, CodeName(st.Code()), clientMessage(st))}
	}
	ops, next, err := decodeListResponse(out.bytes())
	if err != nil {
		return nil, "", fmt.Errorf("tasks/list: backend %s: %w", b.name, err)
	}
	tasks := make([]*mcp.Task, len(ops))
	for k, op := range ops {
		tasks[k] = taskOf(op, nil, b.ops, false)
	}
	switch {
	case next != "":
		return tasks, encodeTaskCursor(i, next), nil
	case i+1 < len(backends):
		return tasks, encodeTaskCursor(i+1, ""), nil
	}
	return tasks, "", nil
}

func encodeTaskCursor(backend int, token string) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.Itoa(backend) + ":" + token))
}

func decodeTaskCursor(cursor string, n int) (int, string, error) {
	if cursor == "" {
		return 0, "", nil
	}
	raw, err := base64.RawURLEncoding.DecodeString(cursor)
	if err != nil {
		return 0, "", err
	}
	idx, token, ok := strings.Cut(string(raw), ":")
	i, err := strconv.Atoi(idx)
	if !ok || err != nil || i < 0 || i > n {
		return 0, "", errors.New("bad cursor")
	}
	return i, token, nil
}
