package gateway_test

import (
	"io"
	"log/slog"
	"net/http"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// BenchmarkUnaryTelemetry is BenchmarkUnary's gateway case (one call in
// flight) with the operator's observability on: Prometheus metrics with
// the binary's logger at warn (no line per call), then at info, where
// every call writes its access line (text or JSON, discarded), then the
// same through log/slog's own JSON handler, which is what the binary used
// before telemetry.NewLogger. The difference between "warn" and the info
// cases is what the access line costs a call (allocs/op exactly, and
// cpu-µs/op, which moves less than ns/op on a shared machine); compare
// with BenchmarkUnary/gateway/inflight=1, where all of it is off.
//
//	go test -run '^$' -bench 'BenchmarkUnaryTelemetry' -benchmem -count 6 ./gateway/
func BenchmarkUnaryTelemetry(b *testing.B) {
	logger := func(level slog.Level, json bool) *slog.Logger {
		return telemetry.NewLogger(io.Discard, json, &slog.HandlerOptions{Level: level})
	}
	for _, c := range []struct {
		name string
		opts func() *gateway.Options
	}{
		{"metrics+warn", func() *gateway.Options {
			return &gateway.Options{Telemetry: gateway.TelemetryOptions{Metrics: telemetry.NewMetrics()}, Logger: logger(slog.LevelWarn, false)}
		}},
		{"metrics+info-text", func() *gateway.Options {
			return &gateway.Options{Telemetry: gateway.TelemetryOptions{Metrics: telemetry.NewMetrics()}, Logger: logger(slog.LevelInfo, false)}
		}},
		{"metrics+info-json", func() *gateway.Options {
			return &gateway.Options{Telemetry: gateway.TelemetryOptions{Metrics: telemetry.NewMetrics()}, Logger: logger(slog.LevelInfo, true)}
		}},
		{"metrics+info-json-slog", func() *gateway.Options {
			return &gateway.Options{Telemetry: gateway.TelemetryOptions{Metrics: telemetry.NewMetrics()}, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			_, _, url := startGateway(b, c.opts())
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			defer hc.CloseIdleConnections()
			b.ReportAllocs()
			caller := statelessCaller(hc, url, "ZooService_GetAnimal", "")
			defer reportCPU(b)()
			for b.Loop() {
				if err := postGetAnimal(caller); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
