package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/reflection"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// world is a zoo backend (with an otelgrpc server handler when tp is set)
// behind a real gateway over loopback HTTP.
type world struct {
	url     string
	handler http.Handler
	log     *testkit.SyncBuffer
}

func startWorld(t *testing.T, m *telemetry.Metrics, tp trace.TracerProvider) *world {
	t.Helper()
	return startWorldHTTP(t, m, tp, nil)
}

// startWorldHTTP is startWorld with the gateway's Streamable HTTP options.
func startWorldHTTP(t *testing.T, m *telemetry.Metrics, tp trace.TracerProvider, httpOpts *mcp.StreamableHTTPOptions) *world {
	t.Helper()
	var sopts []grpc.ServerOption
	if tp != nil {
		sopts = append(sopts, grpc.StatsHandler(otelgrpc.NewServerHandler(
			otelgrpc.WithTracerProvider(tp), otelgrpc.WithPropagators(telemetry.Propagator()))))
	}
	gs := grpc.NewServer(sopts...)
	zoo.Register(gs, zoo.NewServer())
	reflection.Register(gs)
	addr := testkit.ServeLoopback(t, gs)
	conn, err := backendconn.Dial(addr, backendconn.Options{}, telemetry.GRPCDialOption(tp))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	logs := &testkit.SyncBuffer{}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	g, err := gateway.New(ctx, []gateway.Backend{{Name: "zoo", Address: addr, Conn: conn}}, &gateway.Options{
		Logger: slog.New(slog.NewJSONHandler(logs, nil)),
		Telemetry: gateway.TelemetryOptions{
			Metrics:        m,
			TracerProvider: tp,
		},
		Transports: gateway.TransportOptions{
			HTTP: httpOpts,
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	h := g.Handler()
	srv := httptest.NewServer(h)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = g.Shutdown(ctx)
		srv.Close()
	})
	return &world{url: srv.URL, handler: h, log: logs}
}

// call posts one stateless (2026-07-28) tools/call, as the benchmark's
// client does, with meta merged into params._meta and header added to
// the HTTP request; it returns the JSON-RPC result.
func (w *world) call(t *testing.T, id int, tool string, args string, meta map[string]string, header http.Header) map[string]any {
	t.Helper()
	m := map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}
	for k, v := range meta {
		m[k] = v
	}
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": id, "method": "tools/call",
		"params": map[string]any{"name": tool, "arguments": json.RawMessage(args), "_meta": m},
	})
	raw := &testkit.Client{URL: w.url + "/mcp", Version: "2026-07-28", Header: header}
	resp, err := raw.Do(t.Context(), http.MethodPost, body, testkit.MethodHeaders("tools/call", tool))
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Result map[string]any
		Error  map[string]any
	}
	if err := json.Unmarshal([]byte(resp.Body), &out); err != nil || out.Error != nil {
		t.Fatalf("tools/call %s: %d %s (%v)", tool, resp.Status, resp.Body, err)
	}
	return out.Result
}

