package gateway_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/codes"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/lrotest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// startJobs serves the long-running test backend and fronts it with a
// gateway; it returns the backend and the gateway's /mcp URL.
func startJobs(t *testing.T, bopts lrotest.Options, opts *gateway.Options) (*lrotest.Server, *gateway.Gateway, string) {
	t.Helper()
	srv, stop, err := lrotest.Start(bopts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "jobs", srv.Addr)}, opts)
	return srv, g, base + "/mcp"
}

// structured decodes a result's structuredContent after checking it
// against the tool's output schema.
func structured(t *testing.T, g *gateway.Gateway, tool string, res *sdk.CallToolResult) map[string]any {
	t.Helper()
	sch, err := compileSchema(toolByName(t, g, tool).OutputSchema)
	if err != nil {
		t.Fatalf("%s output schema: %v", tool, err)
	}
	raw, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	if err := sch.Validate(v); err != nil {
		t.Fatalf("%s structuredContent %s does not match its output schema: %v", tool, raw, err)
	}
	m, _ := v.(map[string]any)
	return m
}

func allText(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func TestOperationToolsDescribeTheFinalResponse(t *testing.T) {
	_, g, _ := startJobs(t, lrotest.Options{}, nil)
	run := toolByName(t, g, "Jobs_Run")
	var out struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(run.OutputSchema, &out); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"label", "stepsDone", "operation"} {
		if out.Properties[p] == nil {
			t.Errorf("Jobs_Run output schema lacks %q: %s", p, run.OutputSchema)
		}
	}
	for _, want := range []string{"long-running", "30s", "Operations_GetOperation"} {
		if !strings.Contains(run.Description, want) {
			t.Errorf("Jobs_Run description %q does not mention %q", run.Description, want)
		}
	}
	// Decided by operation_info, not by the output type: Peek and
	// GetOperation return the envelope.
	for _, name := range []string{"Jobs_Peek", "Operations_GetOperation"} {
		tl := toolByName(t, g, name)
		if !strings.Contains(string(tl.OutputSchema), `"done"`) || strings.Contains(tl.Description, "This is a long-running operation") {
			t.Errorf("%s should be an ordinary tool returning the Operation: %s %s", name, tl.Description, tl.OutputSchema)
		}
	}
}

func TestOperationWaitReturnsTheResponse(t *testing.T) {
	for _, tc := range []struct {
		name   string
		noWait bool
	}{{"WaitOperation", false}, {"GetOperation", true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv, g, url := startJobs(t, lrotest.Options{NoWait: tc.noWait}, nil)
			for _, v := range versions {
				cs := connect(t, url, v)
				res := call(t, cs, "Jobs_Run", map[string]any{"label": "build", "steps": 3})
				if res.IsError {
					t.Fatalf("%s: %s", v, allText(res))
				}
				got := structured(t, g, "Jobs_Run", res)
				if got["label"] != "build" || got["stepsDone"] != float64(3) || got["operation"] != nil {
					t.Errorf("%s: structuredContent %v, want the RunResponse", v, got)
				}
			}
			if tc.noWait && srv.Waits() != 0 || !tc.noWait && srv.Waits() == 0 {
				t.Errorf("WaitOperation answered %d times", srv.Waits())
			}
		})
	}
}

func TestOperationProgressCarriesTheMetadata(t *testing.T) {
	for _, noWait := range []bool{false, true} {
		_, _, url := startJobs(t, lrotest.Options{NoWait: noWait}, nil)
		msgs := progressMessages(t, url, "Jobs_Run", map[string]any{"label": "p", "steps": 3}, 4)
		for i, m := range msgs {
			var meta map[string]any
			if err := json.Unmarshal([]byte(m), &meta); err != nil || meta["step"] != nil && meta["step"] != float64(i) || strings.ContainsAny(m, " \n") {
				t.Errorf("noWait=%v: progress %d message %q is not the compact metadata of step %d", noWait, i, m, i)
			}
		}
	}
}

