package gateway

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/callwire"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// DefaultOperationWait is how long a long-running tool's call waits for its
// operation by default (Options.Calls.OperationWait).
const DefaultOperationWait = 30 * time.Second

// cancelTimeout bounds the CancelOperation sent after the client went
// away.
const cancelTimeout = 10 * time.Second

// callLongRunning serves tools/call of a long-running tool: it starts the
// operation and waits for it (see the package doc of
// gateway/internal/longrunning). The call's deadline bounds the start and the wait
// together; reaching it, or the operation wait, is not an error but
// returns the unfinished operation's handle. Only the client's own
// cancellation ends the call without a result, and cancels the operation
// when Options.Calls.OperationCancel is set.
func (g *Gateway) callLongRunning(ctx context.Context, req *mcp.CallToolRequest, t *compiled.Tool, in proto.Message) (*mcp.CallToolResult, error) {
	client := ctx
	ctx, cancel := context.WithTimeout(ctx, t.Call.Timeout)
	defer cancel()
	var out callwire.Frame
	defer out.Release()
	if err := t.Call.Conn.Invoke(ctx, t.Call.Method, in, &out, callwire.Codec); err != nil {
		return g.calls.Failed(ctx, t, status.Convert(err)), nil
	}
	lr := t.LRO
	op, err := lr.Start(in, out.Bytes())
	if err != nil {
		return nil, fmt.Errorf("the response of %s: %w", t.Call.Method, err)
	}
	if req.Task == mcp.TaskRequested && lr.Taskable {
		// A task-augmented call (2025-11-25) answers at once.
		if res := g.taskResult(ctx, t, op); res != nil {
			return res, nil
		}
	}
	var pollErr *status.Status
	if !op.Done() && lr.Ops != nil && lr.Ops.HasGet && lr.Wait > 0 {
		op, pollErr, err = lr.Await(ctx, client, req, op)
		if err != nil {
			g.cancelOperation(client, t, op.Name())
			return nil, err
		}
	}
	if !op.Done() && req.Task == mcp.TaskAllowed && lr.Taskable {
		// The client takes tasks (2026-07-28): a task instead of the
		// handle.
		if res := g.taskResult(ctx, t, op); res != nil {
			return res, nil
		}
	}
	return lr.Result(ctx, op, pollErr, t.Call.Types), nil
}

// cancelOperation cancels the operation the client stopped waiting for,
// when the operator asked for that (a client that went away should not
// kill a job by default). It runs after the client's context ended, so on
// a context of its own that keeps the call's metadata.
func (g *Gateway) cancelOperation(client context.Context, t *compiled.Tool, name string) {
	lr := t.LRO
	if !lr.Cancel || lr.Ops == nil || !lr.Ops.HasCancel || name == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(client), cancelTimeout)
	defer cancel()
	if err := lr.Ops.Cancel(ctx, name); err != nil {
		g.opts.Logger.Warn("cancelling the operation of a cancelled call failed", "tool", t.Definition.Name, "operation", name, "err", err)
		return
	}
	g.opts.Logger.Info("cancelled the operation of a cancelled call", "tool", t.Definition.Name, "operation", name)
}
