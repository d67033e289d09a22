package call

import (
	"context"
	"fmt"
	"log/slog"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/rpcstatus"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// Failed is the result of every backend call that failed, on every
// call path (unary, client and server streams, the start of a
// long-running operation): the status as the client may see it
// (ClientStatus), as a tool error (rpcstatus.Result); or, for a message
// grpc-go refused for one of the backend connection's size limits
// (backendconn.Conn.ExceededLimit), which limit, and that repeating the
// call cannot help.
func (e *Env) Failed(ctx context.Context, t *compiled.Tool, st *status.Status) *mcp.CallToolResult {
	if st.Code() == codes.DeadlineExceeded {
		noteDeadline(t.Call.Answers)
	}
	st = e.ClientStatus(t, st)
	if t.Call.Limits != nil {
		if limit, sent := t.Call.Limits.ExceededLimit(st); limit > 0 {
			what := fmt.Sprintf("the response is larger than the gateway's limit of %d bytes per message from", limit)
			if sent {
				what = fmt.Sprintf("the request is larger than the gateway's limit of %d bytes per message to", limit)
			}
			return WithOutcome(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: mcp.ContentText, Text: fmt.Sprintf(
				"%s: %s backend %s (grpc-go: %s). Repeating the same call will not help; ask for less, e.g. a smaller page or fewer fields.",
				telemetry.CodeName(codes.ResourceExhausted), what, t.Backend, st.Message())}}}, telemetry.Outcome{Code: codes.ResourceExhausted})
		}
	}
	return rpcstatus.Result(ctx, st, t.Call.Types)
}

// ClientStatus returns st as the client may see it, logging what it
// leaves out.
func (e *Env) ClientStatus(t *compiled.Tool, st *status.Status) *status.Status {
	if rpcstatus.IsTransportError(st) {
		e.Logger.Warn("tools/call: the gateway could not reach the backend",
			"tool", t.Definition.Name, "backend", t.Backend, "code", telemetry.CodeName(st.Code()), "error", st.Message())
		return status.New(st.Code(), rpcstatus.UnreachableText)
	}
	if e.ExposeDebugInfo {
		return st
	}
	kept, withheld := rpcstatus.WithoutDebugInfo(st)
	if len(withheld) > 0 && e.Logger.Enabled(context.Background(), slog.LevelDebug) {
		for _, d := range withheld {
			e.Logger.Debug("tools/call: DebugInfo withheld from the client (Options.Calls.ExposeDebugInfo shows it)",
				"tool", t.Definition.Name, "backend", t.Backend, "detail", d.String())
		}
	}
	return kept
}

// noteDeadline records that a call ended at DEADLINE_EXCEEDED on the
// tool's backend, whose ask channel its tool holds (compiled.Call.Answers;
// nil for none), so the backend's connection is asked whether it still
// answers. It never blocks the call.
func noteDeadline(ask chan<- struct{}) {
	select {
	case ask <- struct{}{}:
	default:
	}
}
