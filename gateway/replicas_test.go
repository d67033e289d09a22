package gateway_test

import (
	"context"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
	"google.golang.org/grpc/reflection"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// replica is one zoo replica of a backend with several: it counts the
// calls it sees per method, can hold the first call whose request
// matches hold until its connection dies, and serves grpc.health.v1 so a
// test can turn it NOT_SERVING.
type replica struct {
	addr   string
	gs     *grpc.Server
	health *health.Server

	mu    sync.Mutex
	calls map[string]int
}

// holder holds one call, on whichever replica it lands: held receives
// the replica that has it.
type holder struct {
	match func(req any) bool
	taken atomic.Bool
	held  chan *replica
}

func startReplica(t *testing.T, lis net.Listener, h *holder) *replica {
	t.Helper()
	r := &replica{calls: map[string]int{}, health: health.NewServer()}
	count := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		r.mu.Lock()
		r.calls[info.FullMethod]++
		r.mu.Unlock()
		if h != nil && h.match(req) && h.taken.CompareAndSwap(false, true) {
			h.held <- r
			<-ctx.Done()
			return nil, ctx.Err()
		}
		return next(ctx, req)
	}
	r.gs = grpc.NewServer(grpc.UnaryInterceptor(count))
	zoo.Register(r.gs, zoo.NewServer())
	healthpb.RegisterHealthServer(r.gs, r.health)
	reflection.Register(r.gs)
	go func() { _ = r.gs.Serve(lis) }()
	t.Cleanup(r.gs.Stop)
	r.addr = lis.Addr().String()
	return r
}

func listenLoopback(t *testing.T) net.Listener {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return lis
}

func (r *replica) count(method string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls["/zoo.v1.ZooService/"+method]
}

// dialTarget connects to target as cmd/gateway does and closes the
// connection when the test ends.
func dialTarget(t *testing.T, name, target string, o backendconn.Options) gateway.Backend {
	t.Helper()
	conn, err := backendconn.Dial(target, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return gateway.Backend{Name: name, Address: target, Conn: conn}
}

// waitServing waits until /readyz reports want serving replicas of zoo.
func waitServing(t *testing.T, base string, resolved, serving int) {
	t.Helper()
	testkit.WaitFor(t, "replicas in /readyz", func() bool {
		_, r := readyz(t, base)
		rs := r.Backends["zoo"].Replicas
		return rs != nil && rs.Resolved == resolved && rs.Serving == serving
	})
}

func TestBackendOnUnixSocket(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ name, listen, target string }{
		{"unix absolute", filepath.Join(dir, "zoo.sock"), "unix://" + filepath.Join(dir, "zoo.sock")},
		{"unix-abstract", "@grpc-mcp-gateway-test-" + filepath.Base(dir), "unix-abstract:grpc-mcp-gateway-test-" + filepath.Base(dir)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lis, err := net.Listen("unix", tc.listen)
			if err != nil {
				t.Fatal(err)
			}
			r := startReplica(t, lis, nil)
			// No TLS settings: a unix socket is plaintext by default.
			_, base := newGateway(t, []gateway.Backend{dialTarget(t, "zoo", tc.target, backendconn.Options{})}, nil)
			cs := connect(t, base+"/mcp", "2025-11-25")
			res := call(t, cs, "ZooService_GetAnimal", map[string]any{"id": "leo"})
			if res.IsError || !strings.Contains(text(t, res), `"displayName":"Leo"`) {
				t.Fatalf("GetAnimal over %s: %s", tc.target, text(t, res))
			}
			if r.count("GetAnimal") != 1 {
				t.Errorf("the backend saw %d GetAnimal calls, want 1", r.count("GetAnimal"))
			}
		})
	}
}

// TestReplicasBalanced: a backend given as a list of two replicas gets
// both connected (/readyz says 2 of 2 serving) and each gets calls.
func TestReplicasBalanced(t *testing.T) {
	t.Parallel()
	a, b := startReplica(t, listenLoopback(t), nil), startReplica(t, listenLoopback(t), nil)
	_, base := newGateway(t, []gateway.Backend{dialTarget(t, "zoo", a.addr+","+b.addr, backendconn.Options{})}, nil)
	waitServing(t, base, 2, 2)
	cs := connect(t, base+"/mcp", "2025-11-25")
	for range 10 {
		if res := call(t, cs, "ZooService_GetAnimal", map[string]any{"id": "leo"}); res.IsError {
			t.Fatal(text(t, res))
		}
	}
	if a.count("GetAnimal") == 0 || b.count("GetAnimal") == 0 || a.count("GetAnimal")+b.count("GetAnimal") != 10 {
		t.Errorf("calls per replica: %d and %d, want both > 0, 10 in all", a.count("GetAnimal"), b.count("GetAnimal"))
	}
}

