package telemetry

import (
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
)

// namespace prefixes every gateway metric, so they sort together and
// cannot collide with a backend's own metrics in the same Prometheus.
const namespace = "grpc_mcp_gateway"

// LatencyBuckets are the upper bounds, in seconds, of the call latency
// histogram: from 1ms (a loopback sidecar call) to 60s (past the default
// 30s call timeout, so a timed-out call still lands in a finite bucket),
// roughly 2.5x apart so quantiles stay within that factor.
var LatencyBuckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60}

// Discovery outcomes, the values of the outcome label.
const (
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
)

// connStates are the grpc-go connectivity states in their own spelling
// (IDLE, CONNECTING, READY, TRANSIENT_FAILURE, SHUTDOWN), one gauge
// series each, so a dashboard can plot `== 1` per state.
var connStates = [...]connectivity.State{
	connectivity.Idle, connectivity.Connecting, connectivity.Ready,
	connectivity.TransientFailure, connectivity.Shutdown,
}

// Metrics holds the gateway's Prometheus metrics on a registry of its own,
// so embedding the gateway never touches prometheus.DefaultRegisterer and
// two gateways in one process (or one test binary) never collide. A nil
// *Metrics is valid and records nothing.
type Metrics struct {
	reg         *prometheus.Registry
	calls       *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	rejections  *prometheus.CounterVec
	sessions    *prometheus.GaugeVec
	discoveries *prometheus.CounterVec
	connState   *prometheus.GaugeVec
	unanswered  *prometheus.GaugeVec
	retries     *prometheus.CounterVec
	replicas    *prometheus.GaugeVec
	// toolsetCalls and toolsetSessions label what the toolsets' endpoints
	// serve; the tool metrics above count every call whatever endpoint
	// carried it.
	toolsetCalls    *prometheus.CounterVec
	toolsetSessions *prometheus.GaugeVec
	// exchanges are the requests to the token endpoint of the backends
	// called as the end user (token exchange).
	exchanges *prometheus.HistogramVec
	// slowClients counts clients dropped for not reading, by transport.
	slowClients *prometheus.CounterVec
}

// NewMetrics registers the gateway's metrics, plus the Go runtime and
// process collectors, on a new registry.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		calls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "tool_calls_total",
			Help:      "tools/call requests that reached the backend, by tool, backend and the gRPC status code that ended them.",
		}, []string{"tool", "backend", "grpc_code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace,
			Name:      "tool_call_duration_seconds",
			Help:      "Time from the gateway accepting a tools/call to its result, including argument conversion, the backend call and response conversion.",
			Buckets:   LatencyBuckets,
		}, []string{"tool", "backend"}),
		rejections: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "tool_input_rejections_total",
			Help:      "tools/call requests whose arguments failed validation and never reached the backend.",
		}, []string{"tool", "backend"}),
		sessions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace,
			Name:      "sessions",
			Help:      "MCP sessions open now, by transport.",
		}, []string{"transport"}),
		slowClients: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "slow_clients_dropped_total",
			Help:      "Clients dropped because a write to them did not finish within the write timeout (they stopped reading), by transport: a WebSocket or legacy SSE session ends, a Streamable HTTP answer or stream is cut.",
		}, []string{"transport"}),
		discoveries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "discovery_refreshes_total",
			Help:      "Discoveries of a backend's services (at start and on every refresh), by outcome.",
		}, []string{"backend", "outcome"}),
		connState: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace,
			Name:      "backend_connection_state",
			Help:      "1 for the backend connection's current gRPC connectivity state, 0 for the others.",
		}, []string{"backend", "state"}),
		unanswered: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace,
			Name:      "backend_unanswered",
			Help:      "1 while the backend's connection is open but answered no grpc.health.v1 Check after a call to it timed out (a half-open connection or a stalled backend: /readyz reports it unanswered and not ready, though its connection state may read READY), else 0.",
		}, []string{"backend"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "tool_call_retries_total",
			Help:      "Attempts after the first that grpc-go made for calls to methods safe to repeat (retries after UNAVAILABLE, and transparent retries of a stream that never reached the backend).",
		}, []string{"tool", "backend"}),
		replicas: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace,
			Name:      "backend_replicas",
			Help:      "Addresses a backend's target resolves to (state=\"resolved\") and those connected and healthy (state=\"serving\").",
		}, []string{"backend", "state"}),
		toolsetCalls: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: namespace,
			Name:      "toolset_calls_total",
			Help:      "tools/call requests received at a toolset's endpoints (/mcp/NAME, /ws/NAME, /sse/NAME), by toolset.",
		}, []string{"toolset"}),
		toolsetSessions: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: namespace,
			Name:      "toolset_sessions",
			Help:      "MCP sessions open now at a toolset's endpoints, by toolset.",
		}, []string{"toolset"}),
		exchanges: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: namespace,
			Name:      "token_exchange_duration_seconds",
			Help:      "Requests to the authorization server's token endpoint exchanging a caller's token for a backend's (RFC 8693), by backend and outcome (ok; refused: an OAuth error answer; failed: no usable answer). Calls served by a kept token make none.",
			Buckets:   LatencyBuckets,
		}, []string{"backend", "outcome"}),
	}
	m.reg.MustRegister(m.exchanges)
	m.reg.MustRegister(
		m.calls, m.latency, m.rejections, m.sessions, m.slowClients, m.discoveries, m.connState, m.unanswered, m.retries, m.replicas, m.toolsetCalls, m.toolsetSessions,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	return m
}

