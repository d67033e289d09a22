package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/jsonscan"
)

// Tasks.
//
// A tool call may run as a task: the client gets a handle at once (or,
// at 2026-07-28, when the handler decides the call will take long) and
// polls it. Two revisions define tasks differently, and this file holds
// both wire forms; the handler ([TaskHandler]) knows neither:
//
//   - 2025-11-25 (experimental core): the server declares the tasks
//     capability and each tool its execution.taskSupport; a client asks for
//     a task with params.task on tools/call and gets a CreateTaskResult
//     {"task": {...}}; tasks/get, tasks/result (blocks until terminal),
//     tasks/list and tasks/cancel; a tool result with isError makes the
//     task "failed".
//   - 2026-07-28 (the io.modelcontextprotocol/tasks extension): a client
//     declares the extension in each request's capabilities, and the server
//     may answer any tools/call with a task ({"resultType": "task", ...});
//     tasks/get carries the result once terminal, tasks/update and
//     tasks/cancel are acknowledged with an empty result; a tool result
//     with isError is a "completed" task; notifications/tasks come over
//     subscriptions/listen for the task ids a client names.

// TasksExtension is the 2026-07-28 tasks extension's identifier.
const TasksExtension = "io.modelcontextprotocol/tasks"

// Task statuses.
const (
	TaskWorking   = "working"
	TaskCompleted = "completed"
	TaskFailed    = "failed"
	TaskCancelled = "cancelled"
)

// TaskSupport values of Tool.TaskSupport.
const (
	TaskSupportOptional = "optional"
	TaskSupportRequired = "required"
)

// TaskMode says whether a tools/call may be answered with a task.
type TaskMode uint8

const (
	// TaskNone: the client cannot take a task; answer with a result.
	TaskNone TaskMode = iota
	// TaskRequested: the client asked for a task (2025-11-25 params.task);
	// answer with one at once.
	TaskRequested
	// TaskAllowed: the client declared the tasks extension (2026-07-28);
	// the handler may answer with a task when the call would take long.
	TaskAllowed
)

// Task is the state of one task as the handler knows it. The handler
// reports working, completed (with Result, which may be a tool error) or
// cancelled; this package derives "failed" where a revision wants it.
type Task struct {
	ID            string
	Status        string
	StatusMessage string
	CreatedAt     time.Time
	LastUpdatedAt time.Time
	// PollInterval is the suggested time between polls; 0 sends none.
	PollInterval time.Duration
	// Result is the tool's result once the task is terminal; nil before.
	Result *CallToolResult
}

// TaskRequest carries what a tasks/* request brings besides the task id:
// its method, the HTTP headers (for forwarding) and the session.
type TaskRequest struct {
	// Method is the task method being served (tasks/get, tasks/result,
	// ...), for the handler's error messages; empty when the server
	// polls a task on its own (a 2026-07-28 listen stream's tasks).
	Method  string
	Header  http.Header
	Session SessionInfo
}

// TaskHandler is a Handler whose tools can run as tasks. Tasks are the
// handler's own (the gateway keeps them in its backends), so any replica
// can answer for any task. A task that does not exist, or is not the
// caller's, is answered with an *Error of CodeInvalidParams.
type TaskHandler interface {
	Handler
	// GetTask returns the task's current state, with its Result when
	// terminal.
	GetTask(ctx context.Context, id string, req *TaskRequest) (*Task, error)
	// AwaitTask returns the task once it is terminal, or ctx's error.
	AwaitTask(ctx context.Context, id string, req *TaskRequest) (*Task, error)
	// CancelTask asks for the task to be cancelled and returns its state
	// before that (so a terminal one can be refused).
	CancelTask(ctx context.Context, id string, req *TaskRequest) (*Task, error)
}

// TaskLister is a TaskHandler that can list the caller's tasks
// (2025-11-25 tasks/list). The revision requires the list to hold only
// the caller's own tasks, so a handler that cannot tell which tasks are
// the caller's does not implement it: then the tasks capability leaves
// "list" out and tasks/list is not found.
type TaskLister interface {
	TaskHandler
	// ListTasks returns one page of the caller's tasks and the cursor of
	// the next ("" at the end); an unknown cursor is an *Error.
	ListTasks(ctx context.Context, cursor string, req *TaskRequest) ([]*Task, string, error)
}

// taskHandler returns the handler as a TaskHandler, or nil.
func (s *Server) taskHandler() TaskHandler {
	th, _ := s.h.(TaskHandler)
	return th
}

