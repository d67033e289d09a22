package gateway

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// observed is a context with an outcome slot, as startCall makes one.
func observed() (context.Context, *outcomeSlot) {
	s := new(outcomeSlot)
	return context.WithValue(context.Background(), outcomeKey{}, s), s
}

// TestEveryErrorResultRecordsItsOutcome: each producer of an error
// result records the outcome it decided, and callOutcome reports that
// record, not anything read from the result's text.
func TestEveryErrorResultRecordsItsOutcome(t *testing.T) {
	t.Parallel()
	for c := codes.OK + 1; c <= codes.Unauthenticated; c++ {
		ctx, slot := observed()
		res := statusResult(ctx, status.New(c, "boom: with a colon"), nil)
		if got := callOutcome(ctx, slot, res, nil); got != (telemetry.Outcome{Code: c}) {
			t.Errorf("statusResult(%s): outcome %+v", c, got)
		}
	}
	ctx, slot := observed()
	st := status.New(codes.ResourceExhausted, "grpc: received message larger than max (9 vs. 8)")
	conn, dialErr := backendconn.Dial("127.0.0.1:1", backendconn.Options{MaxRecvBytes: 8, MaxSendBytes: 8})
	if dialErr != nil {
		t.Fatal(dialErr)
	}
	defer conn.Close()
	res := (&Gateway{opts: Options{Logger: slog.New(slog.DiscardHandler)}}).callFailed(ctx, &tool{limits: conn, backend: "b"}, st)
	if got := callOutcome(ctx, slot, res, nil); got != (telemetry.Outcome{Code: codes.ResourceExhausted}) {
		t.Errorf("callFailed (a size limit): outcome %+v", got)
	}

	tl := &tool{def: mcp.Tool{Name: "T"}}
	ctx, slot = observed()
	res, _ = (&Gateway{}).inputError(ctx, tl, errors.New("id: want a string"))
	if got := callOutcome(ctx, slot, res, nil); !got.Rejected {
		t.Errorf("inputError: outcome %+v, want rejected", got)
	}
	ctx, slot = observed()
	_, err := (&Gateway{opts: Options{InputErrors: InputErrorsProtocol}}).inputError(ctx, tl, errors.New("x"))
	if got := callOutcome(ctx, slot, nil, err); !got.Rejected {
		t.Errorf("inputError (protocol mode): outcome %+v, want rejected", got)
	}

	ctx, slot = observed()
	unknown := &unknownTypeError{name: "x.v1.Ghost"}
	res = unshownResult(ctx, unknown, "cannot show")
	if got := callOutcome(ctx, slot, res, nil); got.Code != codes.Internal || got.Err != unknown {
		t.Errorf("unshownResult: outcome %+v, want INTERNAL and the lookup's error", got)
	}

	// The text is the model's; the outcome is what was recorded.
	ctx, slot = observed()
	res = statusResult(ctx, status.New(codes.Internal, "x"), nil)
	res.Content[0].Text = "NOT_FOUND: a text that names another code"
	if got := callOutcome(ctx, slot, res, nil); got.Code != codes.Internal {
		t.Errorf("outcome %+v, want the recorded INTERNAL whatever the text says", got)
	}
}

// TestCallOutcomeWithoutRecord: what callOutcome says of calls whose
// outcome nobody recorded: success, the caller leaving, a fault of the
// gateway, and (never expected) an error result from a path that forgot.
func TestCallOutcomeWithoutRecord(t *testing.T) {
	t.Parallel()
	ctx, slot := observed()
	if got := callOutcome(ctx, slot, &mcp.CallToolResult{}, nil); got != (telemetry.Outcome{Code: codes.OK}) {
		t.Errorf("success: outcome %+v", got)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if got := callOutcome(cancelled, slot, nil, context.Canceled); got != (telemetry.Outcome{Code: codes.Canceled}) {
		t.Errorf("cancelled: outcome %+v", got)
	}
	fault := errors.New("encoding the response: bad")
	if got := callOutcome(ctx, slot, nil, fault); got.Code != codes.Internal || got.Err != fault {
		t.Errorf("gateway fault: outcome %+v", got)
	}
	odd := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: "text", Text: "NOT_FOUND: something"}}}
	if got := callOutcome(ctx, slot, odd, nil); got != (telemetry.Outcome{Code: codes.Unknown}) {
		t.Errorf("unrecorded error result: outcome %+v", got)
	}
	// Not observed at all: recording is a no-op, not a panic.
	recordOutcome(context.Background(), telemetry.Outcome{Code: codes.Internal})
}
