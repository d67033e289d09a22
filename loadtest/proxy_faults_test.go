package loadtest_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
	"github.com/grpc-mcp-gateway/gateway/loadtest"
)

// faultProxy is a toxiproxy proxy, in this process, between the gateway
// and its backend at upstream.
func faultProxy(t *testing.T, upstream string) *toxiproxy.Proxy {
	t.Helper()
	srv := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(prometheus.NewRegistry()), zerolog.Nop())
	p := toxiproxy.NewProxy(srv, "backend", "127.0.0.1:0", upstream)
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Stop)
	return p
}

func addToxic(t *testing.T, p *toxiproxy.Proxy, js string) string {
	t.Helper()
	w, err := p.Toxics.AddToxicJson(strings.NewReader(js))
	if err != nil {
		t.Fatalf("toxic %s: %v", js, err)
	}
	return w.Name
}

func removeToxic(t *testing.T, p *toxiproxy.Proxy, name string) {
	t.Helper()
	if err := p.Toxics.RemoveToxic(context.Background(), name); err != nil {
		t.Fatal(err)
	}
}

// recoveredAfter waits (at most limit) until 50 operations in a row have
// succeeded since t and returns how long after t the first of them ended.
func recoveredAfter(t *testing.T, bg *loadtest.Background, since time.Time, limit time.Duration) time.Duration {
	t.Helper()
	var d time.Duration
	ok := bg.WaitFor(limit, func(o []loadtest.Outcome) bool {
		after := loadtest.Since(o, since)
		for i, x := range after {
			if x.Err == nil && loadtest.Count(after[i:], false) >= 50 && loadtest.Count(after[i:], true) == 0 {
				d = x.End.Sub(since)
				return true
			}
		}
		return false
	})
	if !ok {
		after := loadtest.Since(bg.Outcomes(), since)
		t.Fatalf("calls did not recover within %v: %d ok, %d failed since", limit, loadtest.Count(after, false), loadtest.Count(after, true))
	}
	return d
}

