package gateway

import (
	"context"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// TestOperationErrorWithholdsDebugInfo: a failed operation's error reaches
// the client as a call's status does (clientStatus): its google.rpc
// DebugInfo only with Options.ExposeDebugInfo, its other details always,
// whether the result comes from a waiting call (lr) or a task (ops).
func TestOperationErrorWithholdsDebugInfo(t *testing.T) {
	st, err := status.New(codes.Internal, "job failed").WithDetails(
		&errdetails.DebugInfo{Detail: "panic at worker.go:42"},
		&errdetails.ErrorInfo{Reason: "WORKER_CRASHED", Domain: "jobs.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	op := &operation{name: "operations/1", done: true, err: st.Proto()}
	for _, expose := range []bool{false, true} {
		for name, res := range map[string]*mcp.CallToolResult{
			"call": doneResult(context.Background(), op, &longRunning{exposeDebugInfo: expose}, nil, nil),
			"task": doneResult(context.Background(), op, nil, &operationsClient{exposeDebugInfo: expose}, nil),
		} {
			var text strings.Builder
			for _, c := range res.Content {
				text.WriteString(c.Text)
			}
			got := text.String()
			if !res.IsError || !strings.Contains(got, "WORKER_CRASHED") || strings.Contains(got, "worker.go:42") != expose {
				t.Errorf("%s, ExposeDebugInfo=%v: isError=%v %q", name, expose, res.IsError, got)
			}
		}
	}
}