// TestGatewayMetrics: calls through a real gateway show up in its own
// /metrics with the right labels.
func TestGatewayMetrics(t *testing.T) {
	t.Parallel()
	w := startWorld(t, telemetry.NewMetrics(), nil)
	w.call(t, 1, "ZooService_GetAnimal", `{"id":"leo"}`, nil, nil)
	w.call(t, 2, "ZooService_GetAnimal", `{"id":"leo"}`, nil, nil)
	if res := w.call(t, 3, "ZooService_GetAnimal", `{"id":"nobody"}`, nil, nil); res["isError"] != true {
		t.Fatalf("unknown animal: want an error result, got %v", res)
	}
	if res := w.call(t, 4, "ZooService_GetAnimal", `{"id":7}`, nil, nil); res["isError"] != true {
		t.Fatalf("id as a number: want an invalid-arguments result, got %v", res)
	}

	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", rec.Code)
	}
	body := rec.Body.String()
	for _, line := range []string{
		`grpc_mcp_gateway_tool_calls_total{backend="zoo",grpc_code="OK",tool="ZooService_GetAnimal"} 2`,
		`grpc_mcp_gateway_tool_calls_total{backend="zoo",grpc_code="NOT_FOUND",tool="ZooService_GetAnimal"} 1`,
		`grpc_mcp_gateway_tool_input_rejections_total{backend="zoo",tool="ZooService_GetAnimal"} 1`,
		`grpc_mcp_gateway_tool_call_duration_seconds_count{backend="zoo",tool="ZooService_GetAnimal"} 3`,
		// Every discovered tool is exported from the start, at zero.
		`grpc_mcp_gateway_tool_calls_total{backend="zoo",grpc_code="OK",tool="ZooService_ListAnimals"} 0`,
		`grpc_mcp_gateway_discovery_refreshes_total{backend="zoo",outcome="success"} 1`,
		`grpc_mcp_gateway_backend_connection_state{backend="zoo",state="READY"} 1`,
	} {
		if !strings.Contains(body, line) {
			t.Errorf("/metrics lacks %s\n%s", line, grepLines(body, "grpc_mcp_gateway_"))
		}
	}

	// One call line per call, with the request id and no argument values.
	var lines []map[string]any
	for _, l := range decodeLines(t, strings.NewReader(w.log.String())) {
		if l["msg"] == "tools/call" {
			lines = append(lines, l)
		}
	}
	if len(lines) != 4 {
		t.Fatalf("%d tools/call log lines, want 4:\n%s", len(lines), w.log.String())
	}
	for i, want := range []string{"OK", "OK", "NOT_FOUND", "rejected"} {
		if lines[i]["code"] != want || lines[i]["id"] != string(rune('1'+i)) || lines[i]["backend"] != "zoo" {
			t.Errorf("log line %d: %v, want code %s id %d", i, lines[i], want, i+1)
		}
	}
	if strings.Contains(w.log.String(), "nobody") {
		t.Error("argument values reached the log without --log-arguments")
	}
}

