package gateway

import (
	"context"
	"errors"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// callObs is one tools/call being observed. It lives on CallTool's stack.
type callObs struct {
	start time.Time
	span  trace.Span
}

// instrument resolves the metrics and span settings of every tool of c,
// and drops the series of tools the previous catalog had and c has not.
func (g *Gateway) instrument(c *catalog) {
	if g.opts.Telemetry.Metrics == nil && g.tracer == nil {
		return
	}
	for _, t := range c.tools {
		t.Obs = compiled.Obs{
			Metrics: g.opts.Telemetry.Metrics.Tool(t.Definition.Name, t.Backend),
			Tracer:  g.tracer.Tool(t.Definition.Name, t.Backend, t.Call.Method),
		}
	}
	if old := g.catalog.Load(); old != nil {
		for _, t := range old.tools {
			if n := c.byName[t.Definition.Name]; n == nil || n.Backend != t.Backend {
				g.opts.Telemetry.Metrics.ForgetTool(t.Obs.Metrics)
			}
		}
	}
}

// startCall starts observing a call: the clock, and the span when tracing
// is on, whose context ctx then carries to the backend. With nothing to
// observe it costs one branch.
func (g *Gateway) startCall(ctx context.Context, t *compiled.Tool, req *mcp.CallToolRequest) (context.Context, callObs) {
	if !g.observing {
		return ctx, callObs{}
	}
	ob := callObs{start: time.Now()}
	if t.Obs.Tracer != nil {
		ctx, ob.span = t.Obs.Tracer.StartCall(ctx, &telemetry.CallInfo{
			RequestID:       req.RequestID,
			SessionID:       req.Session.LogID,
			Transport:       req.Session.Transport,
			ProtocolVersion: req.Session.ProtocolVersion,
			Meta:            req.Meta,
			Header:          req.Header,
		})
	}
	return ctx, ob
}

// endCall records a finished call in the metrics, its span and the call
// log. ctx is the caller's (not the call's deadline), so a call the
// client cancelled reads as CANCELLED.
func (g *Gateway) endCall(ctx context.Context, t *compiled.Tool, req *mcp.CallToolRequest, ob callObs, res **mcp.CallToolResult, err *error) {
	if !g.observing {
		return
	}
	o := callOutcome(ctx, *res, *err)
	end := time.Now()
	d := end.Sub(ob.start)
	var sc trace.SpanContext
	if ob.span != nil {
		sc = ob.span.SpanContext()
	}
	if o.Rejected {
		t.Obs.Metrics.Rejected()
	} else {
		t.Obs.Metrics.Observe(o.Code, d, sc)
	}
	telemetry.EndCall(ob.span, o)
	rec := telemetry.CallRecord{
		Tool:     t.Definition.Name,
		Backend:  t.Backend,
		Outcome:  o,
		Duration: d,
		End:      end,
		CallInfo: telemetry.CallInfo{
			RequestID: req.RequestID,
			SessionID: req.Session.LogID,
			Transport: req.Session.Transport,
		},
		Span: sc,
	}
	if g.opts.Telemetry.LogArguments {
		rec.Arguments = req.Arguments
	}
	telemetry.LogCall(ctx, g.opts.Logger, &rec)
}

// The outcome of a call is decided where the call's fate is (a gRPC
// status in rpcstatus.Result, arguments refused in call.Env.InputError, a refusal in
// authorize) and returned with what that place returns: on the result
// (mcp.CallToolResult.Outcome, never sent) or on the error
// (outcomeError). Nothing reads it back out of a result's text.

// outcomeError is an error that ends a call, with the call's outcome.
// The MCP layer sees the error it wraps.
type outcomeError struct {
	outcome telemetry.Outcome
	err     error
}

func (e *outcomeError) Error() string { return e.err.Error() }
func (e *outcomeError) Unwrap() error { return e.err }

// callOutcome is how a call ended: the outcome its result or error
// carries, else what CallTool's error says, else OK for a result that is
// not an error. An error result without an outcome is UNKNOWN, which
// TestEveryErrorResultRecordsItsOutcome guards against.
func callOutcome(ctx context.Context, res *mcp.CallToolResult, err error) telemetry.Outcome {
	if err != nil {
		var oe *outcomeError
		var e *mcp.Error
		switch {
		case errors.As(err, &oe):
			return oe.outcome
		case errors.As(err, &e) && e.Code == mcp.CodeInvalidParams:
			return telemetry.Outcome{Rejected: true}
		case ctx.Err() != nil:
			return telemetry.Outcome{Code: status.FromContextError(ctx.Err()).Code()}
		}
		return telemetry.Outcome{Code: codes.Internal, Err: err}
	}
	if res == nil {
		return telemetry.Outcome{Code: codes.OK}
	}
	if o, ok := res.Outcome.(telemetry.Outcome); ok {
		return o
	}
	if !res.IsError {
		return telemetry.Outcome{Code: codes.OK}
	}
	return telemetry.Outcome{Code: codes.Unknown}
}
