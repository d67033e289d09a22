package telemetry

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/exporters/stdout/stdouttrace"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.43.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
)

// ScopeName is the instrumentation scope of the gateway's spans.
const ScopeName = "github.com/grpc-mcp-gateway/gateway/gateway/telemetry"

// ServiceName is the default service.name of the gateway's traces;
// OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override it.
const ServiceName = "grpc-mcp-gateway"

// propagator is W3C Trace Context only: traceparent and tracestate. The
// gateway carries nothing else across (no baggage), so a caller's
// baggage cannot reach a backend through it unannounced.
var propagator propagation.TextMapPropagator = propagation.TraceContext{}

// Propagator returns the propagator the gateway extracts and injects
// with, for backends and tests that want to read what it sends.
func Propagator() propagation.TextMapPropagator { return propagator }

// TracingConfigured reports whether the environment asks for traces:
// OTEL_TRACES_EXPORTER set to something other than "none", or an OTLP
// endpoint (OTEL_EXPORTER_OTLP_ENDPOINT or
// OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), and OTEL_SDK_DISABLED not "true".
// getenv is os.Getenv outside tests.
func TracingConfigured(getenv func(string) string) bool {
	if strings.EqualFold(strings.TrimSpace(getenv("OTEL_SDK_DISABLED")), "true") {
		return false
	}
	switch exp := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER")); exp {
	case "none":
		return false
	case "":
		return getenv("OTEL_EXPORTER_OTLP_ENDPOINT") != "" || getenv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") != ""
	}
	return true
}

