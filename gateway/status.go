package gateway

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

// callFailed is the result of every backend call that failed, on every
// call path (unary, client and server streams, the start of a
// long-running operation): the status as the client may see it
// (clientStatus), as a tool error (rpcstatus.Result); or, for a message
// grpc-go refused for one of the backend connection's size limits
// (backendconn.Conn.ExceededLimit), which limit, and that repeating the
// call cannot help.
func (g *Gateway) callFailed(ctx context.Context, t *compiled.Tool, st *status.Status) *mcp.CallToolResult {
	if st.Code() == codes.DeadlineExceeded {
		noteDeadline(t.Call.Answers)
	}
	st = g.clientStatus(t, st)
	if t.Call.Limits != nil {
		if limit, sent := t.Call.Limits.ExceededLimit(st); limit > 0 {
			what := fmt.Sprintf("the response is larger than the gateway's limit of %d bytes per message from", limit)
			if sent {
				what = fmt.Sprintf("the request is larger than the gateway's limit of %d bytes per message to", limit)
			}
			return withOutcome(&mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: mcp.ContentText, Text: fmt.Sprintf(
				"%s: %s backend %s (grpc-go: %s). Repeating the same call will not help; ask for less, e.g. a smaller page or fewer fields.",
				telemetry.CodeName(codes.ResourceExhausted), what, t.Backend, st.Message())}}}, telemetry.Outcome{Code: codes.ResourceExhausted})
		}
	}
	return rpcstatus.Result(ctx, st, t.Call.Types)
}

// clientStatus returns st as the client may see it, logging what it
// leaves out.
func (g *Gateway) clientStatus(t *compiled.Tool, st *status.Status) *status.Status {
	if rpcstatus.IsTransportError(st) {
		g.opts.Logger.Warn("tools/call: the gateway could not reach the backend",
			"tool", t.Definition.Name, "backend", t.Backend, "code", telemetry.CodeName(st.Code()), "error", st.Message())
		return status.New(st.Code(), rpcstatus.UnreachableText)
	}
	if g.opts.Calls.ExposeDebugInfo {
		return st
	}
	kept, withheld := rpcstatus.WithoutDebugInfo(st)
	if len(withheld) > 0 && g.opts.Logger.Enabled(context.Background(), slog.LevelDebug) {
		for _, d := range withheld {
			g.opts.Logger.Debug("tools/call: DebugInfo withheld from the client (Options.Calls.ExposeDebugInfo shows it)",
				"tool", t.Definition.Name, "backend", t.Backend, "detail", d.String())
		}
	}
	return kept
}
