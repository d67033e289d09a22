package longrunning

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/anytypes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/callwire"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/rpcstatus"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
	"github.com/grpc-mcp-gateway/gateway/internal/jsonstr"
)

// Polling of an operation through GetOperation: the first poll after
// pollMin, each next one 1.5 times later, at most pollMax apart. A
// WaitOperation call lasts the whole remaining wait, or pollMax when the
// caller wants progress, so metadata still flows.
const (
	pollMin = 100 * time.Millisecond
	pollMax = 5 * time.Second
)

// Full method names of google.longrunning.Operations.
const (
	GetOperationMethod    = "/" + OperationsService + "/GetOperation"
	WaitOperationMethod   = "/" + OperationsService + "/WaitOperation"
	CancelOperationMethod = "/" + OperationsService + "/CancelOperation"
)

// Await polls op until it is done, the wait or ctx's deadline passes
// (returning the latest state), polling fails for good (returning the
// status), or the client cancels (returning its error). Each new metadata
// is reported as progress.
func (lr *Method) Await(ctx, client context.Context, req *mcp.CallToolRequest, op *Operation) (*Operation, *status.Status, error) {
	wctx, cancel := context.WithTimeout(ctx, lr.Wait)
	defer cancel()
	var p progressReporter
	report := func(op *Operation) { p.report(client, req, lr.Ops, op) }
	report(op)
	return lr.Ops.Poll(wctx, client, op, req.ProgressToken != nil, true, report)
}

// Poll polls op until it is done or wctx ends (returning the latest
// state), polling fails for good (returning the status), or client ends
// (returning its error); report, when set, sees each new state. wctx is
// client or derives from it. short keeps each WaitOperation short, so
// that report sees metadata as it changes; mayWait false polls with
// GetOperation alone (a task whose caller may not call WaitOperation).
func (c *Client) Poll(wctx, client context.Context, op *Operation, short, mayWait bool, report func(*Operation)) (*Operation, *status.Status, error) {
	delay := pollMin
	// A custom operation's Wait has no timeout of its own: when progress
	// is wanted, Get shows each change instead.
	useWait := mayWait && c.HasWait && !(short && c.custom != nil)
	timer := time.NewTimer(0)
	defer timer.Stop()
	<-timer.C
	sleep := func() bool {
		timer.Reset(delay)
		delay = min(delay*3/2, pollMax)
		select {
		case <-timer.C:
			return true
		case <-wctx.Done():
			return false
		}
	}
	for !op.done {
		var next *Operation
		var err error
		if useWait {
			slice := remaining(wctx) * 9 / 10
			if short {
				slice = min(slice, pollMax)
			}
			start := time.Now()
			next, err = c.wait(wctx, op, slice)
			if status.Code(err) == codes.Unimplemented {
				useWait = false
				continue
			}
			// A Wait that came back early with nothing new would make a
			// busy loop: back off as polling does.
			if err == nil && !next.done && time.Since(start) < slice/2 && sameState(op, next) && !sleep() {
				err = wctx.Err()
			}
		} else {
			if !sleep() {
				err = wctx.Err()
			} else {
				next, err = c.Get(wctx, op)
			}
		}
		switch {
		case err == nil:
			if next.name == "" {
				next.name = op.name // a backend that leaves it out
			}
			op = next
			if report != nil {
				report(op)
			}
			continue
		case client.Err() != nil:
			return op, nil, client.Err()
		case wctx.Err() != nil:
			return op, nil, nil // waited long enough: the handle
		}
		st := status.Convert(err)
		if !rpcstatus.Retryable(st.Code()) {
			return op, st, nil
		}
		if !sleep() {
			if client.Err() != nil {
				return op, nil, client.Err()
			}
			return op, nil, nil
		}
	}
	return op, nil, nil
}

// sameState reports whether b says nothing a has not said.
func sameState(a, b *Operation) bool {
	return a.done == b.done && a.metadata.typeURL == b.metadata.typeURL && bytes.Equal(a.metadata.value, b.metadata.value)
}

func remaining(ctx context.Context) time.Duration {
	d, ok := ctx.Deadline()
	if !ok {
		return pollMax
	}
	return time.Until(d)
}

// progressReporter sends each new metadata of an operation as
// notifications/progress, its message the metadata's compact JSON.
type progressReporter struct {
	n    int
	last anyValue
}

func (p *progressReporter) report(ctx context.Context, req *mcp.CallToolRequest, ops *Client, op *Operation) {
	if req.ProgressToken == nil || op.metadata.typeURL == "" {
		return
	}
	if op.metadata.typeURL == p.last.typeURL && bytes.Equal(op.metadata.value, p.last.value) {
		return
	}
	p.last = op.metadata
	js, err := ops.anyJSON(ctx, nil, op.metadata)
	if err != nil {
		return
	}
	p.n++
	_ = req.NotifyProgress(ctx, float64(p.n), 0, string(js))
}

