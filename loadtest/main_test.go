package loadtest_test

import (
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
	"github.com/grpc-mcp-gateway/gateway/loadtest"
)

// gatewayBin and zooBin are built once for every test (and shared with
// the other test packages of the run: testkit).
var gatewayBin, zooBin string

func TestMain(m *testing.M) {
	var err error
	gatewayBin, err = testkit.BuildGateway()
	if err == nil {
		zooBin, err = testkit.BuildZoo()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	if releaseDir != "" {
		os.RemoveAll(releaseDir)
	}
	os.Exit(code)
}

// startGateway runs the gateway binary with args until the test ends.
func startGateway(t *testing.T, args ...string) *loadtest.Gateway {
	t.Helper()
	g, err := loadtest.Start(t.Context(), gatewayBin, args...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(g.Stop)
	return g
}

// zooProcess is the zoo backend in a process of its own, so that it can
// be killed as a crash would.
type zooProcess struct {
	addr string
	cmd  *exec.Cmd
}

func startZoo(t *testing.T, addr string) *zooProcess {
	t.Helper()
	z := &zooProcess{addr: addr, cmd: zooCommand(addr)}
	if err := z.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = z.cmd.Process.Kill(); _ = z.cmd.Wait() })
	return z
}

func (z *zooProcess) kill() {
	_ = z.cmd.Process.Kill()
	_ = z.cmd.Wait()
}

// waitReady waits (at most d) until /readyz answers want, and returns its
// last body.
func waitReady(t *testing.T, g *loadtest.Gateway, want int, d time.Duration) string {
	t.Helper()
	code, body, ok := readyzWithin(g, d, func(code int, _ string) bool { return code == want })
	if !ok {
		t.Fatalf("/readyz did not answer %d within %v: %d %s", want, d, code, body)
	}
	return body
}

// readyzWithin polls g's /readyz (another process, which signals
// nothing) until want holds or within has passed, and returns the last
// answer.
func readyzWithin(g *loadtest.Gateway, within time.Duration, want func(code int, body string) bool) (code int, body string, ok bool) {
	ok = testkit.Poll(within, func() bool { code, body = g.Ready(); return want(code, body) })
	return code, body, ok
}

func zooCommand(addr string) *exec.Cmd { return exec.Command(zooBin, "-listen", addr) }