// hasTasksExtension reports whether per-request client capabilities
// declare the tasks extension.
func hasTasksExtension(caps json.RawMessage) bool {
	found := false
	if len(caps) == 0 || caps[0] != '{' {
		return false
	}
	jsonscan.Object(caps, func(key, val []byte) {
		if string(key) != "extensions" || len(val) == 0 || val[0] != '{' {
			return
		}
		jsonscan.Object(val, func(k, v []byte) {
			if string(k) == TasksExtension && len(v) > 0 && v[0] == '{' {
				found = true
			}
		})
	})
	return found
}

// taskStatus is the status the revision reports: at 2025-11-25 a tool
// error makes the task failed; at 2026-07-28 "failed" is reserved for
// JSON-RPC errors, so it stays completed.
func taskStatus(t *Task, version string) string {
	if t.Status == TaskCompleted && t.Result != nil && t.Result.IsError && !isStateless(version) {
		return TaskFailed
	}
	return t.Status
}

func isTerminal(status string) bool {
	return status == TaskCompleted || status == TaskFailed || status == TaskCancelled
}

// appendTaskFields appends the members of a Task object, without braces.
func appendTaskFields(b []byte, t *Task, version string) []byte {
	b = append(b, `"taskId":`...)
	b = appendString(b, t.ID)
	b = append(b, `,"status":`...)
	b = appendString(b, taskStatus(t, version))
	if t.StatusMessage != "" {
		b = append(b, `,"statusMessage":`...)
		b = appendString(b, t.StatusMessage)
	}
	b = append(b, `,"createdAt":`...)
	b = appendString(b, t.CreatedAt.UTC().Format(time.RFC3339Nano))
	b = append(b, `,"lastUpdatedAt":`...)
	b = appendString(b, t.LastUpdatedAt.UTC().Format(time.RFC3339Nano))
	if isStateless(version) {
		// The backend decides how long an operation lives: unlimited here.
		b = append(b, `,"ttlMs":null`...)
		if t.PollInterval > 0 {
			b = append(b, `,"pollIntervalMs":`...)
			b = strconv.AppendInt(b, t.PollInterval.Milliseconds(), 10)
		}
		return b
	}
	b = append(b, `,"ttl":null`...)
	if t.PollInterval > 0 {
		b = append(b, `,"pollInterval":`...)
		b = strconv.AppendInt(b, t.PollInterval.Milliseconds(), 10)
	}
	return b
}

// appendCreateTaskResult encodes the answer to a tools/call that became a
// task.
func (s *Server) appendCreateTaskResult(b []byte, t *Task, version string) []byte {
	if isStateless(version) {
		b = append(b, `{"resultType":"task",`...)
		b = appendTaskFields(b, t, version)
		b = append(b, ',')
		b = append(b, s.serverInfo...)
		return append(b, '}')
	}
	b = append(b, `{"task":{`...)
	b = appendTaskFields(b, t, version)
	b = append(b, "}"...)
	if t.StatusMessage != "" {
		// The hint a host may show the model while the task runs.
		b = append(b, `,"_meta":{"io.modelcontextprotocol/model-immediate-response":`...)
		b = appendString(b, "Started as task "+t.ID+": "+t.StatusMessage)
		b = append(b, '}')
	}
	return append(b, '}')
}

// taskID reads params.taskId, and at 2026-07-28 over HTTP checks that the
// Mcp-Name header repeats it.
func taskID(sc *scope, p *params, method string) (string, *Error) {
	id, ok := jsonscan.Unquote(p.TaskID)
	if !ok || id == "" {
		return "", errorf(CodeInvalidParams, "%s: params.taskId must be a non-empty string", method)
	}
	if sc.checkHeader && sc.header != nil {
		switch hn := headerValue(sc.header, "Mcp-Name"); {
		case hn == "":
			return "", errorf(CodeHeaderMismatch, "missing required Mcp-Name header for %s", method)
		case hn != id:
			return "", errorf(CodeHeaderMismatch, "Mcp-Name header %q does not match params.taskId %q", hn, id)
		}
	}
	return id, nil
}

