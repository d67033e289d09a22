package main

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// observability holds the flags for metrics, the call log and the health
// probe; tracing is configured by the standard OTEL_* variables only, as
// every OpenTelemetry SDK is, so a platform's injected settings just work.
type observability struct {
	metrics bool
	probe   string
}

// telemetrySetup is what serve wires into the backend connection and the
// gateway.
type telemetrySetup struct {
	metrics  *telemetry.Metrics
	tp       trace.TracerProvider
	shutdown func(context.Context) error
}

// setup builds the metrics registry and the tracer provider. In --stdio
// mode stdout is the MCP wire, so the console trace exporter (which
// writes there) is refused rather than left to corrupt the session.
func (o *observability) setup(ctx context.Context, logger *slog.Logger, stdio bool) (*telemetrySetup, error) {
	if stdio && strings.EqualFold(strings.TrimSpace(os.Getenv("OTEL_TRACES_EXPORTER")), "console") &&
		telemetry.TracingConfigured(os.Getenv) {
		return nil, settingErrorf("OTEL_TRACES_EXPORTER=console writes to stdout, which is the MCP transport in %s mode: use otlp", flagName("stdio"))
	}
	s := &telemetrySetup{}
	if o.metrics {
		s.metrics = telemetry.NewMetrics()
	}
	tp, shutdown, err := telemetry.SetupTracing(ctx, version)
	if err != nil {
		return nil, err
	}
	s.tp, s.shutdown = tp, shutdown
	if telemetry.NewTracer(tp) != nil {
		// The SDK's own failures (an unreachable collector) go to the log,
		// not to the standard library logger.
		otel.SetErrorHandler(otel.ErrorHandlerFunc(func(err error) {
			logger.Warn("opentelemetry", "err", err)
		}))
		logger.Info("tracing on (OTEL_* environment)")
	}
	return s, nil
}

// dialOption puts the gRPC client span under each tools/call span.
func (s *telemetrySetup) dialOption() grpc.DialOption { return telemetry.GRPCDialOption(s.tp) }

// close flushes the spans still buffered, after the last call ended.
func (s *telemetrySetup) close(logger *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.shutdown(ctx); err != nil {
		logger.Warn("flushing traces", "err", err)
	}
}
