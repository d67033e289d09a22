package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"

	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// scrape GETs the metrics handler and returns the text exposition.
func scrape(t *testing.T, h http.Handler) string {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d %s", rec.Code, rec.Body)
	}
	return rec.Body.String()
}

func TestMetricsSeries(t *testing.T) {
	t.Parallel()
	m := telemetry.NewMetrics()
	get := m.Tool("ZooService_GetAnimal", "zoo")
	list := m.Tool("ZooService_ListAnimals", "zoo") // discovered, never called

	get.Observe(codes.OK, 3*time.Millisecond, trace.SpanContext{})
	get.Observe(codes.OK, 40*time.Millisecond, trace.SpanContext{})
	get.Observe(codes.NotFound, time.Millisecond, trace.SpanContext{})
	get.Observe(codes.Code(42), time.Millisecond, trace.SpanContext{}) // folded into UNKNOWN
	get.Rejected()
	m.SessionOpened("streamable-http")
	m.SessionOpened("streamable-http")
	m.SessionClosed("streamable-http")
	m.SessionOpened("stdio")
	m.SlowClientDropped("websocket")
	m.SlowClientDropped("websocket")
	m.DiscoveryRefreshed("zoo", nil)
	m.DiscoveryRefreshed("zoo", errors.New("unreachable"))
	m.SetBackendState("zoo", connectivity.Ready)
	m.SetBackendUnanswered("zoo", true)
	m.SetBackendUnanswered("shop", true)
	m.SetBackendUnanswered("shop", false)

	want := `
# HELP grpc_mcp_gateway_tool_calls_total tools/call requests that reached the backend, by tool, backend and the gRPC status code that ended them.
# TYPE grpc_mcp_gateway_tool_calls_total counter
grpc_mcp_gateway_tool_calls_total{backend="zoo",grpc_code="NOT_FOUND",tool="ZooService_GetAnimal"} 1
grpc_mcp_gateway_tool_calls_total{backend="zoo",grpc_code="OK",tool="ZooService_GetAnimal"} 2
grpc_mcp_gateway_tool_calls_total{backend="zoo",grpc_code="OK",tool="ZooService_ListAnimals"} 0
grpc_mcp_gateway_tool_calls_total{backend="zoo",grpc_code="UNKNOWN",tool="ZooService_GetAnimal"} 1
# HELP grpc_mcp_gateway_tool_input_rejections_total tools/call requests whose arguments failed validation and never reached the backend.
# TYPE grpc_mcp_gateway_tool_input_rejections_total counter
grpc_mcp_gateway_tool_input_rejections_total{backend="zoo",tool="ZooService_GetAnimal"} 1
# HELP grpc_mcp_gateway_sessions MCP sessions open now, by transport.
# TYPE grpc_mcp_gateway_sessions gauge
grpc_mcp_gateway_sessions{transport="stdio"} 1
grpc_mcp_gateway_sessions{transport="streamable-http"} 1
# HELP grpc_mcp_gateway_slow_clients_dropped_total Clients dropped because a write to them did not finish within the write timeout (they stopped reading), by transport: a WebSocket or legacy SSE session ends, a Streamable HTTP answer or stream is cut.
# TYPE grpc_mcp_gateway_slow_clients_dropped_total counter
grpc_mcp_gateway_slow_clients_dropped_total{transport="websocket"} 2
# HELP grpc_mcp_gateway_discovery_refreshes_total Discoveries of a backend's services (at start and on every refresh), by outcome.
# TYPE grpc_mcp_gateway_discovery_refreshes_total counter
grpc_mcp_gateway_discovery_refreshes_total{backend="zoo",outcome="failure"} 1
grpc_mcp_gateway_discovery_refreshes_total{backend="zoo",outcome="success"} 1
# HELP grpc_mcp_gateway_backend_connection_state 1 for the backend connection's current gRPC connectivity state, 0 for the others.
# TYPE grpc_mcp_gateway_backend_connection_state gauge
grpc_mcp_gateway_backend_connection_state{backend="zoo",state="CONNECTING"} 0
grpc_mcp_gateway_backend_connection_state{backend="zoo",state="IDLE"} 0
grpc_mcp_gateway_backend_connection_state{backend="zoo",state="READY"} 1
grpc_mcp_gateway_backend_connection_state{backend="zoo",state="SHUTDOWN"} 0
grpc_mcp_gateway_backend_connection_state{backend="zoo",state="TRANSIENT_FAILURE"} 0
# HELP grpc_mcp_gateway_backend_unanswered 1 while the backend's connection is open but answered no grpc.health.v1 Check after a call to it timed out (a half-open connection or a stalled backend: /readyz reports it unanswered and not ready, though its connection state may read READY), else 0.
# TYPE grpc_mcp_gateway_backend_unanswered gauge
grpc_mcp_gateway_backend_unanswered{backend="shop"} 0
grpc_mcp_gateway_backend_unanswered{backend="zoo"} 1
`
	names := []string{
		"grpc_mcp_gateway_tool_calls_total", "grpc_mcp_gateway_tool_input_rejections_total",
		"grpc_mcp_gateway_sessions", "grpc_mcp_gateway_slow_clients_dropped_total", "grpc_mcp_gateway_discovery_refreshes_total",
		"grpc_mcp_gateway_backend_connection_state", "grpc_mcp_gateway_backend_unanswered",
	}
	if err := testutil.GatherAndCompare(m.Registry(), strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}

	// The histogram, read from the scrape as an operator's Prometheus would.
	body := scrape(t, m.Handler())
	for _, line := range []string{
		`grpc_mcp_gateway_tool_call_duration_seconds_bucket{backend="zoo",tool="ZooService_GetAnimal",le="0.001"} 2`,
		`grpc_mcp_gateway_tool_call_duration_seconds_bucket{backend="zoo",tool="ZooService_GetAnimal",le="0.005"} 3`,
		`grpc_mcp_gateway_tool_call_duration_seconds_bucket{backend="zoo",tool="ZooService_GetAnimal",le="0.05"} 4`,
		`grpc_mcp_gateway_tool_call_duration_seconds_bucket{backend="zoo",tool="ZooService_GetAnimal",le="60"} 4`,
		`grpc_mcp_gateway_tool_call_duration_seconds_count{backend="zoo",tool="ZooService_GetAnimal"} 4`,
		"go_goroutines ",
	} {
		if !strings.Contains(body, line) {
			t.Errorf("scrape lacks %q", line)
		}
	}
	// A tool never called exports its OK count only: its histogram is
	// seventeen series, which a catalog of thousands of tools cannot
	// afford for each.
	if strings.Contains(body, `duration_seconds_count{backend="zoo",tool="ZooService_ListAnimals"}`) {
		t.Error("a tool never called exports a latency histogram")
	}
	// process_* exists only where procfs does; check it there.
	if _, err := http.Dir("/proc/self").Open("stat"); err == nil && !strings.Contains(body, "process_cpu_seconds_total") {
		t.Error("scrape lacks the process collector")
	}

	m.ForgetTool(get)
	if n := testutil.CollectAndCount(m.Registry(), "grpc_mcp_gateway_tool_calls_total"); n != 1 {
		t.Errorf("after ForgetTool: %d call series, want 1 (ListAnimals OK)", n)
	}
	// A call that was under way when its tool was forgotten creates no
	// series again, whichever it touches first.
	get.Observe(codes.Internal, time.Millisecond, trace.SpanContext{})
	get.Rejected()
	get.Retried(2)
	for _, name := range []string{"grpc_mcp_gateway_tool_calls_total", "grpc_mcp_gateway_tool_input_rejections_total",
		"grpc_mcp_gateway_tool_call_duration_seconds", "grpc_mcp_gateway_tool_call_retries_total"} {
		want := 0
		if name == "grpc_mcp_gateway_tool_calls_total" {
			want = 1 // ListAnimals OK
		}
		if n := testutil.CollectAndCount(m.Registry(), name); n != want {
			t.Errorf("after a forgotten tool's call: %d series of %s, want %d", n, name, want)
		}
	}
	list.Retried(1)
	if n := testutil.CollectAndCount(m.Registry(), "grpc_mcp_gateway_tool_call_retries_total"); n != 1 {
		t.Errorf("a retry of a tool still listed: %d retry series, want 1", n)
	}
}