// TestPickFirstUsesOneReplica: --backend-lb pick_first sends every call
// to one replica.
func TestPickFirstUsesOneReplica(t *testing.T) {
	t.Parallel()
	a, b := startReplica(t, listenLoopback(t), nil), startReplica(t, listenLoopback(t), nil)
	_, base := newGateway(t, []gateway.Backend{dialTarget(t, "zoo", a.addr+","+b.addr, backendconn.Options{LB: backendconn.LBPickFirst})}, nil)
	waitServing(t, base, 2, 1)
	cs := connect(t, base+"/mcp", "2025-11-25")
	for range 6 {
		if res := call(t, cs, "ZooService_GetAnimal", map[string]any{"id": "leo"}); res.IsError {
			t.Fatal(text(t, res))
		}
	}
	if got := [2]int{a.count("GetAnimal"), b.count("GetAnimal")}; got != [2]int{6, 0} && got != [2]int{0, 6} {
		t.Errorf("calls per replica: %v, want all 6 on one", got)
	}
}

// TestReplicaKilled: a replica dies with a call to a safe method and one
// to an unsafe method in flight on it. The safe call is retried on the
// other replica and succeeds (and the retry is counted); the unsafe one
// reports UNAVAILABLE and is never sent again. Later calls all succeed.
func TestReplicaKilled(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, tool, method string
		args               map[string]any
		safe               bool
	}{
		{"safe", "ZooService_GetAnimal", "GetAnimal", map[string]any{"id": "leo"}, true},
		{"unsafe", "ZooService_CreateAnimal", "CreateAnimal", map[string]any{"animal": map[string]any{"displayName": "Zed", "species": "SPECIES_LION", "enclosureId": "savanna"}}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := &holder{held: make(chan *replica, 1), match: func(req any) bool {
				switch r := req.(type) {
				case *zoov1.GetAnimalRequest:
					return tc.safe && r.GetId() == "leo"
				case *zoov1.CreateAnimalRequest:
					return !tc.safe
				}
				return false
			}}
			a, b := startReplica(t, listenLoopback(t), h), startReplica(t, listenLoopback(t), h)
			metrics := telemetry.NewMetrics()
			_, base := newGateway(t, []gateway.Backend{dialTarget(t, "zoo", a.addr+","+b.addr, backendconn.Options{})}, &gateway.Options{Telemetry: gateway.TelemetryOptions{Metrics: metrics}})
			waitServing(t, base, 2, 2)
			cs := connect(t, base+"/mcp", "2025-11-25")

			done := make(chan *sdk.CallToolResult, 1)
			go func() {
				res, err := cs.CallTool(context.Background(), &sdk.CallToolParams{Name: tc.tool, Arguments: tc.args})
				if err != nil {
					t.Error(err)
				}
				done <- res
			}()
			var dying *replica
			select {
			case dying = <-h.held:
			case res := <-done:
				t.Fatalf("the call ended before reaching a replica: %+v", res)
			}
			other := a
			if dying == a {
				other = b
			}
			dying.gs.Stop()
			res := <-done
			if res == nil {
				return
			}
			retries := metricValue(t, metrics, "grpc_mcp_gateway_tool_call_retries_total", map[string]string{"tool": tc.tool, "backend": "zoo"})
			if tc.safe {
				if res.IsError {
					t.Fatalf("a safe call whose replica died failed: %s", text(t, res))
				}
				if other.count(tc.method) != 1 {
					t.Errorf("the surviving replica saw %d %s calls, want the retry (1)", other.count(tc.method), tc.method)
				}
				// 1, or 2 when the next attempt still picked the dying
				// replica before grpc-go saw its connection close.
				if retries < 1 || retries > 2 {
					t.Errorf("tool_call_retries_total = %v, want 1 or 2 (3 attempts at most)", retries)
				}
			} else {
				if !res.IsError || !strings.HasPrefix(text(t, res), "UNAVAILABLE") {
					t.Fatalf("an unsafe call whose replica died: want UNAVAILABLE, got %s", text(t, res))
				}
				if n := dying.count(tc.method) + other.count(tc.method); n != 1 {
					t.Errorf("the backend saw the unsafe call %d times, want exactly once", n)
				}
				if retries != 0 {
					t.Errorf("tool_call_retries_total = %v, want 0", retries)
				}
			}
			// Later calls go to the survivor and succeed.
			for range 4 {
				if res := call(t, cs, "ZooService_GetAnimal", map[string]any{"id": "leo"}); res.IsError {
					t.Fatalf("GetAnimal after the replica died: %s", text(t, res))
				}
			}
		})
	}
}

// metricValue reads one series of a counter or gauge from m's registry;
// 0 when the series does not exist.
func metricValue(t *testing.T, m *telemetry.Metrics, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := m.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
	series:
		for _, s := range mf.GetMetric() {
			for _, lp := range s.GetLabel() {
				if v, ok := labels[lp.GetName()]; ok && v != lp.GetValue() {
					continue series
				}
			}
			if s.GetCounter() != nil {
				return s.GetCounter().GetValue()
			}
			return s.GetGauge().GetValue()
		}
	}
	return 0
}

