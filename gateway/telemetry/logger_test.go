package telemetry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc/codes"

	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// atTime is a standard handler whose records carry a time of the test's
// choosing, so its line can be compared byte for byte.
type atTime struct {
	slog.Handler
	t time.Time
}

func (h atTime) Handle(ctx context.Context, r slog.Record) error {
	r.Time = h.t
	return h.Handler.Handle(ctx, r)
}

// callLines returns the call line of rec as NewLogger's fast path writes
// it and as log/slog's own handler writes it.
func callLines(t testing.TB, rec telemetry.CallRecord, at time.Time, jsonFormat bool) (fast, std string) {
	t.Helper()
	var a, b bytes.Buffer
	rec.End = at
	telemetry.LogCall(context.Background(), telemetry.NewLogger(&a, jsonFormat, nil), &rec)
	var h slog.Handler = slog.NewTextHandler(&b, nil)
	if jsonFormat {
		h = slog.NewJSONHandler(&b, nil)
	}
	rec.End = time.Time{}
	telemetry.LogCall(context.Background(), slog.New(atTime{h, at}), &rec)
	return a.String(), b.String()
}

// TestCallLineIsTheStandardHandlers: the call line NewLogger formats
// itself is the line log/slog's text and JSON handlers write, byte for
// byte, whatever the strings hold.
func TestCallLineIsTheStandardHandlers(t *testing.T) {
	t.Parallel()
	span := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36},
		SpanID:  trace.SpanID{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7},
	})
	at := time.Date(2026, 12, 6, 12, 38, 58, 120_456_789, time.UTC)
	for _, c := range []struct {
		name string
		rec  telemetry.CallRecord
		at   time.Time
	}{
		{"ok", telemetry.CallRecord{Tool: "ZooService_GetAnimal", Backend: "zoo", Duration: 1234567 * time.Nanosecond,
			CallInfo: telemetry.CallInfo{RequestID: json.RawMessage(`17`), SessionID: "5f0c2a9e41d7b386", Transport: "streamable-http"}}, at},
		{"string id, no session, traced", telemetry.CallRecord{Tool: "a.b/c", Backend: "b", Duration: 2 * time.Second,
			CallInfo: telemetry.CallInfo{RequestID: json.RawMessage(`"req-7"`), Transport: "stdio"}, Span: span}, at},
		{"zero duration, empty id, rejected", telemetry.CallRecord{Tool: "t", Backend: "b", Outcome: telemetry.Outcome{Rejected: true}}, at},
		{"backend's fault", telemetry.CallRecord{Tool: "t", Backend: "b", Outcome: telemetry.Outcome{Code: codes.Unavailable}, Duration: time.Hour}, at},
		{"gateway's fault", telemetry.CallRecord{Tool: "t", Backend: "b", Outcome: telemetry.Outcome{Code: codes.Internal,
			Err: errors.New("encode \"x\": a\tb\nc = \\ \x00\x7f é \u2028 \xff")}}, at},
		{"odd strings", telemetry.CallRecord{Tool: "ü ñ", Backend: "a=b", Duration: 999 * time.Nanosecond,
			CallInfo: telemetry.CallInfo{RequestID: json.RawMessage("\"\x01\a\b\f\v\x7f\""), SessionID: "\u00a0", Transport: "\u2029"}}, at},
		{"whole millisecond, another zone", telemetry.CallRecord{Tool: "t", Backend: "b", Duration: time.Millisecond},
			time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", -(3*3600+30*60)))},
		{"a code past the 17", telemetry.CallRecord{Tool: "t", Backend: "b", Outcome: telemetry.Outcome{Code: codes.Code(99)}, Duration: 31 * time.Microsecond}, at},
	} {
		for _, jsonFormat := range []bool{false, true} {
			fast, std := callLines(t, c.rec, c.at, jsonFormat)
			if fast != std {
				t.Errorf("%s (json %v):\nfast     %q\nlog/slog %q", c.name, jsonFormat, fast, std)
			}
		}
	}
}

// FuzzCallLine: as TestCallLineIsTheStandardHandlers, for any strings,
// duration and time.
func FuzzCallLine(f *testing.F) {
	f.Add("ZooService_GetAnimal", "zoo", `"req-1"`, "5f0c2a9e41d7b386", "websocket", "", int64(1234567), int64(1_796_000_000_123_456_789), 0, uint32(0))
	f.Add("a b", "=", "", "", "", "boom \xff", int64(1), int64(0), -12600, uint32(14))
	f.Add("\u2028", "\"", `"\u00e9"`, "\t", "\x7f", "\n", int64(1e18), int64(253402300799), 3600, uint32(13))
	f.Add("t", "b", "1", "", "", "", int64(999_999_999_000), int64(1e18), 0, uint32(2))
	f.Add("t", "b", "1", "", "", "", int64(1_000_000_000_000), int64(1e18), 0, uint32(2))
	f.Add("t", "b", "1", "", "", "", int64(1000), int64(1e18), 0, uint32(2))
	f.Add("t", "b", "1", "", "", "", int64(-2500), int64(1e18), 0, uint32(2))
	f.Fuzz(func(t *testing.T, tool, backend, id, session, transport, errText string, d, unixNano int64, offset int, code uint32) {
		at := time.Unix(0, unixNano).In(time.FixedZone("", offset%(18*3600)))
		if y := at.Year(); y < 0 || y > 9999 {
			t.Skip("the JSON handler refuses years outside 0-9999")
		}
		rec := telemetry.CallRecord{Tool: tool, Backend: backend, Duration: time.Duration(d), Outcome: telemetry.Outcome{Code: codes.Code(code)},
			CallInfo: telemetry.CallInfo{RequestID: json.RawMessage(id), SessionID: session, Transport: transport}}
		if errText != "" {
			rec.Outcome.Err = errors.New(errText)
		}
		for _, jsonFormat := range []bool{false, true} {
			if fast, std := callLines(t, rec, at, jsonFormat); fast != std {
				t.Errorf("json %v:\nfast     %q\nlog/slog %q", jsonFormat, fast, std)
			}
		}
	})
}

// TestNewLoggerLinesWhole: call lines and other lines logged at once from
// many goroutines reach a writer that is not safe for concurrent use
// whole, one JSON object a line.
func TestNewLoggerLinesWhole(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	logger := telemetry.NewLogger(&buf, true, nil)
	derived := logger.With("component", "test")
	rec := telemetry.CallRecord{Tool: "t", Backend: "b", CallInfo: telemetry.CallInfo{RequestID: json.RawMessage(`1`)}}
	const goroutines, each = 8, 200
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for range each {
				telemetry.LogCall(context.Background(), logger, &rec)
				logger.Info("other", "k", "v")
				derived.Warn("derived")
			}
		})
	}
	wg.Wait()
	lines := bytes.Split(bytes.TrimSuffix(buf.Bytes(), []byte("\n")), []byte("\n"))
	if len(lines) != 3*goroutines*each {
		t.Fatalf("%d lines, want %d", len(lines), 3*goroutines*each)
	}
	for _, l := range lines {
		if !json.Valid(l) {
			t.Fatalf("a line is not whole: %q", l)
		}
	}
}