// TestMetricsExemplar: a sampled span's trace id rides on the latency
// observation, visible to an OpenMetrics scrape.
func TestMetricsExemplar(t *testing.T) {
	t.Parallel()
	m := telemetry.NewMetrics()
	sc := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID:    trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:     trace.SpanID{0, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
		TraceFlags: trace.FlagsSampled,
	})
	m.Tool("T", "b").Observe(codes.OK, 2*time.Millisecond, sc)
	req := httptest.NewRequest(http.MethodGet, "/metrics", nil)
	req.Header.Set("Accept", "application/openmetrics-text; version=1.0.0")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, req)
	if !strings.Contains(rec.Body.String(), `# {trace_id="4bf92f3577b34da6a3ce929d0e0e4736"} 0.002`) {
		t.Errorf("no exemplar in the OpenMetrics scrape:\n%s", grepLines(rec.Body.String(), "duration_seconds_bucket"))
	}
}

func grepLines(s, sub string) string {
	var b strings.Builder
	for line := range strings.Lines(s) {
		if strings.Contains(line, sub) {
			b.WriteString(line)
		}
	}
	return b.String()
}

// TestNilIsNoop: everything the gateway calls per call or per discovery
// works on nil receivers, so telemetry off needs no branches outside.
func TestNilIsNoop(t *testing.T) {
	t.Parallel()
	var m *telemetry.Metrics
	tm := m.Tool("t", "b")
	if tm != nil {
		t.Fatal("nil Metrics returned a non-nil ToolMetrics")
	}
	tm.Observe(codes.OK, time.Second, trace.SpanContext{})
	tm.Rejected()
	m.ForgetTool(tm)
	telemetry.NewMetrics().ForgetTool(nil)
	m.SessionOpened("stdio")
	m.SessionClosed("stdio")
	m.DiscoveryRefreshed("b", nil)
	m.SetBackendState("b", connectivity.Ready)
	if m.Registry() != nil {
		t.Error("nil Metrics has a registry")
	}
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusNotFound {
		t.Errorf("nil Metrics handler: %d, want 404", rec.Code)
	}

	for _, tp := range []trace.TracerProvider{nil, noop.NewTracerProvider()} {
		tr := telemetry.NewTracer(tp)
		if tr != nil {
			t.Fatalf("NewTracer(%T) = non-nil, want nil (tracing off)", tp)
		}
		tt := tr.Tool("t", "b", "/p.S/M")
		ctx := context.Background()
		got, span := tt.StartCall(ctx, &telemetry.CallInfo{})
		if got != ctx || span != nil {
			t.Error("nil ToolTracer started a span")
		}
		telemetry.EndCall(span, telemetry.Outcome{Code: codes.Internal})
		if _, ok := telemetry.GRPCDialOption(tp).(grpc.EmptyDialOption); !ok {
			t.Errorf("GRPCDialOption(%T) is not empty", tp)
		}
	}
}