// TokenExchange records one request to the token endpoint for backend.
func (m *Metrics) TokenExchange(backend, outcome string, d time.Duration) {
	if m == nil {
		return
	}
	m.exchanges.WithLabelValues(backend, outcome).Observe(d.Seconds())
}

// ToolsetCall counts a tools/call received at toolset's endpoints.
func (m *Metrics) ToolsetCall(toolset string) {
	if m == nil {
		return
	}
	m.toolsetCalls.WithLabelValues(toolset).Inc()
}

// ToolsetSession adds delta to toolset's open sessions.
func (m *Metrics) ToolsetSession(toolset string, delta int) {
	if m == nil {
		return
	}
	m.toolsetSessions.WithLabelValues(toolset).Add(float64(delta))
}

// StateUp exports up (1 or 0) as grpc_mcp_gateway_state_up: whether the
// fleet's shared state store answered its last health check. Call it once.
func (m *Metrics) StateUp(up func() bool) {
	if m == nil {
		return
	}
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: namespace,
		Name:      "state_up",
		Help:      "1 when the fleet's shared state store (--state) answered its last health check, else 0.",
	}, func() float64 {
		if up() {
			return 1
		}
		return 0
	}))
}

// Registry is where the metrics live, for callers that add collectors of
// their own or gather in-process. Nil for a nil *Metrics.
func (m *Metrics) Registry() *prometheus.Registry {
	if m == nil {
		return nil
	}
	return m.reg
}

// Handler serves the metrics in the Prometheus text format, or in
// OpenMetrics when the scraper asks for it, which carries the trace id
// exemplars of the latency histogram. A nil *Metrics serves 404, so the
// route can be mounted unconditionally.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		EnableOpenMetrics: true,
		// A failing collector (say, /proc unreadable in a sandbox) must
		// not blank the gateway's own metrics.
		ErrorHandling: promhttp.ContinueOnError,
	})
}

// Tool returns the series of one tool, for the gateway to keep beside the
// tool and use on every call. Call it at discovery, not per call: a call
// then reads each series with one atomic load. Nil for a nil *Metrics.
//
// The tool's OK calls series is created at once, so every tool shows (at
// zero) from the moment it is discovered and rate() over it is defined.
// Its other series (other codes, the latency histogram, rejections,
// retries) appear on first use: a histogram is seventeen series, and
// exported for every tool of the googleapis catalog (13,386) they made a
// scrape 31 MB and a second of CPU (BenchmarkScrape), for tools most of
// which are never called.
func (m *Metrics) Tool(tool, backend string) *ToolMetrics {
	if m == nil {
		return nil
	}
	tm := &ToolMetrics{
		m:       m,
		tool:    tool,
		calls:   m.calls.MustCurryWith(prometheus.Labels{"tool": tool, "backend": backend}),
		backend: backend,
	}
	tm.counter(codes.OK)
	return tm
}