// progressMessages calls the tool name at url with a progress token and
// returns the messages of the progress notifications the client has once
// it has at least want of them.
func progressMessages(t *testing.T, url, name string, args map[string]any, want int) []string {
	t.Helper()
	var mu sync.Mutex
	var msgs []string
	client := sdk.NewClient(&sdk.Implementation{Name: "lro", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *sdk.ProgressNotificationClientRequest) {
			mu.Lock()
			defer mu.Unlock()
			msgs = append(msgs, req.Params.Message)
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	params.SetProgressToken("tok")
	if res, err := cs.CallTool(ctx, params); err != nil || res.IsError {
		t.Fatalf("call: %v %v", err, res)
	}
	testkit.WaitFor(t, fmt.Sprintf("%d progress notifications", want), func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(msgs) >= want
	})
	mu.Lock()
	defer mu.Unlock()
	return slices.Clone(msgs)
}

func TestOperationFailureIsAToolError(t *testing.T) {
	_, _, url := startJobs(t, lrotest.Options{FailCode: codes.ResourceExhausted}, nil)
	cs := connect(t, url, "2025-11-25")
	res := call(t, cs, "Jobs_Run", map[string]any{"label": "bad", "steps": 2, "fail": true})
	if !res.IsError {
		t.Fatalf("a failed operation should be isError: %s", allText(res))
	}
	if txt := allText(res); !strings.HasPrefix(txt, "RESOURCE_EXHAUSTED: job bad failed at step 2") || !strings.Contains(txt, "retryable") {
		t.Errorf("error text %q should read as any gRPC error", txt)
	}
}

func TestOperationUnfinishedReturnsTheHandle(t *testing.T) {
	srv, g, url := startJobs(t, lrotest.Options{}, &gateway.Options{Calls: gateway.CallOptions{OperationWait: 300 * time.Millisecond}})
	cs := connect(t, url, "2025-11-25")
	res := call(t, cs, "Jobs_Run", map[string]any{"label": "slow", "never": true})
	if res.IsError {
		t.Fatal(allText(res))
	}
	got := structured(t, g, "Jobs_Run", res)
	op, _ := got["operation"].(map[string]any)
	name := srv.Jobs()[0]
	if op["name"] != name || op["done"] != false || op["metadata"] == nil || len(got) != 1 {
		t.Fatalf("handle %v, want {operation: {name: %s, done: false, metadata}}", got, name)
	}
	if txt := allText(res); !strings.Contains(txt, "Operations_GetOperation") || !strings.Contains(txt, name) {
		t.Errorf("text %q should name the tool to call later", txt)
	}
	// The named tool answers for the operation.
	later := call(t, cs, "Operations_GetOperation", map[string]any{"name": name})
	if later.IsError || !strings.Contains(allText(later), name) {
		t.Errorf("Operations_GetOperation: %s", allText(later))
	}
}

func TestOperationWaitPerMethodAndDeadline(t *testing.T) {
	srv, stop, err := lrotest.Start(lrotest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	// A per-method setting of no wait: the handle comes back at once,
	// without a single poll.
	b := dialBackend(t, "jobs", srv.Addr)
	b.Methods = []gateway.MethodSettings{{Match: "lrotest.v1.Jobs/Run", OperationWait: -1}}
	g, base := newGateway(t, []gateway.Backend{b}, nil)
	cs := connect(t, base+"/mcp", "2025-11-25")
	res := call(t, cs, "Jobs_Run", map[string]any{"steps": 2})
	if got := structured(t, g, "Jobs_Run", res); got["operation"] == nil || srv.Polls() != 0 {
		t.Errorf("want the handle and no poll, got %v after %d polls", got, srv.Polls())
	}
	if d := toolByName(t, g, "Jobs_Run").Description; !strings.Contains(d, "returns at once") {
		t.Errorf("description %q should say the call does not wait", d)
	}

	// The call's deadline ends the wait before the hour asked for.
	_, g2, url2 := startJobs(t, lrotest.Options{}, &gateway.Options{Calls: gateway.CallOptions{Timeout: 300 * time.Millisecond, OperationWait: time.Hour}})
	res = call(t, connect(t, url2, "2025-11-25"), "Jobs_Run", map[string]any{"never": true})
	if got := structured(t, g2, "Jobs_Run", res); res.IsError || got["operation"] == nil {
		t.Errorf("the call deadline should end the wait with the handle, got %v", got)
	}
}

func TestOperationCancellation(t *testing.T) {
	for _, cancelOp := range []bool{false, true} {
		srv, g, url := startJobs(t, lrotest.Options{}, &gateway.Options{Calls: gateway.CallOptions{OperationCancel: cancelOp}})
		cs := connect(t, url, "2025-11-25")
		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "Jobs_Run", Arguments: map[string]any{"never": true}})
			errc <- err
		}()
		testkit.WaitFor(t, "the operation to be polled", func() bool { return srv.Polls() > 0 })
		cancel()
		if err := <-errc; !errors.Is(err, context.Canceled) {
			t.Fatalf("cancelled call: %v", err)
		}
		// Shutdown waits for the call in flight, so whatever the gateway
		// does after the cancellation has happened when it returns.
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		if err := g.Shutdown(sctx); err != nil {
			t.Fatal(err)
		}
		scancel()
		got := srv.Cancelled()
		if want := srv.Jobs(); cancelOp && !slices.Equal(got, want) || !cancelOp && len(got) != 0 {
			t.Errorf("OperationCancel=%v: CancelOperation called for %v (jobs %v)", cancelOp, got, want)
		}
	}
}

// A WaitOperation that comes back at once with nothing new must not make
// the gateway call it in a busy loop: it backs off as polling does.
func TestOperationEagerWaitBacksOff(t *testing.T) {
	srv, _, url := startJobs(t, lrotest.Options{EagerWait: true}, &gateway.Options{Calls: gateway.CallOptions{OperationWait: 500 * time.Millisecond}})
	res := call(t, connect(t, url, "2025-11-25"), "Jobs_Run", map[string]any{"never": true})
	if res.IsError || !strings.Contains(allText(res), "has not finished") {
		t.Fatalf("want the handle: %s", allText(res))
	}
	// Backing off from 100ms by 1.5 fits about five calls in 500ms.
	if n := srv.Waits(); n == 0 || n > 20 {
		t.Errorf("%d WaitOperation calls in 500ms", n)
	}
}