// TestNoAllocsOnHotPath: with metrics on, a call's bookkeeping allocates
// nothing once the code's series exists.
func TestNoAllocsOnHotPath(t *testing.T) {
	tm := telemetry.NewMetrics().Tool("t", "b")
	tm.Observe(codes.NotFound, time.Millisecond, trace.SpanContext{})
	allocs := testing.AllocsPerRun(1000, func() {
		tm.Observe(codes.OK, time.Millisecond, trace.SpanContext{})
		tm.Observe(codes.NotFound, time.Millisecond, trace.SpanContext{})
	})
	if allocs != 0 {
		t.Errorf("Observe allocates %.1f times per call, want 0", allocs)
	}
}

func TestTracingConfigured(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		env  map[string]string
		want bool
	}{
		{nil, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "console"}, true},
		{map[string]string{"OTEL_TRACES_EXPORTER": "none"}, false},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://collector:4318/v1/traces"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_SDK_DISABLED": "true"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "TRUE"}, false},
		{map[string]string{"OTEL_TRACES_EXPORTER": "otlp", "OTEL_SDK_DISABLED": "false"}, true},
		{map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector:4318", "OTEL_TRACES_EXPORTER": "none"}, false},
	} {
		if got := telemetry.TracingConfigured(func(k string) string { return c.env[k] }); got != c.want {
			t.Errorf("TracingConfigured(%v) = %v, want %v", c.env, got, c.want)
		}
	}
}