// TestReplicaNotServing: a replica whose grpc.health.v1 status turns
// NOT_SERVING gets no more calls, and /readyz shows one replica of two
// serving; when it serves again it gets calls again.
func TestReplicaNotServing(t *testing.T) {
	t.Parallel()
	a, b := startReplica(t, listenLoopback(t), nil), startReplica(t, listenLoopback(t), nil)
	metrics := telemetry.NewMetrics()
	_, base := newGateway(t, []gateway.Backend{dialTarget(t, "zoo", a.addr+","+b.addr, backendconn.Options{})}, &gateway.Options{Telemetry: gateway.TelemetryOptions{Metrics: metrics}})
	waitServing(t, base, 2, 2)
	cs := connect(t, base+"/mcp", "2025-11-25")

	b.health.SetServingStatus("", healthpb.HealthCheckResponse_NOT_SERVING)
	// The state to reach: one replica of two serving, the backend still
	// ready, the metric agreeing. Waited for as a whole, not checked the
	// moment the count first reads 1: health checking starts with the
	// first discovery, by a switch of the connection's policy that may
	// still be under way here, and until it is done the replaced policy
	// (no health checks) counts b as serving. (The switch once also let
	// the channel go CONNECTING here; TestHealthSwitchKeepsReady.)
	testkit.WaitFor(t, "one replica of two serving, the backend ready, the metric agreeing", func() bool {
		code, r := readyz(t, base)
		rs := r.Backends["zoo"].Replicas
		return code == 200 && r.Ready && rs != nil && rs.Resolved == 2 && rs.Serving == 1 &&
			metricValue(t, metrics, "grpc_mcp_gateway_backend_replicas", map[string]string{"backend": "zoo", "state": "serving"}) == 1 &&
			metricValue(t, metrics, "grpc_mcp_gateway_backend_replicas", map[string]string{"backend": "zoo", "state": "resolved"}) == 2
	})
	before := b.count("GetAnimal")
	for range 6 {
		if res := call(t, cs, "ZooService_GetAnimal", map[string]any{"id": "leo"}); res.IsError {
			t.Fatal(text(t, res))
		}
	}
	if got := b.count("GetAnimal"); got != before {
		t.Errorf("the NOT_SERVING replica got %d calls, want none", got-before)
	}

	b.health.SetServingStatus("", healthpb.HealthCheckResponse_SERVING)
	waitServing(t, base, 2, 2)
	for range 6 {
		call(t, cs, "ZooService_GetAnimal", map[string]any{"id": "leo"})
	}
	if b.count("GetAnimal") == before {
		t.Error("the replica serving again got no calls")
	}
}

// hugeBackend answers GetAnimal with a display name of n bytes.
func hugeBackend(t *testing.T, n int) string {
	t.Helper()
	huge := func(ctx context.Context, req any, info *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		if r, ok := req.(*zoov1.GetAnimalRequest); ok && r.GetId() == "huge" {
			return &zoov1.GetAnimalResponse{Animal: &zoov1.Animal{Id: "huge", DisplayName: strings.Repeat("x", n)}}, nil
		}
		return next(ctx, req)
	}
	gs := grpc.NewServer(grpc.UnaryInterceptor(huge), grpc.MaxSendMsgSize(64<<20))
	zoo.Register(gs, zoo.NewServer())
	reflection.Register(gs)
	return testkit.ServeLoopback(t, gs)
}

// TestResponseOverSizeLimit: a response of 5 MiB, over grpc-go's 4 MiB
// default, arrives under the gateway's default limit, and is a
// RESOURCE_EXHAUSTED tool error naming the limit when the limit is set
// below it.
func TestResponseOverSizeLimit(t *testing.T) {
	t.Parallel()
	addr := hugeBackend(t, 5<<20)
	for _, tc := range []struct {
		name  string
		limit int
		want  string
	}{
		{"default limit", 0, ""},
		{"4 MiB limit", 4 << 20, "RESOURCE_EXHAUSTED: the response is larger than the gateway's limit of 4194304 bytes per message from backend zoo"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, base := newGateway(t, []gateway.Backend{dialTarget(t, "zoo", addr, backendconn.Options{MaxRecvBytes: tc.limit})}, nil)
			cs := connect(t, base+"/mcp", "2025-11-25")
			// Megabytes of JSON take seconds under the race detector.
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": "huge"}})
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if res.IsError {
					t.Fatalf("a 5 MiB response under the default limit failed: %.300s", text(t, res))
				}
				return
			}
			if !res.IsError || !strings.HasPrefix(text(t, res), tc.want) || !strings.Contains(text(t, res), "Repeating the same call will not help") {
				t.Fatalf("got %.400s\nwant a tool error starting %q that says repeating will not help", text(t, res), tc.want)
			}
		})
	}
}
