package gateway_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/telemetry"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// blackhole forwards TCP connections to a backend until drop is set;
// then it reads and discards every byte both ways and closes nothing,
// which is what a half-open path looks like from either end.
type blackhole struct {
	addr  string
	drop  atomic.Bool
	mu    sync.Mutex
	conns []net.Conn
	wg    sync.WaitGroup
}

func startBlackhole(t *testing.T, backend string) *blackhole {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	h := &blackhole{addr: lis.Addr().String()}
	h.wg.Go(func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", backend)
			if err != nil {
				c.Close()
				continue
			}
			h.mu.Lock()
			h.conns = append(h.conns, c, up)
			h.mu.Unlock()
			h.wg.Go(func() { h.pipe(up, c) })
			h.wg.Go(func() { h.pipe(c, up) })
		}
	})
	t.Cleanup(func() {
		lis.Close()
		h.closeAll()
		h.wg.Wait()
	})
	return h
}

// closeAll closes the connections made so far.
func (h *blackhole) closeAll() {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range h.conns {
		c.Close()
	}
	h.conns = nil
}

func (h *blackhole) pipe(dst io.Writer, src io.Reader) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !h.drop.Load() {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// TestReadyzUnansweredBackend: a backend whose connection stays open
// but carries nothing (half-open) keeps its connection READY, so only
// asking it can tell. After a call times out, the gateway's health
// check on the connection gets no answer: /readyz says the backend is
// unanswered and not ready, while its connection state still reads
// READY; once bytes flow again a later check is answered and the
// backend is ready again once the broken connection is replaced. The
// backend_unanswered gauge says the same as /readyz throughout: 0, then
// 1 while the backend does not answer, then 0.
func TestReadyzUnansweredBackend(t *testing.T) {
	b := startBackend(t)
	hole := startBlackhole(t, b.addr)
	metrics := telemetry.NewMetrics()
	g, base := newGateway(t, []gateway.Backend{dialBackend(t, "zoo", hole.addr)}, &gateway.Options{
		Calls: gateway.CallOptions{Timeout: 300 * time.Millisecond}, Telemetry: gateway.TelemetryOptions{Metrics: metrics}})
	unanswered := func() float64 {
		return metricValue(t, metrics, "grpc_mcp_gateway_backend_unanswered", map[string]string{"backend": "zoo"})
	}
	if !strings.Contains(scrapeMetrics(t, metrics), `grpc_mcp_gateway_backend_unanswered{backend="zoo"} 0`) {
		t.Error("no backend_unanswered series at 0 for the backend before any fault")
	}
	cs := connect(t, base+"/mcp", "2025-11-25")
	if res := call(t, cs, "ZooService_GetAnimal", map[string]any{"id": "leo"}); res.IsError {
		t.Fatalf("a call before the fault failed: %s", text(t, res))
	}
	if r := g.Ready(); !r.Ready {
		t.Fatalf("not ready before the fault: %+v", r)
	}

	hole.drop.Store(true)
	res := call(t, cs, "ZooService_GetAnimal", map[string]any{"id": "leo"})
	if !res.IsError || !strings.Contains(text(t, res), "DEADLINE_EXCEEDED") {
		t.Fatalf("a call on the half-open path: %v %s", res.IsError, text(t, res))
	}
	testkit.WaitFor(t, "/readyz to report the backend unanswered", func() bool {
		return g.Ready().Backends["zoo"].Unanswered != ""
	})
	r := g.Ready()
	if st := r.Backends["zoo"]; r.Ready || st.Ready || st.State != "READY" || !strings.Contains(st.Unanswered, "no health check") {
		t.Errorf("readiness of the half-open backend: %+v (want not ready, the connection READY, the reason given)", r)
	}
	if v := unanswered(); v != 1 {
		t.Errorf("backend_unanswered while /readyz reports it unanswered: %v, want 1", v)
	}

	// The dropped bytes left both ends of the connection out of step for
	// good; the middlebox finally closes it, and bytes flow on the next.
	hole.drop.Store(false)
	hole.closeAll()
	testkit.WaitFor(t, "the backend to be ready again", func() bool { return g.Ready().Ready })
	if st := g.Ready().Backends["zoo"]; st.Unanswered != "" {
		t.Errorf("ready, but still unanswered: %+v", st)
	}
	if v := unanswered(); v != 0 {
		t.Errorf("backend_unanswered once the backend answers again: %v, want 0", v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": "leo"}}); err != nil || res.IsError {
		t.Errorf("a call once the backend answers again: %v %v", err, res)
	}
}

// scrapeMetrics is what Prometheus reads from m's handler.
func scrapeMetrics(t *testing.T, m *telemetry.Metrics) string {
	t.Helper()
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	if rec.Code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", rec.Code)
	}
	return rec.Body.String()
}
