package gateway_test

import (
	"bytes"
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
		{"metrics", func() *gateway.Options { return &gateway.Options{Metrics: telemetry.NewMetrics()} }},
		{"metrics+log", func() *gateway.Options {
			return &gateway.Options{Metrics: telemetry.NewMetrics(), Logger: slog.New(slog.NewJSONHandler(io.Discard, nil))}
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			_, _, url := startGateway(b, c.opts())
			body := []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"leo"},` +
				`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`)
			hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
			defer hc.CloseIdleConnections()
			b.ReportAllocs()
			for b.Loop() {
				req, _ := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
				req.Header = http.Header{
					"Content-Type":         {"application/json"},
					"Accept":               {"application/json, text/event-stream"},
					"Mcp-Protocol-Version": {"2026-07-28"},
					"Mcp-Method":           {"tools/call"},
					"Mcp-Name":             {"ZooService_GetAnimal"},
				}
				resp, err := hc.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					b.Fatal(resp.Status)
				}
			}
		})
	}
}
