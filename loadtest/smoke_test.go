package loadtest_test

import (
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
	"github.com/grpc-mcp-gateway/gateway/loadtest"
)

// TestLoadSmoke runs a short mixed load through the harness, as `make
// bench-load` does at length: idle sessions on three transports, unary
// calls, server streams and cut results read back from 8 sessions at
// once. Nothing may fail, and once the clients are gone the gateway's
// goroutines return to their baseline (loadtest.Run checks it) and so
// does its heap in use, but for the results it keeps.
func TestLoadSmoke(t *testing.T) {
	addr := startZoo(t, testkit.FreeAddr(t)).addr
	g := startGateway(t, "--backend", addr, "--log-level", "warn", "--max-result-bytes", "1024")
	rep, err := loadtest.Run(t.Context(), g, loadtest.Mix{
		IdleHTTP: 20, IdleWS: 20, IdleSSE: 20, InFlight: 8, WSShare: 0.5,
		Ops:      []loadtest.Op{loadtest.Unary, loadtest.Stream, loadtest.Kept},
		Duration: 2 * time.Second, MaxOps: 2000,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Log("\n" + loadtest.TableHeader + "\n" + rep.Row("smoke"))
	n, errs := rep.Total()
	if errs != 0 || n == 0 {
		t.Fatalf("%d operations, %d failed: %+v", n, errs, rep.Ops)
	}
	for _, o := range rep.Ops {
		if o.N == 0 {
			t.Errorf("no %s operation ran", o.Name)
		}
	}
	// An idle session holds one goroutine (its connection's reader); the
	// baseline's own come and go by a few.
	if rep.GoroutinesIdle-rep.GoroutinesBase < 45 {
		t.Errorf("60 idle sessions added %v goroutines: the idle sessions are not open", rep.GoroutinesIdle-rep.GoroutinesBase)
	}
	// Live memory returns too: what is left is the kept results (the
	// cut ones, about 2 KB each, kept for --result-ttl).
	if grew := (rep.HeapAfter - rep.HeapBase) / (1 << 20); grew > 8 {
		t.Errorf("the heap in use grew by %.1f MiB over the load and stayed", grew)
	}
	if code, body := g.Ready(); code != 200 {
		t.Errorf("/readyz after the load: %d %s", code, body)
	}
}