// Get calls GetOperation (a custom operation's polling method).
func (c *Client) Get(ctx context.Context, op *Operation) (*Operation, error) {
	if c.custom != nil {
		return c.custom.poll(ctx, c.conn, c.custom.get, op)
	}
	return c.invoke(ctx, GetOperationMethod, nameRequest(op.name))
}

// wait calls WaitOperation with the given timeout (a custom operation's
// Wait, bounded by ctx).
func (c *Client) wait(ctx context.Context, op *Operation, timeout time.Duration) (*Operation, error) {
	if c.custom != nil {
		return c.custom.poll(ctx, c.conn, c.custom.wait, op)
	}
	return c.invoke(ctx, WaitOperationMethod, waitRequest(op.name, max(timeout, time.Millisecond)))
}

func (c *Client) invoke(ctx context.Context, method string, req []byte) (*Operation, error) {
	var out callwire.Frame
	defer out.Release()
	if err := c.conn.Invoke(ctx, method, callwire.Encoded(req), &out, callwire.Codec); err != nil {
		return nil, err
	}
	op, err := decodeOperation(out.Bytes())
	if err != nil {
		return nil, status.Error(codes.Internal, fmt.Sprintf("%s: %v", method, err))
	}
	return op, nil
}

// Cancel calls CancelOperation.
func (c *Client) Cancel(ctx context.Context, name string) error {
	var out callwire.Frame
	defer out.Release()
	return c.conn.Invoke(ctx, CancelOperationMethod, callwire.Encoded(nameRequest(name)), &out, callwire.Codec)
}

// Result is what a call answers for op: the response when it finished
// well, the status as any gRPC error when it failed, else the handle.
func (lr *Method) Result(ctx context.Context, op *Operation, pollErr *status.Status, types *anytypes.Types) *mcp.CallToolResult {
	if op.done {
		return DoneResult(ctx, op, lr, lr.Ops, types)
	}
	return lr.handleResult(ctx, op, pollErr)
}

// DoneResult is the result of a finished operation, the same for a call
// that waited and for a task: the response, or the error as any gRPC
// error. lr, when known, renders its own response type with the encoder
// compiled for it; anything else is rendered through ops. ctx bounds the
// lookups of types met for the first time (gateway/internal/anytypes).
func DoneResult(ctx context.Context, op *Operation, lr *Method, ops *Client, types *anytypes.Types) *mcp.CallToolResult {
	if st := operationStatus(op); st != nil {
		if !exposesDebugInfo(lr, ops) {
			st, _ = rpcstatus.WithoutDebugInfo(st)
		}
		return rpcstatus.Result(ctx, st, types)
	}
	if !op.hasResponse {
		// AIP-151: a method whose response is Empty may leave it unset.
		return jsonResult([]byte("{}"))
	}
	var js []byte
	var err error
	switch {
	case lr != nil && (op.response.typeName() == lr.responseType || ops == nil):
		js, err = types.AppendWrapped(ctx, nil, lr.response, op.response.value, lr.wrapResponse)
	case ops != nil:
		js, err = ops.anyJSON(ctx, nil, op.response)
	default:
		err = fmt.Errorf("unknown response type")
	}
	var unknown *anytypes.UnknownTypeError
	if errors.As(err, &unknown) {
		return rpcstatus.Result(ctx, status.New(codes.Internal, fmt.Sprintf("the operation %s finished, but the gateway cannot show its response: %s", op.name, unknown.Sentence("a value"))), types)
	}
	if err != nil {
		return rpcstatus.Result(ctx, status.New(codes.Internal, fmt.Sprintf("the operation %s finished, but its response (%s) could not be decoded: %v", op.name, op.response.typeURL, err)), types)
	}
	return jsonResult(js)
}

// exposesDebugInfo reports Options.Calls.ExposeDebugInfo as the operation's
// tool (lr) or, for a task that names no tool, its backend's Operations
// client knows it; withheld when neither is known.
func exposesDebugInfo(lr *Method, ops *Client) bool {
	if lr != nil {
		return lr.ExposeDebugInfo
	}
	return ops != nil && ops.ExposeDebugInfo
}

// operationStatus is the error of a finished operation, nil when it
// succeeded.
func operationStatus(op *Operation) *status.Status {
	if op.err == nil {
		return nil
	}
	st := status.FromProto(op.err)
	if st.Code() == codes.OK {
		st = status.New(codes.Unknown, op.err.GetMessage())
	}
	return st
}