// taskError turns a handler error into the JSON-RPC error of a tasks/*
// request; a [Refusal] is kept for the transport, as for tools/call. A
// request whose held context (see holdContext) ended is told why.
func (s *Server) taskError(ctx context.Context, sc *scope, info *methodInfo, err error) *Error {
	method := info.name
	if e := s.heldEnd(ctx, info, s.taskWait); e != nil {
		return e
	}
	var rf *Refusal
	if errors.As(err, &rf) && rf.Err != nil {
		if sc.keepRefusal {
			sc.refused = rf
		}
		return rf.Err
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	s.log.Error("mcp: "+method+" failed", "err", err)
	return errorf(CodeInternalError, "%s: internal error", method)
}

// tasksMethod serves tasks/get, tasks/result, tasks/list, tasks/cancel
// (2025-11-25) and tasks/get, tasks/update, tasks/cancel (2026-07-28).
// The caller has checked that the method exists at the revision and that
// the handler is a TaskHandler.
func (s *Server) tasksMethod(ctx context.Context, sc *scope, sess *session, m *message, p *params, version string, b []byte) reply {
	fail := func(e *Error) reply { return reply{appendError(b, m.ID, e), e.Code} }
	// tasks/result waits as long as its task runs, and any task method
	// waits on a backend: each ends at TaskWaitTimeout, or with the
	// caller's credential.
	ctx, stop := s.holdContext(ctx, s.taskWait)
	defer stop()
	th := s.taskHandler()
	stateless := isStateless(version)
	req := &TaskRequest{Method: m.method, Header: sc.header, Session: SessionInfo{Transport: sc.transport, ProtocolVersion: version}}
	if sess != nil {
		req.Session.ID, req.Session.LogID = sess.id, sess.logID
		if !stateless {
			// As for tools/call: what the handler keeps of a task's
			// result (a link to it whole) belongs to this session.
			req.Session.Key = sess.key
		}
	}
	if m.info.handler == serveTasksList {
		lister, ok := th.(TaskLister)
		if !ok {
			return fail(errorf(CodeMethodNotFound, "method %q not found: this server does not list tasks (the tasks capability declares no list)", m.method))
		}
		cursor := ""
		if p.Cursor != nil && string(p.Cursor) != "null" {
			var ok bool
			if cursor, ok = jsonscan.Unquote(p.Cursor); !ok {
				return fail(errorf(CodeInvalidParams, "%s: params.cursor must be a string", m.method))
			}
		}
		tasks, next, err := lister.ListTasks(ctx, cursor, req)
		if err != nil {
			return fail(s.taskError(ctx, sc, m.info, err))
		}
		b = appendResultHead(b, m.ID)
		b = append(b, `{"tasks":[`...)
		for i, t := range tasks {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, '{')
			b = appendTaskFields(b, t, version)
			b = append(b, '}')
		}
		b = append(b, ']')
		if next != "" {
			b = append(b, `,"nextCursor":`...)
			b = appendString(b, next)
		}
		return reply{append(b, "}}"...), 0}
	}
	id, e := taskID(sc, p, m.method)
	if e != nil {
		return fail(e)
	}
	switch m.info.handler {
	case serveTasksGet:
		t, err := th.GetTask(ctx, id, req)
		if err != nil {
			return fail(s.taskError(ctx, sc, m.info, err))
		}
		b = appendResultHead(b, m.ID)
		b = append(b, '{')
		if stateless {
			b = append(b, `"resultType":"complete",`...)
		}
		b = appendTaskFields(b, t, version)
		if stateless && t.Result != nil && isTerminal(t.Status) && t.Status != TaskCancelled {
			// The extension's tasks/get carries the result once terminal.
			b = append(b, `,"result":`...)
			b = s.appendCallResult(b, t.Result, version)
		}
		if stateless {
			b = append(b, ',')
			b = append(b, s.serverInfo...)
		}
		return reply{append(b, "}}"...), 0}
	case serveTasksResult:
		t, err := th.AwaitTask(ctx, id, req)
		if err != nil {
			return fail(s.taskError(ctx, sc, m.info, err))
		}
		if t.Result == nil {
			return fail(errorf(CodeInternalError, "%s: task %q ended without a result", m.method, id))
		}
		b = appendResultHead(b, m.ID)
		res := s.appendCallResult(nil, t.Result, version)
		meta := append(append([]byte(`"_meta":{"io.modelcontextprotocol/related-task":{"taskId":`), appendString(nil, id)...), "}}"...)
		b = appendWithMeta(b, res, meta)
		return reply{append(b, '}'), 0}
	case serveTasksCancel:
		t, err := th.CancelTask(ctx, id, req)
		if err != nil {
			return fail(s.taskError(ctx, sc, m.info, err))
		}
		if stateless {
			// The extension acknowledges; cancellation is cooperative.
			b = appendResultHead(b, m.ID)
			b = append(b, `{"resultType":"complete",`...)
			b = append(b, s.serverInfo...)
			return reply{append(b, "}}"...), 0}
		}
		if st := taskStatus(t, version); isTerminal(st) {
			return fail(errorf(CodeInvalidParams, "Cannot cancel task: already in terminal status '%s'", st))
		}
		b = appendResultHead(b, m.ID)
		c := *t
		c.Status, c.Result = TaskCancelled, nil
		c.StatusMessage = "The task was cancelled by request."
		c.LastUpdatedAt = time.Now()
		b = append(b, '{')
		b = appendTaskFields(b, &c, version)
		return reply{append(b, "}}"...), 0}
	case serveTasksUpdate:
		// No task of this server ever needs input: check that the task
		// exists and acknowledge.
		if _, err := th.GetTask(ctx, id, req); err != nil {
			return fail(s.taskError(ctx, sc, m.info, err))
		}
		b = appendResultHead(b, m.ID)
		b = append(b, `{"resultType":"complete",`...)
		b = append(b, s.serverInfo...)
		return reply{append(b, "}}"...), 0}
	}
	return fail(errorf(CodeMethodNotFound, "method %q not found", m.method))
}

