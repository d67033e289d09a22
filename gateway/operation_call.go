package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/callwire"
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
	// cancelTimeout bounds the CancelOperation sent after the client went
	// away.
	cancelTimeout = 10 * time.Second
)

// Full method names of google.longrunning.Operations.
const (
	getOperationMethod    = "/" + operationsService + "/GetOperation"
	waitOperationMethod   = "/" + operationsService + "/WaitOperation"
	cancelOperationMethod = "/" + operationsService + "/CancelOperation"
	listOperationsMethod  = "/" + operationsService + "/ListOperations"
)

// callLongRunning serves tools/call of a long-running tool: it starts the
// operation and waits for it (see "Long-running operations" in
// operation.go). The call's deadline bounds the start and the wait
// together; reaching it, or the operation wait, is not an error but
// returns the unfinished operation's handle. Only the client's own
// cancellation ends the call without a result, and cancels the operation
// when Options.Calls.OperationCancel is set.
func (g *Gateway) callLongRunning(ctx context.Context, req *mcp.CallToolRequest, t *tool, in proto.Message) (*mcp.CallToolResult, error) {
	client := ctx
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	var out callwire.Frame
	defer out.Release()
	if err := t.conn.Invoke(ctx, t.method, in, &out, callwire.Codec); err != nil {
		return g.callFailed(ctx, t, status.Convert(err)), nil
	}
	lr := t.lro
	var op *operation
	var err error
	if lr.ops != nil && lr.ops.custom != nil {
		op, err = lr.ops.custom.start(in, out.Bytes())
	} else {
		op, err = decodeOperation(out.Bytes())
	}
	if err != nil {
		return nil, fmt.Errorf("the response of %s: %w", t.method, err)
	}
	if req.Task == mcp.TaskRequested && lr.taskable {
		// A task-augmented call (2025-11-25) answers at once.
		if res := g.taskResult(ctx, t, op); res != nil {
			return res, nil
		}
	}
	var pollErr *status.Status
	if !op.done && lr.ops != nil && lr.ops.hasGet && lr.wait > 0 {
		op, pollErr, err = lr.await(ctx, client, req, op)
		if err != nil {
			g.cancelOperation(client, t, op.name)
			return nil, err
		}
	}
	if !op.done && req.Task == mcp.TaskAllowed && lr.taskable {
		// The client takes tasks (2026-07-28): a task instead of the
		// handle.
		if res := g.taskResult(ctx, t, op); res != nil {
			return res, nil
		}
	}
	return lr.result(ctx, op, pollErr, t), nil
}

// await polls op until it is done, the wait or ctx's deadline passes
// (returning the latest state), polling fails for good (returning the
// status), or the client cancels (returning its error). Each new metadata
// is reported as progress.
func (lr *longRunning) await(ctx, client context.Context, req *mcp.CallToolRequest, op *operation) (*operation, *status.Status, error) {
	wctx, cancel := context.WithTimeout(ctx, lr.wait)
	defer cancel()
	var p progressReporter
	report := func(op *operation) { p.report(client, req, lr.ops, op) }
	report(op)
	return lr.ops.poll(wctx, client, op, req.ProgressToken != nil, true, report)
}