// TestSetupTracingOff: with no OTEL_* variables the provider is the
// no-op one, which the rest of the package treats as off.
func TestSetupTracingOff(t *testing.T) {
	for _, k := range []string{"OTEL_TRACES_EXPORTER", "OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_SDK_DISABLED"} {
		t.Setenv(k, "")
	}
	tp, shutdown, err := telemetry.SetupTracing(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	if telemetry.NewTracer(tp) != nil {
		t.Errorf("tracing on with no OTEL_* variables: %T", tp)
	}
	if err := shutdown(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestSetupTracingOn: an OTLP endpoint turns tracing on; shutdown with
// nothing to send returns without dialling anyone.
func TestSetupTracingOn(t *testing.T) {
	t.Setenv("OTEL_SDK_DISABLED", "")
	t.Setenv("OTEL_TRACES_EXPORTER", "")
	t.Setenv("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:1")
	tp, shutdown, err := telemetry.SetupTracing(context.Background(), "test")
	if err != nil {
		t.Fatal(err)
	}
	if telemetry.NewTracer(tp) == nil {
		t.Errorf("tracing off with OTEL_EXPORTER_OTLP_ENDPOINT set: %T", tp)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := shutdown(ctx); err != nil {
		t.Error(err)
	}

	// The exporters the gateway links, each alone and together; an
	// exporter or protocol it does not link is an error naming the
	// variable.
	for _, tc := range []struct {
		exporter, protocol, wantErr string
	}{
		{"otlp", "grpc", ""},
		{"otlp", "http/protobuf", ""},
		{"console", "", ""},
		{"otlp, console", "grpc", ""},
		{"bogus", "", `OTEL_TRACES_EXPORTER: unsupported exporter "bogus"`},
		{"otlp,zipkin", "", `OTEL_TRACES_EXPORTER: unsupported exporter "zipkin"`},
		{"otlp", "http/json", `OTEL_EXPORTER_OTLP_PROTOCOL: unsupported protocol "http/json"`},
	} {
		t.Setenv("OTEL_TRACES_EXPORTER", tc.exporter)
		t.Setenv("OTEL_EXPORTER_OTLP_PROTOCOL", tc.protocol)
		tp, shutdown, err := telemetry.SetupTracing(context.Background(), "test")
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("OTEL_TRACES_EXPORTER=%q OTEL_EXPORTER_OTLP_PROTOCOL=%q: error %v, want %q", tc.exporter, tc.protocol, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("OTEL_TRACES_EXPORTER=%q OTEL_EXPORTER_OTLP_PROTOCOL=%q: %v", tc.exporter, tc.protocol, err)
			continue
		}
		if telemetry.NewTracer(tp) == nil {
			t.Errorf("OTEL_TRACES_EXPORTER=%q: tracing off", tc.exporter)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		if err := shutdown(ctx); err != nil {
			t.Errorf("OTEL_TRACES_EXPORTER=%q: shutdown: %v", tc.exporter, err)
		}
		cancel()
	}
}

func TestExtract(t *testing.T) {
	t.Parallel()
	const (
		metaTP   = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
		headerTP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
	)
	header := http.Header{"Traceparent": {headerTP}, "Tracestate": {"vendor=h"}}
	for _, c := range []struct {
		name       string
		meta       string
		header     http.Header
		wantTrace  string
		wantState  string
		wantRemote bool
	}{
		{"meta wins", `{"traceparent":"` + metaTP + `","tracestate":"vendor=m","progressToken":1}`, header, "4bf92f3577b34da6a3ce929d0e0e4736", "vendor=m", true},
		{"header when no meta", ``, header, "0af7651916cd43dd8448eb211c80319c", "vendor=h", true},
		{"header when meta has none", `{"progressToken":"p"}`, header, "0af7651916cd43dd8448eb211c80319c", "vendor=h", true},
		{"header when meta's is invalid", `{"traceparent":"00-zz-yy-01"}`, header, "0af7651916cd43dd8448eb211c80319c", "vendor=h", true},
		{"header when meta's is not a string", `{"traceparent":7}`, header, "0af7651916cd43dd8448eb211c80319c", "vendor=h", true},
		{"meta on stdio", `{"traceparent":"` + metaTP + `"}`, nil, "4bf92f3577b34da6a3ce929d0e0e4736", "", true},
		{"neither", `{}`, nil, "", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			sc := trace.SpanContextFromContext(telemetry.Extract(context.Background(), json.RawMessage(c.meta), c.header))
			if sc.IsRemote() != c.wantRemote {
				t.Fatalf("remote = %v, want %v", sc.IsRemote(), c.wantRemote)
			}
			if !c.wantRemote {
				return
			}
			if got := sc.TraceID().String(); got != c.wantTrace {
				t.Errorf("trace id %s, want %s", got, c.wantTrace)
			}
			if got := sc.TraceState().String(); got != c.wantState {
				t.Errorf("tracestate %q, want %q", got, c.wantState)
			}
		})
	}
}

func TestCodeName(t *testing.T) {
	t.Parallel()
	for c, want := range map[codes.Code]string{
		codes.OK: "OK", codes.Canceled: "CANCELLED", codes.NotFound: "NOT_FOUND",
		codes.Unauthenticated: "UNAUTHENTICATED", codes.Code(17): "CODE_17", codes.Code(1 << 31): "CODE_2147483648",
	} {
		if got := telemetry.CodeName(c); got != want {
			t.Errorf("CodeName(%d) = %q, want %q", c, got, want)
		}
	}
}

func TestLogCall(t *testing.T) {
	t.Parallel()
	info := telemetry.CallInfo{RequestID: json.RawMessage(`"req-7"`), SessionID: "s1", Transport: "streamable-http"}
	secret := json.RawMessage(`{"ssn":"123-45-6789"}`)
	for _, c := range []struct {
		name      string
		level     slog.Level
		rec       telemetry.CallRecord
		wantLevel string
		wantCode  string
		wantArgs  bool
	}{
		{"ok", slog.LevelInfo, telemetry.CallRecord{Outcome: telemetry.Outcome{Code: codes.OK}}, "INFO", "OK", false},
		{"not found is the caller's", slog.LevelInfo, telemetry.CallRecord{Outcome: telemetry.Outcome{Code: codes.NotFound}}, "INFO", "NOT_FOUND", false},
		{"unavailable is the backend's", slog.LevelInfo, telemetry.CallRecord{Outcome: telemetry.Outcome{Code: codes.Unavailable}}, "WARN", "UNAVAILABLE", false},
		{"a code past the 17 is UNKNOWN", slog.LevelInfo, telemetry.CallRecord{Outcome: telemetry.Outcome{Code: codes.Code(42)}}, "INFO", "UNKNOWN", false},
		{"rejected", slog.LevelInfo, telemetry.CallRecord{Outcome: telemetry.Outcome{Rejected: true}}, "INFO", "rejected", false},
		{"gateway fault", slog.LevelInfo, telemetry.CallRecord{Outcome: telemetry.Outcome{Code: codes.Internal, Err: errors.New("boom")}}, "ERROR", "INTERNAL", false},
		{"arguments need debug", slog.LevelInfo, telemetry.CallRecord{Outcome: telemetry.Outcome{Code: codes.OK}, Arguments: secret}, "INFO", "OK", false},
		{"arguments at debug", slog.LevelDebug, telemetry.CallRecord{Outcome: telemetry.Outcome{Code: codes.OK}, Arguments: secret}, "INFO", "OK", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			logger := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: c.level}))
			rec := c.rec
			rec.Tool, rec.Backend, rec.Duration, rec.CallInfo = "ZooService_GetAnimal", "zoo", 1500*time.Microsecond, info
			telemetry.LogCall(context.Background(), logger, &rec)
			lines := decodeLines(t, &buf)
			var call map[string]any
			var sawArgs bool
			for _, l := range lines {
				switch l["msg"] {
				case "tools/call":
					call = l
				case "tools/call arguments":
					sawArgs = true
					if l["level"] != "DEBUG" || l["arguments"] != string(secret) || l["id"] != `"req-7"` {
						t.Errorf("arguments line: %v", l)
					}
				}
			}
			if call == nil {
				t.Fatalf("no tools/call line in %q", buf.String())
			}
			for k, want := range map[string]any{
				"level": c.wantLevel, "tool": "ZooService_GetAnimal", "backend": "zoo", "code": c.wantCode,
				"duration_ms": 1.5, "id": `"req-7"`, "session": "s1", "transport": "streamable-http",
			} {
				if call[k] != want {
					t.Errorf("%s = %v, want %v", k, call[k], want)
				}
			}
			if sawArgs != c.wantArgs {
				t.Errorf("arguments line logged = %v, want %v", sawArgs, c.wantArgs)
			}
			if !c.wantArgs && strings.Contains(buf.String(), "123-45-6789") {
				t.Errorf("argument values leaked: %s", buf.String())
			}
		})
	}
}

// TestLogCallDropped: a logger that drops info lines gets nothing built,
// and a nil logger is fine.
func TestLogCallDropped(t *testing.T) {
	info := telemetry.CallInfo{RequestID: json.RawMessage(`1`)}
	telemetry.LogCall(context.Background(), nil, &telemetry.CallRecord{})
	quiet := slog.New(slog.NewTextHandler(io.Discard, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if n := testing.AllocsPerRun(100, func() {
		telemetry.LogCall(context.Background(), quiet, &telemetry.CallRecord{Tool: "t", CallInfo: info})
	}); n != 0 {
		t.Errorf("a dropped call line allocates %.1f times", n)
	}
}

func decodeLines(t *testing.T, r io.Reader) []map[string]any {
	t.Helper()
	var out []map[string]any
	dec := json.NewDecoder(r)
	for dec.More() {
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
	}
	return out
}
