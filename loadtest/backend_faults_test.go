package loadtest_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
	"github.com/grpc-mcp-gateway/gateway/loadtest"
)

// callTimeout is the gateway's --call-timeout in the fault tests: a call
// the backend never answers must end with an error by then.
const callTimeout = 2 * time.Second

// checkCleanErrors fails the test when a failed operation is anything but
// an MCP answer saying so (a tool error or a JSON-RPC error): a broken
// session, a failed HTTP exchange or a call left hanging past the
// gateway's deadline would be the gateway's fault, not the backend's.
func checkCleanErrors(t *testing.T, outcomes []loadtest.Outcome, limit time.Duration) {
	t.Helper()
	for _, o := range outcomes {
		var rpc *loadtest.RPCError
		if o.Err != nil && !errors.As(o.Err, &rpc) {
			t.Errorf("an operation failed without an MCP answer after %v: %v", o.Dur, o.Err)
			return
		}
		if o.Dur > limit {
			t.Errorf("an operation took %v (limit %v): %v", o.Dur, limit, o.Err)
			return
		}
	}
}

// faultLoad is a fault test's gateway in front of backend (errors logged
// only, --call-timeout callTimeout), the number of its goroutines before
// any load, and a load of unary calls on sessions sessions (ws of them
// WebSocket), steady (steady calls served) when it returns. The load
// stops when the test ends.
func faultLoad(t *testing.T, backend string, sessions, ws, steady int) (*loadtest.Gateway, float64, *loadtest.Background) {
	t.Helper()
	g := startGateway(t, "--backend", backend, "--log-level", "error", "--call-timeout", callTimeout.String())
	base, err := g.Metric("go_goroutines", "")
	if err != nil {
		t.Fatal(err)
	}
	bg, err := loadtest.StartBackground(t.Context(), g, sessions, ws, loadtest.Unary, 3*callTimeout)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bg.Stop() })
	if !bg.WaitFor(15*time.Second, func(o []loadtest.Outcome) bool { return loadtest.Count(o, false) >= steady }) {
		t.Fatalf("no steady load: %d calls served, want %d", loadtest.Count(bg.Outcomes(), false), steady)
	}
	return g, base, bg
}

// TestBackendKilledAndRestarted kills the backend process (SIGKILL, as a
// crash) under a load of unary calls on 8 sessions (half WebSocket), then
// starts it again on the same address. While it is down, calls fail with
// a tool error naming UNAVAILABLE, sessions stay open and /readyz
// answers 503 naming the backend's connection state; once it is back,
// calls succeed again within recoveryLimit and /readyz answers 200.
// After the load the gateway's goroutines return to their baseline.
func TestBackendKilledAndRestarted(t *testing.T) {
	const recoveryLimit = 10 * time.Second
	addr := testkit.FreeAddr(t)
	z := startZoo(t, addr)
	g, base, bg := faultLoad(t, addr, 8, 4, 200)

	killed := time.Now()
	z.kill()
	if !bg.WaitFor(10*time.Second, func(o []loadtest.Outcome) bool { return loadtest.Count(loadtest.Since(o, killed), true) >= 20 }) {
		t.Fatal("no call failed in the 10 s after the backend was killed")
	}
	body := waitReady(t, g, 503, 10*time.Second)
	if !strings.Contains(body, `"ready":false`) {
		t.Errorf("/readyz while the backend is down: %s", body)
	}
	var sample error
	for _, o := range loadtest.Since(bg.Outcomes(), killed) {
		if o.Err != nil {
			sample = o.Err
		}
	}
	if !strings.Contains(sample.Error(), "UNAVAILABLE") {
		t.Errorf("a call while the backend is down: %v (want a tool error naming UNAVAILABLE)", sample)
	}

	restarted := time.Now()
	startZoo(t, addr)
	recovered := recoveredAfter(t, bg, restarted, recoveryLimit)
	waitReady(t, g, 200, recoveryLimit)
	outcomes := bg.Stop()
	checkCleanErrors(t, outcomes, callTimeout+time.Second)
	down := loadtest.Since(outcomes, killed)
	t.Logf("backend down %v: %d calls failed (tool error UNAVAILABLE), %d succeeded in that time; calls served again %v after the restart",
		restarted.Sub(killed).Round(time.Millisecond), loadtest.Count(down, true), loadtest.Count(loadtest.Since(outcomes, killed), false)-loadtest.Count(loadtest.Since(outcomes, restarted), false), recovered.Round(time.Millisecond))
	if _, err := g.WaitGoroutines(base, 10*time.Second); err != nil {
		t.Error(err)
	}
}

// TestBackendLongOutage keeps the backend down for 17 s under load, long
// enough for grpc-go's reconnect backoff (1 s growing 1.6x a time) to
// reach 10 s between attempts, then starts it again: calls must be served
// within 7 s, the gateway's cap on that backoff (5 s, jittered by 20%)
// plus margin. Under grpc-go's own cap of 120 s the wait after an
// outage of minutes was up to two minutes.
func TestBackendLongOutage(t *testing.T) {
	const recoveryLimit = 7 * time.Second
	addr := testkit.FreeAddr(t)
	z := startZoo(t, addr)
	_, _, bg := faultLoad(t, addr, 2, 1, 50)
	z.kill()
	time.Sleep(17 * time.Second) // the outage's length is what is tested
	restarted := time.Now()
	startZoo(t, addr)
	rec := recoveredAfter(t, bg, restarted, recoveryLimit)
	checkCleanErrors(t, bg.Stop(), callTimeout+time.Second)
	t.Logf("after a 17 s outage, calls served again %v after the backend's restart", rec.Round(time.Millisecond))
}