// poll polls op until it is done or wctx ends (returning the latest
// state), polling fails for good (returning the status), or client ends
// (returning its error); report, when set, sees each new state. wctx is
// client or derives from it. short keeps each WaitOperation short, so
// that report sees metadata as it changes; mayWait false polls with
// GetOperation alone (a task whose caller may not call WaitOperation).
func (c *operationsClient) poll(wctx, client context.Context, op *operation, short, mayWait bool, report func(*operation)) (*operation, *status.Status, error) {
	delay := pollMin
	// A custom operation's Wait has no timeout of its own: when progress
	// is wanted, Get shows each change instead.
	useWait := mayWait && c.hasWait && !(short && c.custom != nil)
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
		var next *operation
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
				next, err = c.get(wctx, op)
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
		if !Retryable(st.Code()) {
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
func sameState(a, b *operation) bool {
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

func (p *progressReporter) report(ctx context.Context, req *mcp.CallToolRequest, ops *operationsClient, op *operation) {
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

// get calls GetOperation (a custom operation's polling method).
func (c *operationsClient) get(ctx context.Context, op *operation) (*operation, error) {
	if c.custom != nil {
		return c.custom.poll(ctx, c.conn, c.custom.get, op)
	}
	return c.invoke(ctx, getOperationMethod, nameRequest(op.name))
}

// wait calls WaitOperation with the given timeout (a custom operation's
// Wait, bounded by ctx).
func (c *operationsClient) wait(ctx context.Context, op *operation, timeout time.Duration) (*operation, error) {
	if c.custom != nil {
		return c.custom.poll(ctx, c.conn, c.custom.wait, op)
	}
	return c.invoke(ctx, waitOperationMethod, waitRequest(op.name, max(timeout, time.Millisecond)))
}

func (c *operationsClient) invoke(ctx context.Context, method string, req []byte) (*operation, error) {
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

// cancel calls CancelOperation.
func (c *operationsClient) cancel(ctx context.Context, name string) error {
	var out callwire.Frame
	defer out.Release()
	return c.conn.Invoke(ctx, cancelOperationMethod, callwire.Encoded(nameRequest(name)), &out, callwire.Codec)
}

// cancelOperation cancels the operation the client stopped waiting for,
// when the operator asked for that (a client that went away should not
// kill a job by default). It runs after the client's context ended, so on
// a context of its own that keeps the call's metadata.
func (g *Gateway) cancelOperation(client context.Context, t *tool, name string) {
	lr := t.lro
	if !lr.cancel || lr.ops == nil || !lr.ops.hasCancel || name == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(client), cancelTimeout)
	defer cancel()
	if err := lr.ops.cancel(ctx, name); err != nil {
		g.opts.Logger.Warn("cancelling the operation of a cancelled call failed", "tool", t.def.Name, "operation", name, "err", err)
		return
	}
	g.opts.Logger.Info("cancelled the operation of a cancelled call", "tool", t.def.Name, "operation", name)
}

// result is what a call answers for op: the response when it finished
// well, the status as any gRPC error when it failed, else the handle.
func (lr *longRunning) result(ctx context.Context, op *operation, pollErr *status.Status, t *tool) *mcp.CallToolResult {
	if op.done {
		return doneResult(ctx, op, lr, lr.ops, t.types)
	}
	return lr.handleResult(ctx, op, pollErr)
}

// doneResult is the result of a finished operation, the same for a call
// that waited and for a task: the response, or the error as any gRPC
// error. lr, when known, renders its own response type with the encoder
// compiled for it; anything else is rendered through ops. ctx bounds the
// lookups of types met for the first time (anytypes.go).
func doneResult(ctx context.Context, op *operation, lr *longRunning, ops *operationsClient, types *anyTypes) *mcp.CallToolResult {
	if st := operationStatus(op); st != nil {
		if !exposesDebugInfo(lr, ops) {
			st, _ = withoutDebugInfo(st)
		}
		return statusResult(ctx, st, types)
	}
	if !op.hasResponse {
		// AIP-151: a method whose response is Empty may leave it unset.
		return jsonResult([]byte("{}"))
	}
	var js []byte
	var err error
	switch {
	case lr != nil && (op.response.typeName() == lr.responseType || ops == nil):
		js, err = types.appendWrapped(ctx, nil, lr.response, op.response.value, lr.wrapResponse)
	case ops != nil:
		js, err = ops.anyJSON(ctx, nil, op.response)
	default:
		err = fmt.Errorf("unknown response type")
	}
	var unknown *unknownTypeError
	if errors.As(err, &unknown) {
		return statusResult(ctx, status.New(codes.Internal, fmt.Sprintf("the operation %s finished, but the gateway cannot show its response: %s", op.name, unknown.sentence("a value"))), types)
	}
	if err != nil {
		return statusResult(ctx, status.New(codes.Internal, fmt.Sprintf("the operation %s finished, but its response (%s) could not be decoded: %v", op.name, op.response.typeURL, err)), types)
	}
	return jsonResult(js)
}

// exposesDebugInfo reports Options.Calls.ExposeDebugInfo as the operation's
// tool (lr) or, for a task that names no tool, its backend's Operations
// client knows it; withheld when neither is known.
func exposesDebugInfo(lr *longRunning, ops *operationsClient) bool {
	if lr != nil {
		return lr.exposeDebugInfo
	}
	return ops != nil && ops.exposeDebugInfo
}

// operationStatus is the error of a finished operation, nil when it
// succeeded.
func operationStatus(op *operation) *status.Status {
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
func (lr *longRunning) handleResult(ctx context.Context, op *operation, pollErr *status.Status) *mcp.CallToolResult {
	js := appendHandle(ctx, nil, lr.handleKey, op, lr.ops)
	var s string
	if pollErr != nil {
		s = fmt.Sprintf("The operation %s was started and has not finished; polling it failed with %s: %s.", op.name, telemetry.CodeName(pollErr.Code()), clientMessage(pollErr))
	} else if lr.wait > 0 && lr.ops != nil && lr.ops.hasGet {
		s = fmt.Sprintf("The operation %s has not finished after waiting up to %s; it keeps running in the backend.", op.name, lr.wait)
	} else {
		s = fmt.Sprintf("The operation %s was started and has not finished yet.", op.name)
	}
	if lr.getTool != "" && lr.ops != nil && lr.ops.custom != nil {
		s += fmt.Sprintf(" Call the tool %s with %s later to check on it; once its status is DONE it is the result.", lr.getTool, lr.ops.custom.pollArguments(op))
	} else if lr.getTool != "" {
		s += fmt.Sprintf(` Call the tool %s with {"name": %q} later to check on it; once "done" is true it carries the result.`, lr.getTool, op.name)
	}
	if lr.waitTool != "" {
		s += fmt.Sprintf(" %s waits for it instead.", lr.waitTool)
	}
	return &mcp.CallToolResult{
		Content:           []mcp.Content{{Type: mcp.ContentText, Structured: true}, {Type: mcp.ContentText, Text: s}},
		StructuredContent: js,
	}
}

// appendHandle appends {"<key>": {"name", "done": false, "metadata"}};
// metadata that cannot be rendered is left out.
func appendHandle(ctx context.Context, b []byte, key string, op *operation, ops *operationsClient) []byte {
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
