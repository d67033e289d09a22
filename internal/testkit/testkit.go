// Package testkit holds the helpers the module's tests share, in one
// package so that every test uses the same ones: the gateway binary,
// built once per test run and shared by every test package; free
// loopback ports; a gateway subprocess started and stopped with its test;
// a raw Streamable HTTP client for the requests the official SDKs will
// not send (malformed ones, a chosen header, a replayed session); the
// official SDK connected at a chosen revision, and over WebSocket; and
// WaitFor, WaitWithin, Poll and WaitReady, to wait on what a test can
// observe (a gateway subprocess's /readyz among them) instead of
// sleeping.
//
// It is imported only by tests, so the official MCP SDK it uses never
// reaches the binary. Of this module it imports nothing, so the internal
// tests of any package (gateway/mcp's among them) may use it without an
// import cycle; a helper that needs the gateway's own packages belongs
// with the tests that use it, not here.
package testkit

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// FreePort returns a loopback TCP port nothing listens on right now.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// FreeAddr is FreePort as HOST:PORT.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", FreePort(t))
}

// ModuleRoot is the directory of the gateway's go.mod.
func ModuleRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// program is a binary of this module, built at most once per process.
type program struct {
	once sync.Once
	path string
	err  error
}

func (p *program) build(pkg, name string) (string, error) {
	p.once.Do(func() { p.path, p.err = build(pkg, name) })
	return p.path, p.err
}

var gatewayProgram, zooProgram program

// GatewayBinary returns the path of the gateway binary (./cmd/gateway),
// failing the test when it does not build.
func GatewayBinary(t testing.TB) string {
	t.Helper()
	bin, err := BuildGateway()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// BuildGateway is GatewayBinary for a TestMain. It builds once per
// process, and a binary is kept (in the system's temporary directory)
// under the hash of every compiled package it links, so the test
// packages of one run, and later runs of unchanged code, link it once.
func BuildGateway() (string, error) {
	return gatewayProgram.build("./cmd/gateway", "gateway")
}

// ZooBinary returns the path of the zoo example backend's binary
// (./examples/zoo, gRPC with reflection), built as GatewayBinary is, for
// a test that runs the backend in a process of its own.
func ZooBinary(t testing.TB) string {
	t.Helper()
	bin, err := BuildZoo()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// BuildZoo is ZooBinary for a TestMain.
func BuildZoo() (string, error) {
	return zooProgram.build("./examples/zoo", "zoo")
}

// keep is how long a built binary nobody used stays in the cache.
const keep = 6 * time.Hour

func build(pkg, name string) (string, error) {
	root := ModuleRoot()
	// The compiled archive of each package linked, by content: any change
	// to the code, its embedded files or the toolchain changes one.
	list := exec.Command("go", "list", "-export", "-deps", "-f", "{{.ImportPath}} {{.Export}}", pkg)
	list.Dir = root
	var stderr bytes.Buffer
	list.Stderr = &stderr
	out, err := list.Output()
	if err != nil {
		return "", fmt.Errorf("testkit: go list %s: %w\n%s", pkg, err, stderr.Bytes())
	}
	sum := sha256.Sum256(out)
	cache := filepath.Join(os.TempDir(), "grpc-mcp-gateway-testkit")
	dir := filepath.Join(cache, name+"-"+hex.EncodeToString(sum[:12]))
	bin := filepath.Join(dir, name)
	now := time.Now()
	if _, err := os.Stat(bin); err == nil {
		os.Chtimes(dir, now, now) // in use: keep it
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("testkit: %w", err)
	}
	// Another test process may build the same binary at the same time:
	// each links to a file of its own and renames it into place.
	tmp, err := os.CreateTemp(dir, name+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("testkit: %w", err)
	}
	tmp.Close()
	cmd := exec.Command("go", "build", "-o", tmp.Name(), pkg)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		os.Remove(tmp.Name())
		return "", fmt.Errorf("testkit: go build %s: %w\n%s", pkg, err, out)
	}
	if err := os.Rename(tmp.Name(), bin); err != nil {
		return "", fmt.Errorf("testkit: %w", err)
	}
	prune(cache, dir, now)
	return bin, nil
}

// prune removes the binaries of older code nobody has used for a while.
func prune(cache, current string, now time.Time) {
	entries, _ := os.ReadDir(cache)
	for _, e := range entries {
		p := filepath.Join(cache, e.Name())
		if info, err := e.Info(); err == nil && p != current && now.Sub(info.ModTime()) > keep {
			os.RemoveAll(p)
		}
	}
}

// Gateway is the gateway binary running in a subprocess, serving HTTP.
type Gateway struct {
	Cmd *exec.Cmd
	// Base is http://HOST:PORT of the MCP endpoint it announced.
	Base string
	// Exited receives the exit error once the process has ended (once).
	Exited chan error
	// Banner is what it wrote to stderr up to the announcement.
	Banner string
	rest   SyncBuffer // the rest of stderr
}

// announcement is the line the gateway logs when its MCP endpoint serves.
var announcement = regexp.MustCompile(`MCP \(Streamable HTTP\) at (http://\S+)/mcp`)

// StartGateway runs bin (GatewayBinary) with args, which should name a
// --listen address (127.0.0.1:0 picks a free port), and returns once it
// has announced its MCP endpoint. The process is killed when the test
// ends; its stderr is logged if the test failed.
func StartGateway(t testing.TB, bin string, args ...string) *Gateway {
	t.Helper()
	cmd := exec.Command(bin, args...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	g := &Gateway{Cmd: cmd, Exited: make(chan error, 1)}
	var banner strings.Builder
	lines := bufio.NewScanner(stderr)
	for g.Base == "" && lines.Scan() {
		banner.WriteString(lines.Text() + "\n")
		if m := announcement.FindStringSubmatch(lines.Text()); m != nil {
			g.Base = m[1]
		}
	}
	g.Banner = banner.String()
	logsDone := make(chan struct{})
	go func() {
		_, _ = io.Copy(&g.rest, stderr)
		close(logsDone)
	}()
	go func() {
		<-logsDone
		g.Exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		if t.Failed() {
			t.Logf("gateway stderr:\n%s%s", g.Banner, g.rest.String())
		}
	})
	if g.Base == "" {
		t.Fatalf("the gateway announced no MCP endpoint:\n%s", g.Banner)
	}
	return g
}

// Stop asks the gateway to shut down (SIGTERM), as an orchestrator does,
// and waits until it has.
func (g *Gateway) Stop() error {
	_ = g.Cmd.Process.Signal(syscall.SIGTERM)
	return <-g.Exited
}

// Server is what ServeLoopback serves: a *grpc.Server, or anything else
// that serves a listener until stopped (testkit imports no gRPC, so that
// the MCP layer's tests may use it).
type Server interface {
	Serve(net.Listener) error
	Stop()
}

// ServeLoopback serves s on a loopback port until the test ends, and
// returns its address.
func ServeLoopback(t testing.TB, s Server) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go func() { _ = s.Serve(lis) }()
	t.Cleanup(s.Stop)
	return lis.Addr().String()
}