// taskMode decides whether the tools/call req may be answered with a task.
// At 2025-11-25 the client asks with params.task, for a tool that declares
// task support (else -32601, as the revision says); at 2026-07-28 the
// client's tasks extension allows it. A server without a TaskHandler
// ignores params.task, as one that declares no tasks capability must.
func (s *Server) taskMode(req *CallToolRequest, p *params, version string) *Error {
	if s.taskHandler() == nil {
		return nil
	}
	if isStateless(version) {
		if hasTasksExtension(p.meta.ClientCapabilities) {
			req.Task = TaskAllowed
		}
		return nil
	}
	if !hasTasks(version) {
		return nil
	}
	support := ""
	if req.Tool != nil {
		support = req.Tool.TaskSupport
	}
	asked := p.Task != nil && string(p.Task) != "null"
	switch {
	case asked && (len(p.Task) == 0 || p.Task[0] != '{'):
		return errorf(CodeInvalidParams, "tools/call: params.task must be an object")
	case asked && support == "":
		return errorf(CodeMethodNotFound, "tools/call: tool %q does not support task-augmented calls", req.Name)
	case !asked && support == TaskSupportRequired:
		return errorf(CodeMethodNotFound, "tools/call: tool %q must be called as a task", req.Name)
	case asked:
		req.Task = TaskRequested
	}
	return nil
}

// missingTasksExtension is the -32021 error of a 2026-07-28 tasks request
// from a client that did not declare the extension.
func missingTasksExtension() *Error {
	return &Error{Code: CodeMissingRequiredClientCapabilities, Message: "Missing required client capability",
		Data: json.RawMessage(`{"requiredCapabilities":{"extensions":{"` + TasksExtension + `":{}}}}`)}
}

// tasksCapability is the 2025-11-25 server capability of a TaskHandler;
// listingTasksCapability that of a TaskLister.
const (
	tasksCapability        = `"tasks":{"cancel":{},"requests":{"tools":{"call":{}}}}`
	listingTasksCapability = `"tasks":{"list":{},"cancel":{},"requests":{"tools":{"call":{}}}}`
)

// capsFor is the capabilities object of an initialize result at version.
func (s *Server) capsFor(version string) []byte {
	if s.capsTasks != nil && hasTasks(version) {
		return s.capsTasks
	}
	return s.caps
}

// MaxListenTasks is how many task ids one subscriptions/listen may
// watch. Each is polled every second while it runs, within the
// stream's principal's share of MaxTaskPolls (half of 100 a second by
// default): 32 fit in it, and an agent rarely follows more tasks at once;
// one with more listens on another stream or polls with tasks/get.
const MaxListenTasks = 32

// maxListenElements bounds the elements of notifications.taskIds, counted
// before anything is decoded.
const maxListenElements = 4 * MaxListenTasks