// TestGatewayTrace: a caller's traceparent in _meta becomes the parent of
// the tools/call span, whose child is the gRPC client span, whose child
// is the backend's server span: one trace from the MCP client to the
// backend.
func TestGatewayTrace(t *testing.T) {
	t.Parallel()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	w := startWorld(t, telemetry.NewMetrics(), tp)

	const (
		callerTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
		callerSpan  = "00f067aa0ba902b7"
	)
	// The header names another trace: _meta must win.
	header := http.Header{"Traceparent": {"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}
	w.call(t, 7, "ZooService_GetAnimal", `{"id":"leo"}`,
		map[string]string{"traceparent": "00-" + callerTrace + "-" + callerSpan + "-01", "tracestate": "caller=1"}, header)

	// Discovery's reflection calls are traced too, each in a trace of its
	// own; the call's trace is the caller's. The backend's server span
	// ends after it has sent the status, which may be after the gateway
	// has answered: wait until it is recorded.
	inCallerTrace := func() []sdktrace.ReadOnlySpan {
		var spans []sdktrace.ReadOnlySpan
		for _, s := range sr.Ended() {
			if s.SpanContext().TraceID().String() == callerTrace {
				spans = append(spans, s)
			}
		}
		return spans
	}
	testkit.WaitFor(t, "the caller's trace to hold three ended spans", func() bool { return len(inCallerTrace()) >= 3 })
	inTrace := inCallerTrace()
	if len(inTrace) != 3 {
		t.Fatalf("caller's trace has %v, want tools/call, the gRPC client and the gRPC server span; all spans: %v",
			spanNames(inTrace), spanNames(sr.Ended()))
	}
	var call, client, server sdktrace.ReadOnlySpan
	for _, s := range inTrace {
		switch {
		case s.InstrumentationScope().Name == telemetry.ScopeName:
			call = s
		case s.SpanKind() == trace.SpanKindClient:
			client = s
		case s.SpanKind() == trace.SpanKindServer:
			server = s
		}
	}
	if call == nil || client == nil || server == nil {
		t.Fatalf("missing spans: %v", spanNames(inTrace))
	}
	if call.SpanKind() != trace.SpanKindServer {
		t.Errorf("tools/call span kind %v, want server", call.SpanKind())
	}
	if call.Name() != "tools/call ZooService_GetAnimal" {
		t.Errorf("tools/call span named %q", call.Name())
	}
	if got := call.Parent().SpanID().String(); got != callerSpan || !call.Parent().IsRemote() {
		t.Errorf("tools/call parent %s (remote %v), want the caller's %s", got, call.Parent().IsRemote(), callerSpan)
	}
	if got := call.SpanContext().TraceState().String(); got != "caller=1" {
		t.Errorf("tracestate %q, want the caller's", got)
	}
	if client.Parent().SpanID() != call.SpanContext().SpanID() {
		t.Errorf("gRPC client span %q is not a child of tools/call", client.Name())
	}
	if server.Parent().SpanID() != client.SpanContext().SpanID() {
		t.Errorf("backend span %q is not a child of the gRPC client span (traceparent not sent)", server.Name())
	}
	if client.Name() != "zoo.v1.ZooService/GetAnimal" {
		t.Errorf("client span named %q", client.Name())
	}
	want := map[attribute.Key]attribute.Value{
		"rpc.system":               attribute.StringValue("grpc"),
		"rpc.service":              attribute.StringValue("zoo.v1.ZooService"),
		"rpc.method":               attribute.StringValue("GetAnimal"),
		"mcp.method.name":          attribute.StringValue("tools/call"),
		"mcp.tool.name":            attribute.StringValue("ZooService_GetAnimal"),
		"gen_ai.tool.name":         attribute.StringValue("ZooService_GetAnimal"),
		"rpc.grpc.status_code":     attribute.Int64Value(0),
		"rpc.response.status_code": attribute.StringValue("OK"),
		"jsonrpc.request.id":       attribute.StringValue("7"),
		"grpc_mcp_gateway.backend": attribute.StringValue("zoo"),
	}
	got := map[attribute.Key]attribute.Value{}
	for _, kv := range call.Attributes() {
		got[kv.Key] = kv.Value
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("tools/call %s = %v, want %v", k, got[k].String(), v.String())
		}
	}
	if call.Status().Code == otelcodes.Error {
		t.Errorf("OK call has status %v", call.Status())
	}

	// The call log names the trace, so logs lead to traces.
	if !strings.Contains(w.log.String(), `"trace_id":"`+callerTrace+`"`) {
		t.Errorf("call log lacks the trace id:\n%s", w.log.String())
	}

	// Without _meta, the HTTP headers carry the trace context.
	sr2 := len(sr.Ended())
	w.call(t, 8, "ZooService_GetAnimal", `{"id":"nobody"}`, nil, header)
	var failed sdktrace.ReadOnlySpan
	for _, s := range sr.Ended()[sr2:] {
		if s.InstrumentationScope().Name == telemetry.ScopeName {
			failed = s
		}
	}
	if failed == nil || failed.SpanContext().TraceID().String() != "0af7651916cd43dd8448eb211c80319c" {
		t.Fatalf("header traceparent not used: %v", spanNames(sr.Ended()[sr2:]))
	}
	if failed.Status().Code != otelcodes.Error {
		t.Errorf("NOT_FOUND call has status %v, want Error", failed.Status())
	}
	for _, kv := range failed.Attributes() {
		if kv.Key == "rpc.grpc.status_code" && kv.Value.AsInt64() != int64(codes.NotFound) {
			t.Errorf("rpc.grpc.status_code = %d, want %d", kv.Value.AsInt64(), codes.NotFound)
		}
	}
}

func spanNames(spans []sdktrace.ReadOnlySpan) []string {
	var out []string
	for _, s := range spans {
		out = append(out, s.Name()+" ("+s.SpanKind().String()+")")
	}
	return out
}

// sessionsGauge is grpc_mcp_gateway_sessions for Streamable HTTP, as
// /metrics shows it ("absent" when it is not there).
func (w *world) sessionsGauge() string {
	rec := httptest.NewRecorder()
	w.handler.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for _, l := range strings.Split(rec.Body.String(), "\n") {
		if v, ok := strings.CutPrefix(l, `grpc_mcp_gateway_sessions{transport="streamable-http"}`); ok {
			return strings.TrimSpace(v)
		}
	}
	return "absent"
}

// post sends one JSON-RPC message at 2025-11-25 on session sid ("" for
// none) and returns the response's status and session id.
func (w *world) post(t *testing.T, sid, body string) (int, string) {
	t.Helper()
	resp, err := w.session(sid).Post(t.Context(), []byte(body))
	if err != nil {
		t.Fatal(err)
	}
	return resp.Status, resp.Header.Get("Mcp-Session-Id")
}

// session is the raw client of session sid at 2025-11-25 (none for "").
func (w *world) session(sid string) *testkit.Client {
	c := &testkit.Client{URL: w.url + "/mcp", SessionID: sid}
	if sid != "" {
		c.Version = "2025-11-25"
	}
	return c
}

const initialize = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"g","version":"1"}}}`

// TestGatewaySessionsGauge: a Streamable HTTP session held by the gateway
// counts in grpc_mcp_gateway_sessions while it lives, and not after DELETE.
func TestGatewaySessionsGauge(t *testing.T) {
	t.Parallel()
	w := startWorld(t, telemetry.NewMetrics(), nil)
	code, sid := w.post(t, "", initialize)
	if sid == "" {
		t.Fatalf("initialize: no session id (status %d)", code)
	}
	if got := w.sessionsGauge(); got != "1" {
		t.Errorf("sessions gauge with one session: %s, want 1", got)
	}
	if _, err := w.session(sid).Do(t.Context(), http.MethodDelete, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := w.sessionsGauge(); got != "0" {
		t.Errorf("sessions gauge after DELETE: %s, want 0", got)
	}
	// A stateless (2026-07-28) request holds no session.
	w.call(t, 2, "ZooService_GetAnimal", `{"id":"leo"}`, nil, nil)
	if got := w.sessionsGauge(); got != "0" {
		t.Errorf("sessions gauge after a stateless call: %s, want 0", got)
	}
}

// TestGatewaySessionsGaugeScaleOut: in scale-out mode a session is a
// signed token the gateway does not hold, so sessions in use are never
// counted: the gauge has no value at all (README's metrics table says
// tokens hold none).
func TestGatewaySessionsGaugeScaleOut(t *testing.T) {
	t.Parallel()
	w := startWorldHTTP(t, telemetry.NewMetrics(), nil, &mcp.StreamableHTTPOptions{SessionSecret: []byte(strings.Repeat("s", 32))})
	for i := range 3 {
		code, sid := w.post(t, "", initialize)
		if code != http.StatusOK || sid == "" {
			t.Fatalf("initialize: status %d, session id %q", code, sid)
		}
		if code, _ := w.post(t, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`); code != http.StatusAccepted {
			t.Fatalf("initialized on the token: %d", code)
		}
		if code, _ := w.post(t, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i+2)); code != http.StatusOK {
			t.Fatalf("tools/list on the token: %d", code)
		}
	}
	// Absent: the gauge has never had a session to count.
	if got := w.sessionsGauge(); got != "absent" {
		t.Errorf("sessions gauge with three scale-out sessions in use: %s, want none", got)
	}
}

