package loadtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// BuildTags are the build tags the release binary is built with (the
// Dockerfile's, the Makefile's): grpcnotrace leaves out grpc's
// golang.org/x/net/trace, whose html/template reaches reflect's method
// lookup and so keeps the linker from dropping any exported method
// (docs/performance.md, "Goals").
const BuildTags = "grpcnotrace"

// ReleaseFlags are the Dockerfile's flags of go build (less its version
// stamps), which also builds with CGO_ENABLED=0: the binary measured is
// the one that ships. A plain go build links the C library for the
// resolver, and reads ~1.5 MiB more at rest.
var ReleaseFlags = []string{"-tags", BuildTags, "-trimpath", "-ldflags", "-s -w"}

// Build compiles cmd/gateway of the checkout at repo (the directory holding
// the gateway's go.mod) into dir as a release is built (ReleaseFlags), and
// returns the binary's path.
func Build(ctx context.Context, repo, dir string) (string, error) {
	bin := filepath.Join(dir, "gateway")
	args := append(append([]string{"build", "-C", repo}, ReleaseFlags...), "-o", bin, "./cmd/gateway")
	cmd := exec.CommandContext(ctx, "go", args...)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("loadtest: go build ./cmd/gateway: %w\n%s", err, out)
	}
	return bin, nil
}

// RepoRoot finds the gateway's module root above the working directory
// (the loadtest module sits one level below it).
func RepoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("loadtest: %w", err)
	}
	for d := wd; ; d = filepath.Dir(d) {
		raw, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && strings.Contains(string(raw), "module github.com/grpc-mcp-gateway/gateway\n") {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("loadtest: no gateway go.mod above %s", wd)
		}
	}
}

// Gateway is a running gateway process.
type Gateway struct {
	// Addr is the HOST:PORT of --listen; Base is http://Addr.
	Addr, Base string
	cmd        *exec.Cmd
	exited     chan struct{}
	stderr     *tailBuffer
	client     *http.Client
}

// FreeAddr returns a loopback address nothing listens on at the moment.
func FreeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("loadtest: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// Start runs bin with args and --listen on a free loopback port, and
// waits until /readyz answers 200 (at most a minute).
func Start(ctx context.Context, bin string, args ...string) (*Gateway, error) {
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	g := &Gateway{Addr: addr, Base: "http://" + addr, exited: make(chan struct{}), stderr: &tailBuffer{max: 64 << 10},
		client: &http.Client{Timeout: 5 * time.Second}}
	g.cmd = exec.Command(bin, append([]string{"--listen", addr}, args...)...)
	g.cmd.Stderr = g.stderr
	if err := g.cmd.Start(); err != nil {
		return nil, fmt.Errorf("loadtest: start %s: %w", bin, err)
	}
	go func() { _ = g.cmd.Wait(); close(g.exited) }()
	deadline := time.Now().Add(time.Minute)
	for {
		if st, _ := g.Ready(); st == http.StatusOK {
			return g, nil
		}
		select {
		case <-g.exited:
			return nil, fmt.Errorf("loadtest: the gateway exited before it was ready: %s", g.stderr)
		case <-ctx.Done():
			g.Stop()
			return nil, ctx.Err()
		default:
		}
		if time.Now().After(deadline) {
			g.Stop()
			return nil, fmt.Errorf("loadtest: the gateway was not ready within a minute: %s", g.stderr)
		}
		// Polling another process: there is no event to wait on.
		time.Sleep(20 * time.Millisecond)
	}
}

// Ready returns /readyz's status and body.
func (g *Gateway) Ready() (int, string) {
	resp, err := g.client.Get(g.Base + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Stop sends SIGTERM and waits for the process to end (SIGKILL after 20s).
func (g *Gateway) Stop() {
	_ = g.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-g.exited:
	case <-time.After(20 * time.Second):
		_ = g.cmd.Process.Kill()
		<-g.exited
	}
}

// Kill ends the process at once, as a crash would.
func (g *Gateway) Kill() {
	_ = g.cmd.Process.Kill()
	<-g.exited
}

// PID is the process's id.
func (g *Gateway) PID() int { return g.cmd.Process.Pid }

// RSS is the process's resident memory in bytes (VmRSS).
func (g *Gateway) RSS() (int64, error) { return procRSS(g.PID()) }

// CPU is the process's user and system CPU time so far.
func (g *Gateway) CPU() (time.Duration, error) { return procCPU(g.PID()) }

// Metric sums the samples of the Prometheus series name (with every label
// set) that /metrics shows; labels, when not empty, must appear in the
// sample's label set (e.g. `transport="websocket"`).
func (g *Gateway) Metric(name, labels string) (float64, error) {
	resp, err := g.client.Get(g.Base + "/metrics")
	if err != nil {
		return 0, fmt.Errorf("loadtest: /metrics: %w", err)
	}
	defer resp.Body.Close()
	total, found := 0.0, false
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '{') || (labels != "" && !strings.Contains(rest, labels)) {
			continue
		}
		f := strings.Fields(rest)
		v, err := strconv.ParseFloat(f[len(f)-1], 64)
		if err != nil {
			return 0, fmt.Errorf("loadtest: /metrics: %q: %w", line, err)
		}
		total, found = total+v, true
	}
	if err := sc.Err(); err != nil {
		return 0, fmt.Errorf("loadtest: /metrics: %w", err)
	}
	if !found {
		return 0, fmt.Errorf("loadtest: /metrics has no %s{%s}", name, labels)
	}
	return total, nil
}

func procRSS(pid int) (int64, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, fmt.Errorf("loadtest: %w", err)
	}
	for line := range strings.SplitSeq(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			if err != nil {
				return 0, fmt.Errorf("loadtest: VmRSS %q: %w", rest, err)
			}
			return kb << 10, nil
		}
	}
	return 0, errors.New("loadtest: no VmRSS in /proc/PID/status")
}

// procCPU reads utime+stime (fields 14 and 15 of /proc/PID/stat, in
// clock ticks of 1/100 s).
func procCPU(pid int) (time.Duration, error) {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, fmt.Errorf("loadtest: %w", err)
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("loadtest: /proc/%d/stat: %w", pid, err)
	}
	return time.Duration(u+st) * 10 * time.Millisecond, nil
}

// LoadAverage is the first figure of /proc/loadavg, to record how busy
// the machine was.
func LoadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(raw))[0]
}

// Cores is how many CPUs this process may use.
func Cores() int { return runtime.NumCPU() }

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	mu  sync.Mutex
	max int
	b   []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// External is a gateway (or a load balancer in front of gateways) that
// this package did not start, at addr: a target for Background and Run's
// clients. Its process methods (RSS, CPU, Stop) must not be called.
func External(addr string) *Gateway {
	return &Gateway{Addr: addr, Base: "http://" + addr, client: &http.Client{Timeout: 5 * time.Second}}
}
