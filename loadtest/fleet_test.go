package loadtest_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/haproxytest"
	"github.com/grpc-mcp-gateway/gateway/internal/redistest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
	"github.com/grpc-mcp-gateway/gateway/loadtest"
)

// fleet is replicas gateway processes sharing a Redis (--state) and a
// session secret, behind HAProxy balancing round-robin without
// stickiness: the deployment of docs/transports.md, "A fleet".
type fleet struct {
	replicas []*loadtest.Gateway
	lb       *loadtest.Gateway // HAProxy's frontend, as a gateway address (Base, Addr)
}

// sessionSecret writes a fresh session secret file into dir.
func sessionSecret(t *testing.T, dir string) string {
	t.Helper()
	b := make([]byte, 48)
	rand.Read(b)
	path := filepath.Join(dir, "session-secret")
	if err := os.WriteFile(path, []byte(hex.EncodeToString(b)), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// startFleet starts n replicas in front of backend with state as --state,
// and HAProxy in front of them; it returns once HAProxy has reached them
// all.
func startFleet(t *testing.T, n int, backend, state string) *fleet {
	t.Helper()
	secret := sessionSecret(t, t.TempDir())
	f := &fleet{}
	var addrs []string
	for range n {
		g := startGateway(t, "--backend", backend, "--session-secret-file", secret, "--state", state,
			"--max-result-bytes", "1024", "--log-level", "error", "--call-timeout", callTimeout.String())
		f.replicas = append(f.replicas, g)
		addrs = append(addrs, g.Addr)
	}
	f.lb = loadtest.External(strings.TrimPrefix(haproxytest.Start(t, addrs), "http://"))
	return f
}

// fleetStream is a server stream of about 4 s (8 messages, 500 ms apart).
var fleetStream = loadtest.Op{Name: "stream", Weight: 1, Do: func(ctx context.Context, c loadtest.Conn) error {
	_, err := c.Call(ctx, "tools/call", `{"name":"ZooService_WatchFeedings","arguments":{"count":8,"interval":"0.5s"},"_meta":{"progressToken":"p"}}`)
	return err
}}

// TestReplicaKilledUnderLoad runs three replicas behind HAProxy with
// server streams open on all of them (Streamable HTTP through HAProxy,
// and WebSockets, each pinned to the replica its upgrade reached) and
// unary calls, and kills one replica (SIGKILL). The clients of the killed
// replica's streams get an error at once (a cut answer, a closed
// WebSocket), none hangs; HAProxy takes the replica out within a health
// check or two, after which every new call succeeds on the others,
// including calls in the Streamable HTTP sessions opened before (their
// signed tokens are good on any replica). The survivors' goroutines
// return to their baseline after the load.
func TestReplicaKilledUnderLoad(t *testing.T) {
	const recoveryLimit = 5 * time.Second
	rd := redistest.Start(t, nil)
	z := startZoo(t, testkit.FreeAddr(t))
	f := startFleet(t, 3, z.addr, rd.URL())
	var bases []float64
	for _, g := range f.replicas {
		n, err := g.Metric("go_goroutines", "")
		if err != nil {
			t.Fatal(err)
		}
		bases = append(bases, n)
	}
	// 6 WebSockets straight to the replicas (two each; HAProxy's
	// round-robin would place them the same way) and 12 Streamable HTTP
	// sessions through HAProxy, each calling streams back to back.
	var wsStreams []*loadtest.Background
	for _, g := range f.replicas {
		bg, err := loadtest.StartBackground(t.Context(), g, 2, 2, fleetStream, 3*time.Second+8*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer bg.Stop()
		wsStreams = append(wsStreams, bg)
	}
	httpStreams, err := loadtest.StartBackground(t.Context(), f.lb, 12, 0, fleetStream, 12*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer httpStreams.Stop()
	unary, err := loadtest.StartBackground(t.Context(), f.lb, 8, 0, loadtest.Unary, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer unary.Stop()
	if !unary.WaitFor(10*time.Second, func(o []loadtest.Outcome) bool { return loadtest.Count(o, false) >= 100 }) ||
		!httpStreams.WaitFor(15*time.Second, func(o []loadtest.Outcome) bool { return loadtest.Count(o, false) >= 12 }) {
		t.Fatal("no steady load through HAProxy")
	}

	killed := time.Now()
	f.replicas[0].Kill()
	// The killed replica's WebSockets end at once.
	if !wsStreams[0].WaitFor(2*time.Second, func(o []loadtest.Outcome) bool { return loadtest.Count(loadtest.Since(o, killed), true) >= 2 }) {
		t.Error("the killed replica's WebSocket clients saw no error within 2 s")
	}
	rec := recoveredAfter(t, unary, killed, recoveryLimit)
	// Let every stream started before the kill end.
	streamsDone := time.Now().Add(5 * time.Second)
	if !httpStreams.WaitFor(15*time.Second, func(o []loadtest.Outcome) bool {
		return len(o) > 0 && o[len(o)-1].End.After(streamsDone) && loadtest.Count(loadtest.Since(o, streamsDone), true) == 0 && loadtest.Count(loadtest.Since(o, streamsDone), false) >= 12
	}) {
		after := loadtest.Since(httpStreams.Outcomes(), streamsDone)
		t.Fatalf("streams through HAProxy did not all succeed again: %d ok, %d failed", loadtest.Count(after, false), loadtest.Count(after, true))
	}
	unaryOut, streamOut := unary.Stop(), httpStreams.Stop()
	wsOut := wsStreams[0].Stop()
	for _, bg := range wsStreams[1:] {
		if out := bg.Stop(); loadtest.Count(out, true) > 0 {
			t.Errorf("WebSocket streams on a surviving replica failed: %d of %d", loadtest.Count(out, true), len(out))
		}
	}
	// Every error was prompt: no call waited for a deadline.
	for _, set := range []struct {
		name  string
		out   []loadtest.Outcome
		limit time.Duration
	}{{"unary", unaryOut, callTimeout + time.Second}, {"stream", streamOut, 6 * time.Second}, {"websocket stream", wsOut, 6 * time.Second}} {
		for _, o := range set.out {
			if o.Dur > set.limit {
				t.Errorf("a %s call took %v (limit %v): %v", set.name, o.Dur, set.limit, o.Err)
				break
			}
		}
	}
	var cut string
	for _, o := range loadtest.Since(streamOut, killed) {
		var rpc *loadtest.RPCError
		if o.Err != nil && !errors.As(o.Err, &rpc) {
			cut = o.Err.Error()
		}
	}
	var wsErr error
	for _, o := range loadtest.Since(wsOut, killed) {
		if o.Err != nil {
			wsErr = o.Err
			break
		}
	}
	t.Logf("replica killed: unary calls through HAProxy: %d failed (those in flight on it), every call served again %v after; streams through HAProxy: %d of %d cut (%.120s); the killed replica's WebSockets: closed (%.120v), the others' streams: none failed",
		loadtest.Count(loadtest.Since(unaryOut, killed), true), rec.Round(time.Millisecond),
		loadtest.Count(loadtest.Since(streamOut, killed), true), len(loadtest.Since(streamOut, killed)), cut, wsErr)
	for i, g := range f.replicas[1:] {
		if _, err := g.WaitGoroutines(bases[i+1], 10*time.Second); err != nil {
			t.Errorf("replica %d: %v", i+1, err)
		}
	}
}