// decodeTaskIDs reads notifications.taskIds: an array of non-empty
// strings, at most MaxListenTasks, duplicates dropped.
func decodeTaskIDs(raw json.RawMessage) ([]string, error) {
	// Count first, without allocating: a hostile array of a million ids
	// is refused for the price of a scan, not decoded. Duplicates are
	// allowed up to a few times the bound.
	n := 0
	jsonscan.Elements(raw, func([]byte) { n++ })
	if n > maxListenElements {
		return nil, fmt.Errorf("%d task ids, more than the %d one stream may follow; follow the others on another stream, or poll them with tasks/get", n, MaxListenTasks)
	}
	var ids []string
	if err := json.Unmarshal(raw, &ids); err != nil {
		return nil, errors.New("must be an array of strings")
	}
	seen := make(map[string]bool, len(ids))
	out := ids[:0]
	for _, id := range ids {
		if id == "" {
			return nil, errors.New("a task id must be a non-empty string")
		}
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	if len(out) > MaxListenTasks {
		return nil, fmt.Errorf("%d task ids, more than the %d one stream may follow; follow the others on another stream, or poll them with tasks/get", len(out), MaxListenTasks)
	}
	return out, nil
}

// watchTasks follows the tasks of one subscriptions/listen stream of
// principal who and sends notifications/tasks (the whole task, as
// tasks/get would answer) on the returned channel each time a task's
// status changes, from its first state on, until it is terminal or
// unknown, or ctx ends. One goroutine, counted in wg, polls the tasks one
// at a time, each when its poll interval has passed and the stream's
// turn in the poll budget comes (pollbudget.go), each poll bounded by
// TaskWaitTimeout.
func (s *Server) watchTasks(ctx context.Context, wg *sync.WaitGroup, sc *scope, ids []string, subMeta []byte, who string) <-chan []byte {
	th := s.taskHandler()
	out := make(chan []byte, 1)
	req := &TaskRequest{Header: sc.header, Session: SessionInfo{Transport: sc.transport, ProtocolVersion: Version20260728}}
	type watched struct {
		id, last string
		due      time.Time
	}
	ws := make([]*watched, len(ids))
	now := time.Now()
	for i, id := range ids {
		ws[i] = &watched{id: id, due: now}
	}
	budget := s.polls.forStream(who)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer budget.release()
		timer := time.NewTimer(time.Hour)
		defer timer.Stop()
		for len(ws) > 0 {
			// The task due first; of two due at once, the one named
			// first, so under a tight budget every task takes its turn.
			i := 0
			for k, w := range ws {
				if w.due.Before(ws[i].due) {
					i = k
				}
			}
			w := ws[i]
			if d := time.Until(w.due); d > 0 {
				timer.Reset(d)
				select {
				case <-ctx.Done():
					return
				case <-timer.C:
				}
			}
			if budget.wait(ctx) != nil {
				return
			}
			pctx, cancel := context.WithTimeout(ctx, s.taskWait)
			t, err := th.GetTask(pctx, w.id, req)
			cancel()
			if err != nil {
				// Unknown, or the handler failed: nothing to tell.
				ws = slices.Delete(ws, i, i+1)
				continue
			}
			if st := taskStatus(t, Version20260728); st != w.last {
				w.last = st
				select {
				case out <- s.taskNotification(t, subMeta):
				case <-ctx.Done():
					return
				}
			}
			if isTerminal(t.Status) {
				ws = slices.Delete(ws, i, i+1)
				continue
			}
			d := t.PollInterval
			if d <= 0 {
				d = time.Second
			}
			w.due = time.Now().Add(d)
		}
	}()
	return out
}

// taskNotification is notifications/tasks for t (2026-07-28).
func (s *Server) taskNotification(t *Task, subMeta []byte) []byte {
	b := []byte(notificationHead + notificationTasks + `","params":{`)
	b = appendTaskFields(b, t, Version20260728)
	if t.Result != nil && t.Status == TaskCompleted {
		b = append(b, `,"result":`...)
		b = s.appendCallResult(b, t.Result, Version20260728)
	}
	b = append(b, ',')
	b = append(b, subMeta...)
	return append(b, "}}"...)
}

// taskNotCreated answers a task-augmented call (2025-11-25) that created
// no task, because it failed before its work started (bad arguments, a
// backend error): the client expects a CreateTaskResult, so the tool's
// answer goes as a JSON-RPC error whose message is its text and whose
// data is the CallToolResult itself.
func (s *Server) taskNotCreated(res *CallToolResult, version string) *Error {
	msg := "tools/call: no task was created"
	for i, c := range res.Content {
		if c.Type == "" || c.Type == "text" {
			msg += ": " + res.Text(i)
			break
		}
	}
	return &Error{Code: CodeInternalError, Message: msg, Data: s.appendCallResult(nil, res, version), Sensitive: true}
}
