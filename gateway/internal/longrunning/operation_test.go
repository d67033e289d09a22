package longrunning

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
)

// TestOperationErrorWithholdsDebugInfo: a failed operation's error reaches
// the client as a call's status does (clientStatus): its google.rpc
// DebugInfo only with Options.Calls.ExposeDebugInfo, its other details always,
// whether the result comes from a waiting call (lr) or a task (ops).
func TestOperationErrorWithholdsDebugInfo(t *testing.T) {
	st, err := status.New(codes.Internal, "job failed").WithDetails(
		&errdetails.DebugInfo{Detail: "panic at worker.go:42"},
		&errdetails.ErrorInfo{Reason: "WORKER_CRASHED", Domain: "jobs.example.com"})
	if err != nil {
		t.Fatal(err)
	}
	op := &Operation{name: "operations/1", done: true, err: st.Proto()}
	for _, expose := range []bool{false, true} {
		for name, res := range map[string]*mcp.CallToolResult{
			"call": DoneResult(context.Background(), op, &Method{ExposeDebugInfo: expose}, nil, nil),
			"task": DoneResult(context.Background(), op, nil, &Client{ExposeDebugInfo: expose}, nil),
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

// TestWithHandle: a long-running tool's output schema is the response's,
// plus an optional "operation" member for the unfinished handle, without
// the response's own required list, so that both results validate; a
// response that has an "operation" field of its own keeps it.
func TestWithHandle(t *testing.T) {
	for _, tc := range []struct{ in, key string }{
		{`{"type":"object","properties":{"label":{"type":"string"}},"required":["label"]}`, "operation"},
		{`{"type":"object","properties":{"operation":{"type":"string"}},"required":["operation"]}`, "_operation"},
	} {
		out, key, err := WithHandle(json.RawMessage(tc.in))
		if err != nil {
			t.Fatal(err)
		}
		var got struct {
			Properties map[string]json.RawMessage `json:"properties"`
			Required   []string                   `json:"required"`
		}
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatal(err)
		}
		if key != tc.key || string(got.Properties[key]) != handleSchema || got.Required != nil || len(got.Properties) != 2 {
			t.Errorf("WithHandle(%s) = %s, key %q; want the handle as optional %q and no required list", tc.in, out, key, tc.key)
		}
	}
}