// SetupTracing builds the tracer provider the standard OTEL_* environment
// variables describe (exporter, OTLP endpoint, protocol and headers,
// sampler, service name and resource attributes), with service.version
// set to serviceVersion. When the environment asks for no traces (see
// [TracingConfigured]) it returns a no-op provider, which [NewTracer] and
// [GRPCDialOption] recognise, so tracing off costs nothing per call.
//
// The exporters are those OTEL_TRACES_EXPORTER names (a comma-separated
// list; default otlp): otlp, over the protocol
// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL or OTEL_EXPORTER_OTLP_PROTOCOL names
// (http/protobuf, the default, or grpc), and console (stdout). Any other
// name is an error naming it: the gateway links only these, rather than
// every exporter of every signal that OpenTelemetry's autoexport would.
//
// shutdown flushes the spans still buffered and stops the exporters; call
// it once, after the last call has ended, with a deadline.
func SetupTracing(ctx context.Context, serviceVersion string) (tp trace.TracerProvider, shutdown func(context.Context) error, err error) {
	off := func(context.Context) error { return nil }
	if !TracingConfigured(os.Getenv) {
		return noop.NewTracerProvider(), off, nil
	}
	exps, err := spanExporters(ctx, os.Getenv)
	if err != nil {
		return nil, nil, err
	}
	// Later detectors win: the environment overrides the defaults.
	res, err := resource.New(ctx,
		resource.WithAttributes(semconv.ServiceName(ServiceName), semconv.ServiceVersion(serviceVersion)),
		resource.WithTelemetrySDK(),
		resource.WithFromEnv(),
	)
	if err != nil && !errors.Is(err, resource.ErrPartialResource) {
		for _, exp := range exps {
			_ = exp.Shutdown(ctx)
		}
		return nil, nil, fmt.Errorf("telemetry: trace resource: %w", err)
	}
	opts := []sdktrace.TracerProviderOption{sdktrace.WithResource(res)}
	for _, exp := range exps {
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	sdk := sdktrace.NewTracerProvider(opts...)
	return sdk, sdk.Shutdown, nil
}

// spanExporters builds the exporters OTEL_TRACES_EXPORTER names; each
// reads its own OTEL_EXPORTER_OTLP_* settings.
func spanExporters(ctx context.Context, getenv func(string) string) ([]sdktrace.SpanExporter, error) {
	names := strings.TrimSpace(getenv("OTEL_TRACES_EXPORTER"))
	if names == "" {
		names = "otlp"
	}
	var exps []sdktrace.SpanExporter
	fail := func(err error) ([]sdktrace.SpanExporter, error) {
		for _, exp := range exps {
			_ = exp.Shutdown(ctx)
		}
		return nil, err
	}
	for name := range strings.SplitSeq(names, ",") {
		var exp sdktrace.SpanExporter
		var err error
		switch name = strings.TrimSpace(name); name {
		case "otlp":
			exp, err = otlpExporter(ctx, getenv)
		case "console":
			exp, err = stdouttrace.New()
		default:
			err = fmt.Errorf("OTEL_TRACES_EXPORTER: unsupported exporter %q: want otlp, console or none", name)
		}
		if err != nil {
			return fail(fmt.Errorf("telemetry: traces exporter: %w", err))
		}
		exps = append(exps, exp)
	}
	return exps, nil
}

// otlpExporter is the OTLP exporter over the protocol the environment
// names, http/protobuf by default as the OpenTelemetry specification says.
func otlpExporter(ctx context.Context, getenv func(string) string) (sdktrace.SpanExporter, error) {
	key := "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
	proto := strings.TrimSpace(getenv(key))
	if proto == "" {
		key = "OTEL_EXPORTER_OTLP_PROTOCOL"
		proto = strings.TrimSpace(getenv(key))
	}
	switch proto {
	case "", "http/protobuf":
		return otlptracehttp.New(ctx)
	case "grpc":
		return otlptracegrpc.New(ctx)
	}
	return nil, fmt.Errorf("%s: unsupported protocol %q: want http/protobuf or grpc", key, proto)
}

// enabled reports whether tp would record anything at all.
func enabled(tp trace.TracerProvider) bool {
	if tp == nil {
		return false
	}
	_, isNoop := tp.(noop.TracerProvider)
	return !isNoop
}

// GRPCDialOption returns the dial option that makes the gRPC client span
// of every backend call a child of the tools/call span and sends the W3C
// traceparent to the backend in the call's metadata. With tracing off (a
// nil or no-op tp) it is an empty option, so the connection carries no
// stats handler at all.
func GRPCDialOption(tp trace.TracerProvider) grpc.DialOption {
	if !enabled(tp) {
		return grpc.EmptyDialOption{}
	}
	return grpc.WithStatsHandler(otelgrpc.NewClientHandler(
		otelgrpc.WithTracerProvider(tp),
		otelgrpc.WithPropagators(propagator),
		// Metrics are Prometheus's job here; never the global meter.
		otelgrpc.WithMeterProvider(metricnoop.NewMeterProvider()),
	))
}

// Extract returns ctx carrying the caller's remote span context, read
// with the W3C Trace Context propagator from the MCP request's
// params._meta (traceparent, tracestate: the MCP convention, which works
// on every transport) or, when _meta has no valid one, from the HTTP
// request headers. With neither, ctx is returned as is and the call
// starts a new trace.
func Extract(ctx context.Context, meta json.RawMessage, header http.Header) context.Context {
	if c, ok := metaCarrierOf(meta); ok {
		if out := propagator.Extract(ctx, c); trace.SpanContextFromContext(out).IsValid() {
			return out
		}
	}
	if header != nil {
		return propagator.Extract(ctx, propagation.HeaderCarrier(header))
	}
	return ctx
}

// metaCarrier is the trace context found in params._meta, as the
// propagator reads it.
type metaCarrier struct {
	Traceparent string `json:"traceparent"`
	Tracestate  string `json:"tracestate"`
}

func metaCarrierOf(meta json.RawMessage) (*metaCarrier, bool) {
	// Most requests carry no trace context: skip the decode for them.
	if !bytes.Contains(meta, []byte(`"traceparent"`)) {
		return nil, false
	}
	var c metaCarrier
	if err := json.Unmarshal(meta, &c); err != nil || c.Traceparent == "" {
		return nil, false
	}
	return &c, true
}

func (c *metaCarrier) Get(key string) string {
	switch key {
	case "traceparent":
		return c.Traceparent
	case "tracestate":
		return c.Tracestate
	}
	return ""
}

func (c *metaCarrier) Set(string, string) {}

func (c *metaCarrier) Keys() []string { return []string{"traceparent", "tracestate"} }

// Tracer starts the gateway's spans. A nil *Tracer starts none.
type Tracer struct {
	tracer trace.Tracer
}

// NewTracer returns a tracer over tp, or nil when tp is nil or a no-op
// provider, so that a gateway without tracing skips even the trace
// context extraction.
func NewTracer(tp trace.TracerProvider) *Tracer {
	if !enabled(tp) {
		return nil
	}
	return &Tracer{tracer: tp.Tracer(ScopeName)}
}

// Tool prepares the spans of one tool, once, at discovery: the span name
// and the attributes every call of it shares. fullMethod is the gRPC
// method as grpc.Invoke takes it ("/zoo.v1.ZooService/GetAnimal"). Nil
// for a nil *Tracer.
func (t *Tracer) Tool(tool, backend, fullMethod string) *ToolTracer {
	if t == nil {
		return nil
	}
	service, method := splitMethod(fullMethod)
	return &ToolTracer{
		tracer: t.tracer,
		// The MCP semantic conventions name the span "{mcp.method.name}
		// {target}".
		name: "tools/call " + tool,
		opts: []trace.SpanStartOption{
			trace.WithSpanKind(trace.SpanKindServer),
			trace.WithAttributes(
				attribute.String("mcp.method.name", "tools/call"),
				attribute.String("mcp.tool.name", tool),
				attribute.String("gen_ai.tool.name", tool),
				attribute.String("gen_ai.operation.name", "execute_tool"),
				attribute.String("rpc.system", "grpc"),
				attribute.String("rpc.service", service),
				attribute.String("rpc.method", method),
				attribute.String("grpc_mcp_gateway.backend", backend),
			),
		},
	}
}

// splitMethod splits "/pkg.Service/Method" into its service and method.
func splitMethod(full string) (service, method string) {
	full = strings.TrimPrefix(full, "/")
	if i := strings.LastIndexByte(full, '/'); i >= 0 {
		return full[:i], full[i+1:]
	}
	return "", full
}

// ToolTracer starts the spans of one tool. A nil *ToolTracer starts none.
type ToolTracer struct {
	tracer trace.Tracer
	name   string
	opts   []trace.SpanStartOption
}

// CallInfo is the request side of one tools/call, as the span and the
// call log describe it.
type CallInfo struct {
	// RequestID is the raw JSON-RPC id.
	RequestID json.RawMessage
	// SessionID identifies the MCP session in logs and spans: its
	// mcp.LogID digest, never the Mcp-Session-Id itself (a credential);
	// empty for stateless requests.
	SessionID string
	// Transport is the MCP transport ("streamable-http", "stdio", ...).
	Transport string
	// ProtocolVersion is the MCP revision of the request.
	ProtocolVersion string
	// Meta and Header are where the caller's trace context is read from;
	// see [Extract].
	Meta   json.RawMessage
	Header http.Header
}

// StartCall starts the span of one tools/call as a child of the caller's
// trace context (see [Extract]) and returns ctx carrying it, so the gRPC
// client span (from [GRPCDialOption]) becomes its child. End it with
// [EndCall]. With a nil *ToolTracer it returns ctx and a nil span.
func (t *ToolTracer) StartCall(ctx context.Context, info *CallInfo) (context.Context, trace.Span) {
	if t == nil {
		return ctx, nil
	}
	ctx = Extract(ctx, info.Meta, info.Header)
	ctx, span := t.tracer.Start(ctx, t.name, t.opts...)
	if span.IsRecording() {
		attrs := make([]attribute.KeyValue, 0, 4)
		if len(info.RequestID) > 0 {
			attrs = append(attrs, attribute.String("jsonrpc.request.id", strings.Trim(string(info.RequestID), `"`)))
		}
		if info.SessionID != "" {
			attrs = append(attrs, attribute.String("mcp.session.id", info.SessionID))
		}
		if info.ProtocolVersion != "" {
			attrs = append(attrs, attribute.String("mcp.protocol.version", info.ProtocolVersion))
		}
		if info.Transport != "" {
			attrs = append(attrs, attribute.String("grpc_mcp_gateway.transport", info.Transport))
		}
		span.SetAttributes(attrs...)
	}
	return ctx, span
}

// Outcome is how one tools/call ended.
type Outcome struct {
	// Code is the gRPC status the call ended with: the backend's, or the
	// gateway's own when it gave up (CANCELLED, DEADLINE_EXCEEDED).
	Code codes.Code
	// Rejected is set when the arguments failed validation and the backend
	// was never called; Code is then meaningless.
	Rejected bool
	// Err is a fault of the gateway itself (say, a response it could not
	// encode), answered with a JSON-RPC internal error.
	Err error
}

// errorType is the error.type of a failed call: the code name, or what
// kept the call from the backend.
func (o Outcome) errorType() string {
	switch {
	case o.Err != nil:
		return "gateway_error"
	case o.Rejected:
		return "invalid_arguments"
	case o.Code != codes.OK:
		return codeLabel(o.Code)
	}
	return ""
}

// EndCall records the outcome on span and ends it; a nil span is a no-op.
// Any non-OK outcome marks the span as an error, since the tool did not
// do what was asked, whoever was at fault.
func EndCall(span trace.Span, o Outcome) {
	if span == nil {
		return
	}
	if span.IsRecording() {
		if !o.Rejected {
			span.SetAttributes(
				attribute.Int("rpc.grpc.status_code", int(o.Code)),
				attribute.String("rpc.response.status_code", codeLabel(o.Code)),
			)
		}
		if et := o.errorType(); et != "" {
			span.SetAttributes(attribute.String("error.type", et))
			desc := et
			if o.Err != nil {
				span.RecordError(o.Err)
				desc = o.Err.Error()
			}
			span.SetStatus(otelcodes.Error, desc)
		}
	}
	span.End()
}
