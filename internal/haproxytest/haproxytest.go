// Package haproxytest runs a real HAProxy (Debian's package, which
// `make test` installs when missing) in front of gateway replicas for the
// fleet tests: the deployment of docs/transports.md, "A fleet", balancing
// round-robin with no stickiness, stopped when the test ends.
package haproxytest

import (
	"bytes"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Start runs HAProxy on a free loopback port in front of replicas (each
// HOST:PORT), and returns its base URL (http://127.0.0.1:PORT) once it
// has answered /healthz from every replica. Each answer names the replica
// that served it in the X-Served-By header (g0, g1, ... in replicas'
// order).
func Start(t testing.TB, replicas []string) string {
	t.Helper()
	haproxy, err := exec.LookPath("haproxy")
	if err != nil {
		t.Fatal("haproxy is not installed (make test installs it: apt-get install haproxy)")
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := lis.Addr().String()
	lis.Close()
	var servers strings.Builder
	for i, r := range replicas {
		fmt.Fprintf(&servers, "  server g%d %s check inter 200ms fall 1 rise 1\n", i, r)
	}
	cfg := fmt.Sprintf(`global
  maxconn 2048
defaults
  mode http
  timeout connect 2s
  timeout client 60s
  timeout server 60s
  timeout tunnel 60s
  retries 3
  option redispatch 1
  # A new server connection per request: a replica that died leaves no
  # pooled connection behind, so the next request meets a refused
  # connection, which HAProxy retries on another replica.
  option http-server-close
frontend mcp
  bind %s
  default_backend gateways
backend gateways
  balance roundrobin
  option httpchk GET /healthz
  http-response set-header X-Served-By %%[srv_name]
%s`, addr, servers.String())
	cfgPath := filepath.Join(t.TempDir(), "haproxy.cfg")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	var out lockedBuffer
	cmd := exec.Command(haproxy, "-db", "-f", cfgPath)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("haproxy:\n%s", out.String())
		}
	})
	base := "http://" + addr
	seen := map[string]bool{}
	// Polling another process, which signals nothing when it is ready.
	for deadline := time.Now().Add(20 * time.Second); len(seen) < len(replicas); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("HAProxy did not reach all %d replicas within 20s (saw %v)", len(replicas), seen)
		}
		resp, err := http.Get(base + "/healthz")
		if err != nil {
			continue
		}
		resp.Body.Close()
		if s := resp.Header.Get("X-Served-By"); s != "" && resp.StatusCode == http.StatusOK {
			seen[s] = true
		}
	}
	return base
}

// lockedBuffer is HAProxy's output, written by exec's copying goroutine
// and read when a test fails.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
