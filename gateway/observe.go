package gateway

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// toolObs is what observing one tool needs, resolved at discovery so the
// call path does no label lookups.
type toolObs struct {
	metrics *telemetry.ToolMetrics
	tracer  *telemetry.ToolTracer
}

// callObs is one tools/call being observed. It lives on CallTool's stack.
type callObs struct {
	start time.Time
	span  trace.Span
}

// instrument resolves the metrics and span settings of every tool of c,
// and drops the series of tools the previous catalog had and c has not.
func (g *Gateway) instrument(c *catalog) {
	if g.opts.Metrics == nil && g.tracer == nil {
		return
	}
	for _, t := range c.tools {
		t.obs = toolObs{
			metrics: g.opts.Metrics.Tool(t.def.Name, t.backend),
			tracer:  g.tracer.Tool(t.def.Name, t.backend, t.method),
		}
	}
	if old := g.catalog.Load(); old != nil {
		for _, t := range old.tools {
			if n := c.byName[t.def.Name]; n == nil || n.backend != t.backend {
				g.opts.Metrics.ForgetTool(t.def.Name, t.backend)
			}
		}
	}
}

// startCall starts observing a call: the clock, and the span when tracing
// is on, whose context ctx then carries to the backend. With nothing to
// observe it costs one branch.
func (g *Gateway) startCall(ctx context.Context, t *tool, req *mcp.CallToolRequest) (context.Context, callObs) {
	if !g.observing {
		return ctx, callObs{}
	}
	ob := callObs{start: time.Now()}
	if t.obs.tracer != nil {
		ctx, ob.span = t.obs.tracer.StartCall(ctx, &telemetry.CallInfo{
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
func (g *Gateway) endCall(ctx context.Context, t *tool, req *mcp.CallToolRequest, ob callObs, res **mcp.CallToolResult, err *error) {
	if !g.observing {
		return
	}
	o := callOutcome(ctx, *res, *err)
	d := time.Since(ob.start)
	var sc trace.SpanContext
	if ob.span != nil {
		sc = ob.span.SpanContext()
	}
	if o.Rejected {
		t.obs.metrics.Rejected()
	} else {
		t.obs.metrics.Observe(o.Code, d, sc)
	}
	telemetry.EndCall(ob.span, o)
	rec := telemetry.CallRecord{
		Tool:     t.def.Name,
		Backend:  t.backend,
		Outcome:  o,
		Duration: d,
		CallInfo: telemetry.CallInfo{
			RequestID: req.RequestID,
			SessionID: req.Session.LogID,
			Transport: req.Session.Transport,
		},
		Span: sc,
	}
	if g.opts.LogArguments {
		rec.Arguments = req.Arguments
	}
	telemetry.LogCall(ctx, g.opts.Logger, &rec)
}

// callOutcome classifies what CallTool returned. A tool execution error's
// text starts with the code name (statusResult) or with inputErrorPrefix
// (inputError): those two are the only producers of isError results, and
// observe_test.go pins both, so reading the code back here keeps the
// unary and streaming paths free of bookkeeping.
func callOutcome(ctx context.Context, res *mcp.CallToolResult, err error) telemetry.Outcome {
	if err != nil {
		var e *mcp.Error
		var rf *mcp.Refusal
		switch {
		case errors.As(err, &rf):
			// Refused by authorization before reaching the backend.
			if rf.Status == http.StatusUnauthorized {
				return telemetry.Outcome{Code: codes.Unauthenticated}
			}
			return telemetry.Outcome{Code: codes.PermissionDenied}
		case errors.As(err, &e) && e.Code == mcp.CodeInvalidParams:
			return telemetry.Outcome{Rejected: true}
		case ctx.Err() != nil:
			return telemetry.Outcome{Code: status.FromContextError(ctx.Err()).Code()}
		}
		return telemetry.Outcome{Code: codes.Internal, Err: err}
	}
	if res == nil || !res.IsError {
		return telemetry.Outcome{Code: codes.OK}
	}
	if len(res.Content) == 0 {
		return telemetry.Outcome{Code: codes.Unknown}
	}
	text := res.Content[0].Text
	if strings.HasPrefix(text, inputErrorPrefix) {
		return telemetry.Outcome{Rejected: true}
	}
	name, _, ok := strings.Cut(text, ":")
	if ok {
		if c, found := codeByName[name]; found {
			return telemetry.Outcome{Code: c}
		}
	}
	return telemetry.Outcome{Code: codes.Unknown}
}

// codeByName inverts CodeName.
var codeByName = func() map[string]codes.Code {
	m := make(map[string]codes.Code, len(codeInfo))
	for c := range codeInfo {
		m[CodeName(codes.Code(c))] = codes.Code(c)
	}
	return m
}()