// TestBackendSlowedResetHalfOpen puts a real fault proxy (toxiproxy)
// between the gateway and the backend, under a load of unary calls on 8
// sessions (half WebSocket), and breaks the path three ways in turn:
//
//   - latency (+100 ms each way): every call still succeeds, slower by the
//     added latency; nothing fails;
//   - resets (every connection reset by peer): calls fail with a tool error
//     naming UNAVAILABLE, at once, not at the deadline; once the resets
//     stop, calls succeed again within recoveryLimit;
//   - half-open (bytes dropped, the connection left open): each call
//     ends with a tool error (DEADLINE_EXCEEDED) at --call-timeout, none
//     later; /readyz answers 503 naming the backend unanswered though its
//     connection is READY; once bytes flow again, calls succeed within
//     recoveryLimit and /readyz is 200 again.
//
// In every case the sessions stay open, /readyz answers, and the gateway's
// goroutines return to their baseline after the load.
func TestBackendSlowedResetHalfOpen(t *testing.T) {
	const recoveryLimit = 15 * time.Second
	z := startZoo(t, testkit.FreeAddr(t))
	p := faultProxy(t, z.addr)
	g, base, bg := faultLoad(t, p.Listen, 8, 4, 200)
	steady := func(since time.Time, n int) bool {
		return bg.WaitFor(15*time.Second, func(o []loadtest.Outcome) bool { return loadtest.Count(loadtest.Since(o, since), false) >= n })
	}

	t.Run("latency", func(t *testing.T) {
		name := addToxic(t, p, `{"name":"latency_down","type":"latency","stream":"downstream","attributes":{"latency":100}}`)
		up := addToxic(t, p, `{"name":"latency_up","type":"latency","stream":"upstream","attributes":{"latency":100}}`)
		// Calls already in flight did not pay the whole latency.
		from := time.Now().Add(300 * time.Millisecond)
		if !steady(from, 40) {
			t.Fatal("no calls through the slowed proxy")
		}
		removeToxic(t, p, name)
		removeToxic(t, p, up)
		slowed := loadtest.Since(bg.Outcomes(), from)
		var lat []time.Duration
		for _, o := range slowed {
			if o.Err != nil {
				t.Fatalf("a call failed with latency added: %v", o.Err)
			}
			lat = append(lat, o.Dur)
		}
		slices.Sort(lat)
		if p50 := loadtest.Percentile(lat, 0.5); p50 < 200*time.Millisecond || p50 > callTimeout {
			t.Errorf("p50 with 100 ms added each way: %v", p50)
		}
		t.Logf("latency: %d calls, p50 %v, p99 %v, none failed", len(lat), loadtest.Percentile(lat, 0.5).Round(time.Millisecond), loadtest.Percentile(lat, 0.99).Round(time.Millisecond))
	})

	t.Run("reset", func(t *testing.T) {
		start := time.Now()
		name := addToxic(t, p, `{"name":"reset","type":"reset_peer","stream":"upstream","attributes":{"timeout":0}}`)
		if !bg.WaitFor(10*time.Second, func(o []loadtest.Outcome) bool { return loadtest.Count(loadtest.Since(o, start), true) >= 20 }) {
			t.Fatal("no call failed while every connection is reset")
		}
		healed := time.Now()
		removeToxic(t, p, name)
		rec := recoveredAfter(t, bg, healed, recoveryLimit)
		failed := loadtest.Since(bg.Outcomes(), start)
		failed = failed[:len(failed)-len(loadtest.Since(failed, healed))]
		var sample string
		var slowest time.Duration
		for _, o := range failed {
			if o.Err != nil {
				sample = o.Err.Error()
				slowest = max(slowest, o.Dur)
			}
		}
		if !strings.Contains(sample, "UNAVAILABLE") {
			t.Errorf("a call while connections are reset: %s (want a tool error naming UNAVAILABLE)", sample)
		}
		t.Logf("resets for %v: %d calls failed (slowest in %v: %.100s), %d succeeded; served again %v after the resets stopped",
			healed.Sub(start).Round(time.Millisecond), loadtest.Count(failed, true), slowest.Round(time.Millisecond), sample, loadtest.Count(failed, false), rec.Round(time.Millisecond))
	})

	t.Run("half-open", func(t *testing.T) {
		start := time.Now()
		name := addToxic(t, p, `{"name":"blackhole","type":"timeout","stream":"downstream","attributes":{"timeout":0}}`)
		if !bg.WaitFor(10*time.Second, func(o []loadtest.Outcome) bool { return loadtest.Count(loadtest.Since(o, start), true) >= 8 }) {
			t.Fatal("no call failed while the connection drops every byte")
		}
		// The connection still looks READY; /readyz says the backend
		// answers nothing once a health check on it, asked after the
		// first call timed out, got no answer (5 s).
		code, body, ok := readyzWithin(g, 15*time.Second, func(code int, body string) bool {
			return code == 503 && strings.Contains(body, `"unanswered":"the connection is open but the backend answered no health check`)
		})
		if !ok {
			t.Errorf("/readyz while the backend answers nothing: %d %s (want 503 naming the backend unanswered)", code, body)
		}
		t.Logf("/readyz %v after the path went half-open: %d %.300s", time.Since(start).Round(100*time.Millisecond), code, body)
		healed := time.Now()
		removeToxic(t, p, name)
		rec := recoveredAfter(t, bg, healed, recoveryLimit)
		during := loadtest.Since(bg.Outcomes(), start)
		during = during[:len(during)-len(loadtest.Since(during, healed))]
		var sample string
		for _, o := range during {
			if o.Err != nil {
				sample = o.Err.Error()
			}
		}
		if !strings.Contains(sample, "DEADLINE_EXCEEDED") {
			t.Errorf("a call on a half-open connection: %s (want a tool error naming DEADLINE_EXCEEDED)", sample)
		}
		t.Logf("half-open for %v: %d calls failed at the %v deadline (%.100s); served again %v after bytes flowed again",
			healed.Sub(start).Round(time.Millisecond), loadtest.Count(during, true), callTimeout, sample, rec.Round(time.Millisecond))
	})

	outcomes := bg.Stop()
	checkCleanErrors(t, outcomes, callTimeout+time.Second)
	// A half-open backend is asked again every second until it answers.
	if code, body, ok := readyzWithin(g, 15*time.Second, func(code int, _ string) bool { return code == 200 }); !ok {
		t.Errorf("/readyz after the faults: %d %s", code, body)
	}
	if _, err := g.WaitGoroutines(base, 10*time.Second); err != nil {
		t.Error(err)
	}
}
