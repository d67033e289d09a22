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
// flight) with the operator's observability on: Prometheus metrics, then
// metrics plus the per-call info log line (JSON, discarded). Compare with
// BenchmarkUnary/gateway/inflight=1, where all of it is off.
//
//	go test -run '^$' -bench BenchmarkUnary -benchmem ./gateway/
func BenchmarkUnaryTelemetry(b *testing.B) {
	for _, c := range []struct {
		name string
		opts func() *gateway.Options
	}{
		{"metrics", func() *gateway.Options {
			return &gateway.Options{Telemetry: gateway.TelemetryOptions{Metrics: telemetry.NewMetrics()}}
		}},
		{"metrics+log", func() *gateway.Options {
			return &gateway.Options{Telemetry: gateway.TelemetryOptions{Metrics: telemetry.NewMetrics()}, Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			_, _, url := startGateway(b, c.opts())
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			defer hc.CloseIdleConnections()
			b.ReportAllocs()
			for b.Loop() {
				if err := postGetAnimal(hc, url, ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
