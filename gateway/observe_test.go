package gateway

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/anytypes"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/call"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/compiled"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/rpcstatus"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// TestEveryErrorResultRecordsItsOutcome: each producer of an error
// result returns the outcome it decided with it, and callOutcome reports
// that, not anything read from the result's text.
func TestEveryErrorResultRecordsItsOutcome(t *testing.T) {
	t.Parallel()
	for c := codes.OK + 1; c <= codes.Unauthenticated; c++ {
		ctx := context.Background()
		res := rpcstatus.Result(ctx, status.New(c, "boom: with a colon"), nil)
		if got := callOutcome(ctx, res, nil); got != (telemetry.Outcome{Code: c}) {
			t.Errorf("statusResult(%s): outcome %+v", c, got)
		}
	}
	ctx := context.Background()
	st := status.New(codes.ResourceExhausted, "grpc: received message larger than max (9 vs. 8)")
	conn, dialErr := backendconn.Dial("127.0.0.1:1", backendconn.Options{MaxRecvBytes: 8, MaxSendBytes: 8})
	if dialErr != nil {
		t.Fatal(dialErr)
	}
	defer conn.Close()
	res := (&call.Env{Logger: slog.New(slog.DiscardHandler)}).Failed(ctx, &compiled.Tool{Call: compiled.Call{Limits: conn}, Backend: "b"}, st)
	if got := callOutcome(ctx, res, nil); got != (telemetry.Outcome{Code: codes.ResourceExhausted}) {
		t.Errorf("Failed (a size limit): outcome %+v", got)
	}

	tl := &compiled.Tool{Definition: mcp.Tool{Name: "T"}}
	res, _ = (&call.Env{}).InputError(ctx, tl, errors.New("id: want a string"))
	if got := callOutcome(ctx, res, nil); !got.Rejected {
		t.Errorf("inputError: outcome %+v, want rejected", got)
	}
	_, err := (&call.Env{InputErrorsProtocol: true}).InputError(ctx, tl, errors.New("x"))
	if got := callOutcome(ctx, nil, err); !got.Rejected {
		t.Errorf("inputError (protocol mode): outcome %+v, want rejected", got)
	}

	unknown := &anytypes.UnknownTypeError{Name: "x.v1.Ghost"}
	res = call.UnshownResult(unknown, "cannot show")
	if got := callOutcome(ctx, res, nil); got.Code != codes.Internal || got.Err != unknown {
		t.Errorf("unshownResult: outcome %+v, want INTERNAL and the lookup's error", got)
	}

	for status, want := range map[int]codes.Code{http.StatusUnauthorized: codes.Unauthenticated, http.StatusForbidden: codes.PermissionDenied} {
		err := refused(&auth.Refusal{Status: status, Code: "x", Description: "y"})
		var rf *mcp.Refusal
		if got := callOutcome(ctx, nil, err); got.Code != want || !errors.As(err, &rf) || rf.Status != status {
			t.Errorf("refused (HTTP %d): outcome %+v, MCP refusal %v; want %s and the refusal", status, got, rf, want)
		}
	}

	// The text is the model's; the outcome is what was recorded.
	res = rpcstatus.Result(ctx, status.New(codes.Internal, "x"), nil)
	res.Content[0].Text = "NOT_FOUND: a text that names another code"
	if got := callOutcome(ctx, res, nil); got.Code != codes.Internal {
		t.Errorf("outcome %+v, want the recorded INTERNAL whatever the text says", got)
	}
}

// TestCallOutcomeWithoutRecord: what callOutcome says of calls whose
// result or error carries no outcome: success, the caller leaving, a fault of the
// gateway, and (never expected) an error result from a path that forgot.
func TestCallOutcomeWithoutRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if got := callOutcome(ctx, &mcp.CallToolResult{}, nil); got != (telemetry.Outcome{Code: codes.OK}) {
		t.Errorf("success: outcome %+v", got)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if got := callOutcome(cancelled, nil, context.Canceled); got != (telemetry.Outcome{Code: codes.Canceled}) {
		t.Errorf("cancelled: outcome %+v", got)
	}
	fault := errors.New("encoding the response: bad")
	if got := callOutcome(ctx, nil, fault); got.Code != codes.Internal || got.Err != fault {
		t.Errorf("gateway fault: outcome %+v", got)
	}
	odd := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: "text", Text: "NOT_FOUND: something"}}}
	if got := callOutcome(ctx, odd, nil); got != (telemetry.Outcome{Code: codes.Unknown}) {
		t.Errorf("unrecorded error result: outcome %+v", got)
	}
}
