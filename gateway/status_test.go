package gateway_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/reflection"
	"google.golang.org/grpc/status"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// debugBackend answers GetAnimal("debug") with a status carrying
// DebugInfo and ErrorInfo details.
func debugBackend(t *testing.T) (addr string, gs *grpc.Server) {
	t.Helper()
	withDebug := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if r, ok := req.(*zoov1.GetAnimalRequest); ok && r.GetId() == "debug" {
			st, _ := status.New(codes.Internal, "boom").WithDetails(
				&errdetails.DebugInfo{Detail: "panic at zoo.go:42", StackEntries: []string{"zoo.(*server).GetAnimal"}},
				&errdetails.ErrorInfo{Reason: "BOOM", Domain: "zoo.example.com"})
			return nil, st.Err()
		}
		return next(ctx, req)
	}
	gs = grpc.NewServer(grpc.UnaryInterceptor(withDebug))
	zoo.Register(gs, zoo.NewServer())
	reflection.Register(gs)
	return testkit.ServeLoopback(t, gs), gs
}

// TestClientErrorsWithholdInternals: DebugInfo reaches clients only with
// ExposeDebugInfo (other details always do; a withheld one is logged at
// debug level), and when the backend cannot be reached the client reads a
// generic text while the log keeps grpc-go's account of it, with the
// address.
func TestClientErrorsWithholdInternals(t *testing.T) {
	for _, expose := range []bool{false, true} {
		addr, _ := debugBackend(t)
		logs := &testkit.SyncBuffer{}
		logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		_, base := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", addr)}, &gateway.Options{Calls: gateway.CallOptions{ExposeDebugInfo: expose}, Logger: logger})
		got := text(t, call(t, connect(t, base+"/mcp", "2025-11-25"), "ZooService_GetAnimal", map[string]any{"id": "debug"}))
		if !strings.Contains(got, "reason=BOOM") || strings.Contains(got, "zoo.go:42") != expose {
			t.Errorf("ExposeDebugInfo=%v: %q", expose, got)
		}
		withheld := strings.Contains(logs.String(), "level=DEBUG msg=\"tools/call: DebugInfo withheld") && strings.Contains(logs.String(), "zoo.go:42")
		if withheld == expose {
			t.Errorf("ExposeDebugInfo=%v: withheld DebugInfo logged at debug level: %v\n%s", expose, withheld, logs.String())
		}
	}

	addr, gs := debugBackend(t)
	logs := &testkit.SyncBuffer{}
	logger := slog.New(slog.NewTextHandler(logs, nil))
	_, base := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", addr)}, &gateway.Options{Logger: logger})
	cs := connect(t, base+"/mcp", "2025-11-25")
	gs.Stop()
	got := text(t, call(t, cs, "ZooService_GetAnimal", map[string]any{"id": "leo"}))
	if !strings.HasPrefix(got, "UNAVAILABLE: the gateway could not reach the backend") || strings.Contains(got, addr) || strings.Contains(got, "dial") {
		t.Errorf("unreachable backend: %q", got)
	}
	if !strings.Contains(logs.String(), addr) {
		t.Errorf("the log does not keep the cause with the address %s:\n%s", addr, logs.String())
	}
}

// TestLongRunningStartOverSizeLimit: the start of a long-running method
// whose response is over the connection's receive limit fails as any
// call over it does (call.Env.Failed), naming the limit and saying that
// repeating the call cannot help; it once took the plain status path.
func TestLongRunningStartOverSizeLimit(t *testing.T) {
	t.Parallel()
	srv, stop, err := lrotest.Start(lrotest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	const limit = 128 << 10 // over what reflection answers for this backend
	_, base := newGateway(t, []gateway.Backend{dialTarget(t, "jobs", srv.Addr, backendconn.Options{MaxRecvBytes: limit})}, nil)
	cs := connect(t, base+"/mcp", "2025-11-25")
	// A job of no steps is done at its start, so the start response
	// carries the response and its label.
	res := call(t, cs, "Jobs_Run", map[string]any{"label": strings.Repeat("x", 2*limit), "steps": 0})
	want := fmt.Sprintf("RESOURCE_EXHAUSTED: the response is larger than the gateway's limit of %d bytes per message from backend jobs", limit)
	if got := text(t, res); !res.IsError || !strings.HasPrefix(got, want) || !strings.Contains(got, "Repeating the same call will not help") {
		t.Fatalf("got %.400s\nwant a tool error starting %q that says repeating will not help", got, want)
	}
}
