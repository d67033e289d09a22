package gateway

import (
	"context"
	"errors"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
)

// TestCallOutcome pins what observe.go reads back from CallTool's
// answers: the code statusResult writes first, inputError's prefix, and
// the errors CallTool returns.
func TestCallOutcome(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	for c := codes.OK + 1; c <= codes.Unauthenticated; c++ {
		res := statusResult(status.New(c, "boom: with a colon"), nil)
		if got := callOutcome(ctx, res, nil); got != (telemetry.Outcome{Code: c}) {
			t.Errorf("statusResult(%s): outcome %+v", c, got)
		}
	}
	tl := &tool{def: mcp.Tool{Name: "T"}}
	res, _ := (&Gateway{}).inputError(tl, errors.New("id: want a string"))
	if got := callOutcome(ctx, res, nil); !got.Rejected {
		t.Errorf("inputError: outcome %+v, want rejected", got)
	}
	_, err := (&Gateway{opts: Options{InputErrors: InputErrorsProtocol}}).inputError(tl, errors.New("x"))
	if got := callOutcome(ctx, nil, err); !got.Rejected {
		t.Errorf("inputError (protocol mode): outcome %+v, want rejected", got)
	}
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
	odd := &mcp.CallToolResult{IsError: true, Content: []mcp.Content{{Type: "text", Text: "something else"}}}
	if got := callOutcome(ctx, odd, nil); got != (telemetry.Outcome{Code: codes.Unknown}) {
		t.Errorf("unrecognised error result: outcome %+v", got)
	}
}