// handleResult is the result of an operation still running: the handle,
// and a sentence naming the tool that checks on it.
func (lr *Method) handleResult(ctx context.Context, op *Operation, pollErr *status.Status) *mcp.CallToolResult {
	js := appendHandle(ctx, nil, lr.HandleKey, op, lr.Ops)
	var s string
	if pollErr != nil {
		s = fmt.Sprintf("The operation %s was started and has not finished; polling it failed with %s: %s.", op.name, telemetry.CodeName(pollErr.Code()), rpcstatus.ClientMessage(pollErr))
	} else if lr.Wait > 0 && lr.Ops != nil && lr.Ops.HasGet {
		s = fmt.Sprintf("The operation %s has not finished after waiting up to %s; it keeps running in the backend.", op.name, lr.Wait)
	} else {
		s = fmt.Sprintf("The operation %s was started and has not finished yet.", op.name)
	}
	if lr.GetTool != "" && lr.Ops != nil && lr.Ops.custom != nil {
		s += fmt.Sprintf(" Call the tool %s with %s later to check on it; once its status is DONE it is the result.", lr.GetTool, lr.Ops.custom.pollArguments(op))
	} else if lr.GetTool != "" {
		s += fmt.Sprintf(` Call the tool %s with {"name": %q} later to check on it; once "done" is true it carries the result.`, lr.GetTool, op.name)
	}
	if lr.WaitTool != "" {
		s += fmt.Sprintf(" %s waits for it instead.", lr.WaitTool)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{{Type: mcp.ContentText, Structured: true}, {Type: mcp.ContentText, Text: s}},
		StructuredContent: js,
	}
}

// appendHandle appends {"<key>": {"name", "done": false, "metadata"}};
// metadata that cannot be rendered is left out.
func appendHandle(ctx context.Context, b []byte, key string, op *Operation, ops *Client) []byte {
	b = append(b, `{"`...)
	b = append(b, key...)
	b = append(b, `":{"name":`...)
	b = jsonstr.Append(b, op.name)
	b = append(b, `,"done":false`...)
	if op.metadata.typeURL != "" && ops != nil {
		if js, err := ops.anyJSON(ctx, append(b, `,"metadata":`...), op.metadata); err == nil {
			b = js
		}
	}
	return append(b, "}}"...)
}

// taskPollInterval is the poll interval suggested to task clients.
const taskPollInterval = time.Second

// TaskOf is the task state of op under id; withResult adds the result of
// a finished one. lr, when known, renders the response (see doneResult).
// started is when the id was issued, the creation time when the
// operation's metadata has none.
func TaskOf(ctx context.Context, id string, started time.Time, op *Operation, lr *Method, ops *Client, withResult bool) *mcp.Task {
	t := &mcp.Task{ID: id, Status: mcp.TaskWorking, PollInterval: taskPollInterval}
	t.CreatedAt, t.LastUpdatedAt = ops.times(op, started)
	switch st := operationStatus(op); {
	case !op.done:
		if op.metadata.typeURL != "" {
			if js, err := ops.anyJSON(ctx, nil, op.metadata); err == nil {
				t.StatusMessage = string(js)
			}
		}
	case st != nil && st.Code() == codes.Canceled:
		t.Status, t.StatusMessage = mcp.TaskCancelled, telemetry.CodeName(st.Code())+": "+st.Message()
	case st != nil:
		t.Status, t.StatusMessage = mcp.TaskCompleted, telemetry.CodeName(st.Code())+": "+st.Message()
	default:
		t.Status = mcp.TaskCompleted
	}
	if op.done && withResult {
		// A task's result is read by tasks/result, not observed as a call.
		t.Result = DoneResult(ctx, op, lr, ops, ops.types)
	}
	return t
}

// times are the task's creation and last update, from the metadata's
// timestamps (found at discovery) when it has them; the operation itself
// carries none, so otherwise they are when the task was started and now.
func (c *Client) times(op *Operation, started time.Time) (created, updated time.Time) {
	created, updated = started, time.Now()
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

// jsonResult is a successful result carrying js as structuredContent and,
// for clients that read only content, as its text block (as the
// gateway's unary calls answer).
func jsonResult(js []byte) *mcp.CallToolResult {
	return &mcp.CallToolResult{
		Content:           []mcp.Content{{Type: mcp.ContentText, Structured: true}},
		StructuredContent: js,
	}
}

// Start is the operation a call of lr's method started: its response
// (wire) decoded as a google.longrunning.Operation or, for a custom
// operation, as the API's own Operation, with the polling requests built
// from it and the original request (in).
func (lr *Method) Start(in proto.Message, wire []byte) (*Operation, error) {
	if lr.Ops != nil && lr.Ops.custom != nil {
		return lr.Ops.custom.start(in, wire)
	}
	return decodeOperation(wire)
}

// Named is the operation of that name as a task id recalls it, to poll.
func Named(name string) *Operation { return &Operation{name: name} }

// Name is the operation's name, which polls and cancels it.
func (op *Operation) Name() string { return op.name }

// Done reports whether the operation has finished.
func (op *Operation) Done() bool { return op.done }

// IsCustom reports whether c polls a custom (Compute Engine style)
// operation, which cannot be a task.
func (c *Client) IsCustom() bool { return c.custom != nil }

// Types resolves the Any payloads of c's backend.
func (c *Client) Types() *anytypes.Types { return c.types }
