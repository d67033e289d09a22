package telemetry

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
)

// MaxLoggedArguments caps the argument bytes one debug line carries, so a
// large upload cannot turn into a multi-megabyte log line.
const MaxLoggedArguments = 16 << 10

// CallRecord is one finished tools/call as the call log writes it.
type CallRecord struct {
	Tool, Backend string
	Outcome       Outcome
	Duration      time.Duration
	// End is when the call ended, the line's time; zero means now. The
	// caller that measured Duration has it, and saves the clock a read.
	End time.Time
	// CallInfo is the request side; Meta and Header are not logged.
	CallInfo CallInfo
	// Span is the call's span context; a valid one adds trace_id and
	// span_id, which link the line to its trace.
	Span trace.SpanContext
	// Arguments are logged, on a separate debug line, only when non-nil:
	// the caller sets them only when the operator opted in
	// (--log-arguments), since arguments may hold personal data.
	Arguments json.RawMessage
}

// level is the call line's level: Info for calls that worked or failed
// for the caller's reasons, Warn for those that point at the backend or
// the network, Error for the gateway's own faults, so an operator can
// alert on Warn and above.
func (r *CallRecord) level() slog.Level {
	switch {
	case r.Outcome.Err != nil:
		return slog.LevelError
	case r.Outcome.Rejected:
		return slog.LevelInfo
	}
	switch r.Outcome.Code {
	case codes.Unknown, codes.DeadlineExceeded, codes.Unimplemented, codes.Internal, codes.Unavailable, codes.DataLoss:
		return slog.LevelWarn
	}
	return slog.LevelInfo
}

// LogCall writes the one line a tools/call gets: "tools/call" with tool,
// backend, code (or "rejected" for invalid arguments), duration_ms,
// request id, session, transport and, when traced, trace_id; plus err for
// the gateway's own faults. It never writes argument values except on the
// separate debug line described at [CallRecord.Arguments]. Nothing is
// built when the logger would drop the line. A logger made by [NewLogger]
// gets the same line formatted without log/slog's per-attribute work.
func LogCall(ctx context.Context, logger *slog.Logger, r *CallRecord) {
	if logger == nil {
		return
	}
	if r.Arguments != nil && logger.Enabled(ctx, slog.LevelDebug) {
		args := r.Arguments
		attrs := []slog.Attr{slog.String("tool", r.Tool), slog.String("backend", r.Backend)}
		attrs = append(attrs, slog.String("id", string(r.CallInfo.RequestID)))
		if len(args) > MaxLoggedArguments {
			attrs = append(attrs, slog.Int("arguments_bytes", len(args)), slog.Bool("arguments_truncated", true))
			args = args[:MaxLoggedArguments]
		}
		attrs = append(attrs, slog.String("arguments", string(args)))
		logger.LogAttrs(ctx, slog.LevelDebug, "tools/call arguments", attrs...)
	}
	level := r.level()
	if !logger.Enabled(ctx, level) {
		return
	}
	code := "rejected"
	if !r.Outcome.Rejected {
		code = codeLabel(r.Outcome.Code)
	}
	if h, ok := logger.Handler().(*logHandler); ok {
		h.writeCall(r, level, code)
		return
	}
	attrs := make([]slog.Attr, 0, 11)
	attrs = append(attrs,
		slog.String("tool", r.Tool),
		slog.String("backend", r.Backend),
		slog.String("code", code),
		// Milliseconds as a number: what log queries filter and sum on.
		slog.Float64("duration_ms", float64(r.Duration.Microseconds())/1000),
	)
	attrs = append(attrs, slog.String("id", string(r.CallInfo.RequestID)))
	if r.CallInfo.SessionID != "" {
		attrs = append(attrs, slog.String("session", r.CallInfo.SessionID))
	}
	if r.CallInfo.Transport != "" {
		attrs = append(attrs, slog.String("transport", r.CallInfo.Transport))
	}
	if r.Span.IsValid() {
		attrs = append(attrs, slog.String("trace_id", r.Span.TraceID().String()), slog.String("span_id", r.Span.SpanID().String()))
	}
	if r.Outcome.Err != nil {
		attrs = append(attrs, slog.String("err", r.Outcome.Err.Error()))
	}
	logger.LogAttrs(ctx, level, "tools/call", attrs...)
}