// TestGatewaySessionDigest: a session id is a credential. The call log
// line and the tools/call span name the session by mcp.LogID (16 hex
// digits of its SHA-256), and the id itself appears in neither.
func TestGatewaySessionDigest(t *testing.T) {
	t.Parallel()
	sr := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(sr))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	w := startWorld(t, nil, tp)
	_, sid := w.post(t, "", initialize)
	if sid == "" {
		t.Fatal("initialize: no session id")
	}
	w.post(t, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	if code, _ := w.post(t, sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"leo"}}}`); code != 200 {
		t.Fatalf("tools/call: %d", code)
	}
	digest := mcp.LogID(sid)
	if len(digest) != 16 {
		t.Fatalf("LogID %q: want 16 hex digits", digest)
	}
	var line map[string]any
	for _, l := range decodeLines(t, strings.NewReader(w.log.String())) {
		if l["msg"] == "tools/call" {
			line = l
		}
	}
	if line == nil || line["session"] != digest || strings.Contains(w.log.String(), sid) {
		t.Errorf("call log: session %v, want %s and the id nowhere in the log:\n%s", line["session"], digest, w.log.String())
	}
	var span sdktrace.ReadOnlySpan
	testkit.WaitFor(t, "the tools/call span", func() bool {
		for _, sp := range sr.Ended() {
			if sp.Name() == "tools/call ZooService_GetAnimal" {
				span = sp
			}
		}
		return span != nil
	})
	sawDigest := false
	for _, kv := range span.Attributes() {
		if kv.Key == "mcp.session.id" && kv.Value.AsString() == digest {
			sawDigest = true
		}
		if strings.Contains(kv.Value.String(), sid) {
			t.Errorf("span attribute %s carries the session id", kv.Key)
		}
	}
	if !sawDigest {
		t.Errorf("span attributes %v: want mcp.session.id %s", span.Attributes(), digest)
	}
}