// ForgetTool deletes the series of a tool that a refresh removed, so a
// renamed method does not leave its old series behind forever. tm, if
// still held by a call under way, records nothing from then on.
func (m *Metrics) ForgetTool(tm *ToolMetrics) {
	if m == nil || tm == nil {
		return
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	tm.forgotten = true
	l := prometheus.Labels{"tool": tm.tool, "backend": tm.backend}
	m.calls.DeletePartialMatch(l)
	m.latency.Delete(l)
	m.rejections.Delete(l)
	m.retries.Delete(l)
}

// SessionOpened counts a session opened on transport ("streamable-http",
// "stdio", "websocket", "sse"); pair it with SessionClosed.
func (m *Metrics) SessionOpened(transport string) {
	if m != nil {
		m.sessions.WithLabelValues(transport).Inc()
	}
}

// SessionClosed counts a session of transport closed.
func (m *Metrics) SessionClosed(transport string) {
	if m != nil {
		m.sessions.WithLabelValues(transport).Dec()
	}
}

// SlowClientDropped counts a client of transport dropped because it
// stopped reading.
func (m *Metrics) SlowClientDropped(transport string) {
	if m != nil {
		m.slowClients.WithLabelValues(transport).Inc()
	}
}

// DiscoveryRefreshed counts one discovery of backend: a success when err
// is nil, otherwise a failure.
func (m *Metrics) DiscoveryRefreshed(backend string, err error) {
	if m == nil {
		return
	}
	outcome := OutcomeSuccess
	if err != nil {
		outcome = OutcomeFailure
	}
	m.discoveries.WithLabelValues(backend, outcome).Inc()
}

// SetBackendState records backend's connection state: its series goes to
// 1 and the other states' to 0. Call it on every state change (the
// gateway does, from the watcher that also feeds /readyz).
func (m *Metrics) SetBackendState(backend string, state connectivity.State) {
	if m == nil {
		return
	}
	for _, s := range connStates {
		v := 0.0
		if s == state {
			v = 1
		}
		m.connState.WithLabelValues(backend, s.String()).Set(v)
	}
}

// SetBackendUnanswered records whether backend's connection is open but
// answers nothing (the gateway's answer watch, which also feeds /readyz):
// 1 while it does not answer, 0 otherwise. The gateway sets 0 when it
// starts watching a backend, so the series exists before anything fails.
func (m *Metrics) SetBackendUnanswered(backend string, unanswered bool) {
	if m == nil {
		return
	}
	v := 0.0
	if unanswered {
		v = 1
	}
	m.unanswered.WithLabelValues(backend).Set(v)
}

// SetBackendReplicas records how many addresses backend's target resolves
// to and how many of them serve (connected and healthy).
func (m *Metrics) SetBackendReplicas(backend string, resolved, serving int) {
	if m == nil {
		return
	}
	m.replicas.WithLabelValues(backend, "resolved").Set(float64(resolved))
	m.replicas.WithLabelValues(backend, "serving").Set(float64(serving))
}

// ToolMetrics are one tool's series, from [Metrics.Tool]. A nil
// *ToolMetrics records nothing. Safe for concurrent use.
type ToolMetrics struct {
	m             *Metrics
	tool, backend string
	calls         *prometheus.CounterVec // curried with tool and backend
	// The series, each resolved on first use (one label lookup, under
	// mu) and then read with one atomic load.
	byCode   [numCodes]atomic.Pointer[counter]
	latency  atomic.Pointer[observer]
	rejected atomic.Pointer[counter]
	retries  atomic.Pointer[counter]
	// mu orders first uses with ForgetTool: once forgotten, no series
	// is created again.
	mu        sync.Mutex
	forgotten bool
}

// counter and observer box a series so an atomic.Pointer can hold it.
type counter struct{ prometheus.Counter }

type observer struct{ prometheus.Observer }

// What a forgotten tool records into: series on no registry.
var (
	discardedCounter  = &counter{prometheus.NewCounter(prometheus.CounterOpts{Name: "discarded"})}
	discardedObserver = &observer{prometheus.NewHistogram(prometheus.HistogramOpts{Name: "discarded"})}
)

// series returns the series in slot, creating it with create on first
// use; a forgotten tool gets a series that is not exported.
func series[T any](tm *ToolMetrics, slot *atomic.Pointer[T], create func() *T, detached *T) *T {
	if p := slot.Load(); p != nil {
		return p
	}
	tm.mu.Lock()
	defer tm.mu.Unlock()
	if tm.forgotten {
		return detached
	}
	if p := slot.Load(); p != nil {
		return p
	}
	p := create()
	slot.Store(p)
	return p
}

func (tm *ToolMetrics) counter(c codes.Code) prometheus.Counter {
	return series(tm, &tm.byCode[c], func() *counter {
		return &counter{tm.calls.WithLabelValues(codeNames[c])}
	}, discardedCounter).Counter
}

func (tm *ToolMetrics) latencyObserver() prometheus.Observer {
	return series(tm, &tm.latency, func() *observer {
		return &observer{tm.m.latency.WithLabelValues(tm.tool, tm.backend)}
	}, discardedObserver).Observer
}

// Observe records one call that reached the backend and ended with code,
// after d. When sc is a sampled span, its trace id becomes the latency
// observation's exemplar, so a slow bucket links to a trace.
func (tm *ToolMetrics) Observe(code codes.Code, d time.Duration, sc trace.SpanContext) {
	if tm == nil {
		return
	}
	tm.counter(canonical(code)).Inc()
	latency := tm.latencyObserver()
	if sc.IsSampled() {
		if eo, ok := latency.(prometheus.ExemplarObserver); ok {
			eo.ObserveWithExemplar(d.Seconds(), prometheus.Labels{"trace_id": sc.TraceID().String()})
			return
		}
	}
	latency.Observe(d.Seconds())
}

// Rejected records one call whose arguments failed validation. It is not
// counted in tool_calls_total: that counts what the backend saw.
func (tm *ToolMetrics) Rejected() {
	if tm != nil {
		series(tm, &tm.rejected, func() *counter {
			return &counter{tm.m.rejections.WithLabelValues(tm.tool, tm.backend)}
		}, discardedCounter).Inc()
	}
}

// Retried records n retries (attempts after the first) of one call.
func (tm *ToolMetrics) Retried(n int) {
	if tm != nil && n > 0 {
		series(tm, &tm.retries, func() *counter {
			return &counter{tm.m.retries.WithLabelValues(tm.tool, tm.backend)}
		}, discardedCounter).Add(float64(n))
	}
}
