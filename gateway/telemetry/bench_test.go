package telemetry_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"

	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// BenchmarkScrape is one /metrics scrape of a gateway with the googleapis
// catalog's 13,386 tools, of which a hundred have been called: what a
// Prometheus server costs the gateway every scrape interval.
func BenchmarkScrape(b *testing.B) {
	m := telemetry.NewMetrics()
	for i := range 13386 {
		tm := m.Tool(fmt.Sprintf("Service%d_Method%d", i/7, i), "googleapis")
		if i%133 == 0 {
			tm.Observe(codes.OK, 3*time.Millisecond, trace.SpanContext{})
		}
	}
	h := m.Handler()
	b.ReportAllocs()
	var size int
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
		size = rec.Body.Len()
	}
	b.ReportMetric(float64(size), "bytes")
}

// BenchmarkLogCall is the access line of one tools/call as the gateway
// binary writes it (--log-format text and json at --log-level info), next
// to the same call at warn, where the line is dropped: the difference is
// what the line costs a call. The -slog cases are the same line through
// log/slog's own handlers, as the binary wrote it before NewLogger.
// "discard" is the formatting alone; "pipe" adds the write to a pipe
// another goroutine drains, as stderr is when a supervisor collects it.
//
//	go test -run '^$' -bench BenchmarkLogCall -benchmem ./gateway/telemetry/
func BenchmarkLogCall(b *testing.B) {
	rec := telemetry.CallRecord{
		Tool: "ZooService_GetAnimal", Backend: "zoo", Outcome: telemetry.Outcome{Code: codes.OK},
		Duration: 1234 * time.Microsecond,
		CallInfo: telemetry.CallInfo{RequestID: json.RawMessage(`17`), SessionID: "5f0c2a9e41d7b386", Transport: "streamable-http"},
	}
	for _, sink := range []string{"discard", "pipe"} {
		for _, c := range []struct {
			name     string
			level    slog.Level
			json     bool
			standard bool
		}{
			{"warn", slog.LevelWarn, false, false},
			{"info-text", slog.LevelInfo, false, false},
			{"info-json", slog.LevelInfo, true, false},
			{"info-text-slog", slog.LevelInfo, false, true},
			{"info-json-slog", slog.LevelInfo, true, true},
		} {
			b.Run(sink+"/"+c.name, func(b *testing.B) {
				w := io.Writer(io.Discard)
				if sink == "pipe" {
					r, pw, err := os.Pipe()
					if err != nil {
						b.Fatal(err)
					}
					done := make(chan struct{})
					go func() { _, _ = io.Copy(io.Discard, r); close(done) }()
					b.Cleanup(func() { pw.Close(); <-done; r.Close() })
					w = pw
				}
				opts := &slog.HandlerOptions{Level: c.level}
				logger := telemetry.NewLogger(w, c.json, opts)
				switch {
				case c.standard && c.json:
					logger = slog.New(slog.NewJSONHandler(w, opts))
				case c.standard:
					logger = slog.New(slog.NewTextHandler(w, opts))
				}
				ctx := context.Background()
				b.ReportAllocs()
				defer reportCPU(b)()
				for b.Loop() {
					telemetry.LogCall(ctx, logger, &rec)
				}
			})
		}
	}
}
