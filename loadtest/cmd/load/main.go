// Command load runs the gateway binary under the load that the capacity
// table in docs/performance.md reports, and prints that table in Markdown,
// ready to paste: `make bench-load`, or from loadtest/:
//
//	go run ./cmd/load                        # every scenario
//	go run ./cmd/load -run unary -duration 20s
//	go run ./cmd/load -run idle -idle 5000   # 5,000 sessions per transport
//
// Everything is on loopback: the zoo backend runs in this process, the
// gateway (built once from this checkout) in a subprocess whose memory and
// CPU are read from /proc, and the estate (for search) in another. The
// machine's load average is printed with each row: on a shared machine
// the figures move with it.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/loadtest"
)

func main() {
	run := flag.String("run", "binary,rest,idle,streams,unary,mix,accesslog,search", "scenarios to run, comma-separated")
	duration := flag.Duration("duration", 10*time.Second, "how long each timed row runs")
	idle := flag.Int("idle", 1000, "idle sessions per transport (Streamable HTTP GET streams, WebSockets, legacy SSE streams) in the idle and mix scenarios")
	streams := flag.Int("streams", 500, "open server streams in the streams scenario")
	inflight := flag.String("inflight", "1,8,32,128", "calls in flight for the unary rows")
	estateDir := flag.String("estate", "../estate", "the estate module, for the search scenario")
	flag.Parse()
	if err := mainErr(*run, *duration, *idle, *streams, *inflight, *estateDir); err != nil {
		fmt.Fprintln(os.Stderr, "load:", err)
		os.Exit(1)
	}
}

type runner struct {
	ctx     context.Context
	bin     string
	backend string
	d       time.Duration
}

func mainErr(run string, d time.Duration, idle, streams int, inflight, estateDir string) error {
	ctx := context.Background()
	raiseFileLimit()
	repo, err := loadtest.RepoRoot()
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "loadtest")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	bin, err := loadtest.Build(ctx, repo, tmp)
	if err != nil {
		return err
	}
	addr, stop, err := zoo.Listen(ctx, zoo.WithLogger(slog.New(slog.DiscardHandler)))
	if err != nil {
		return err
	}
	defer stop()
	r := &runner{ctx: ctx, bin: bin, backend: addr, d: d}

	st, _ := os.Stat(bin)
	commit, _ := exec.Command("git", "-C", repo, "rev-parse", "--short", "HEAD").Output()
	fmt.Printf("loadtest %s: commit %s, %d cores, gateway binary %.1f MB, %s each timed row, load average at start %s\n\n",
		time.Now().UTC().Format("2006-01-02 15:04Z"), strings.TrimSpace(string(commit)), loadtest.Cores(), float64(st.Size())/1e6, d, loadtest.LoadAverage())
	fmt.Println(loadtest.TableHeader)
	var notes []string
	for _, sc := range strings.Split(run, ",") {
		var note string
		var err error
		switch sc {
		case "binary":
			note, err = binarySize(repo, bin, tmp)
		case "rest":
			note, err = r.rest()
		case "idle":
			note, err = r.idle(idle)
		case "streams":
			note, err = r.streams(streams)
		case "unary":
			note, err = r.unary(inflight)
		case "mix":
			note, err = r.mix(idle)
		case "accesslog":
			note, err = r.accessLog()
		case "search":
			note, err = r.search(estateDir, tmp)
		default:
			err = fmt.Errorf("unknown scenario %q", sc)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", sc, err)
		}
		if note != "" {
			notes = append(notes, note)
		}
	}
	fmt.Println()
	for _, n := range notes {
		fmt.Println("- " + n)
	}
	return nil
}

// gateway starts the gateway in front of the zoo with the harness's
// usual flags and extra ones.
func (r *runner) gateway(extra ...string) (*loadtest.Gateway, error) {
	args := append([]string{"--backend", r.backend, "--log-level", "warn", "--max-result-bytes", "1024"}, extra...)
	return loadtest.Start(r.ctx, r.bin, args...)
}

// rest: the gateway ready, then left alone for two seconds.
func (r *runner) rest() (string, error) {
	g, err := r.gateway()
	if err != nil {
		return "", err
	}
	defer g.Stop()
	time.Sleep(2 * time.Second) // the figure is "at rest": time passing is the point
	rss, err := g.RSS()
	if err != nil {
		return "", err
	}
	// The heap first: each scrape of /metrics allocates, and a second
	// would read the first's garbage as heap in use.
	heap, _ := g.Metric("go_memstats_heap_inuse_bytes", "")
	n, _ := g.Metric("go_goroutines", "")
	fmt.Printf("| at rest, ready, 2 s idle | | | | | | | | %s | %s | %.0f | %s |\n", loadtest.MiB(rss), loadtest.MiB(int64(heap)), n, loadtest.LoadAverage())
	return fmt.Sprintf("RSS at rest: %s MiB (goal ≤ 24 MiB)", loadtest.MiB(rss)), nil
}

func (r *runner) idle(n int) (string, error) {
	var parts []string
	for _, c := range []struct {
		name          string
		http, ws, sse int
		transport     string
	}{
		{"idle Streamable HTTP sessions, each with a GET stream", n, 0, 0, "HTTP"},
		{"idle WebSocket sessions", 0, n, 0, "WebSocket"},
		{"idle legacy HTTP+SSE sessions", 0, 0, n, "legacy SSE"},
	} {
		// A gateway each: memory freed by one transport's sessions and
		// kept by the Go runtime would hide the other's.
		g, err := r.gateway()
		if err != nil {
			return "", err
		}
		rep, err := loadtest.Run(r.ctx, g, loadtest.Mix{IdleHTTP: c.http, IdleWS: c.ws, IdleSSE: c.sse, Duration: time.Millisecond})
		g.Stop()
		if err != nil {
			return "", err
		}
		fmt.Println(rep.Row(fmt.Sprintf("%d %s", n, c.name)))
		per := float64(rep.RSSIdle-rep.RSSBase) / float64(n)
		g2 := (rep.GoroutinesIdle - rep.GoroutinesBase) / float64(n)
		parts = append(parts, fmt.Sprintf("%s %.1f KiB (of which heap %.1f, goroutine stacks %.1f) and %.1f goroutines per idle session, %.0f sessions per GiB",
			c.transport, per/1024, (rep.HeapIdle-rep.HeapBase)/1024/float64(n), rep.StackIdle/1024/float64(n), g2, float64(1<<30)/per))
	}
	return strings.Join(parts, "; "), nil
}

// longStream is a server stream that stays open about ten seconds: ten
// messages a second apart.
var longStream = loadtest.Op{Name: "open stream", Weight: 1, Do: func(ctx context.Context, c loadtest.Conn) error {
	_, err := c.Call(ctx, "tools/call", `{"name":"ZooService_WatchFeedings","arguments":{"count":10,"interval":"1s"},"_meta":{"progressToken":"p"}}`)
	return err
}}

func (r *runner) streams(n int) (string, error) {
	g, err := r.gateway()
	if err != nil {
		return "", err
	}
	defer g.Stop()
	rep, err := loadtest.Run(r.ctx, g, loadtest.Mix{InFlight: n, WSShare: 0.5, Ops: []loadtest.Op{longStream}, MaxOps: n, Duration: time.Minute})
	if err != nil {
		return "", err
	}
	fmt.Println(rep.Row(fmt.Sprintf("%d open server streams (~10 s each, half WebSocket)", n)))
	// The workers' sessions are part of the peak: an idle session is a
	// few KiB (the idle rows), a small part of a stream's figure.
	per := float64(rep.RSSPeak-rep.RSSIdle) / float64(n)
	return fmt.Sprintf("%.1f KiB of RSS per open server stream (peak with %d open, less before; its session included)", per/1024, n), nil
}

func (r *runner) unary(list string) (string, error) {
	g, err := r.gateway()
	if err != nil {
		return "", err
	}
	defer g.Stop()
	var parts []string
	for _, f := range strings.Split(list, ",") {
		var n int
		if _, err := fmt.Sscan(f, &n); err != nil || n < 1 {
			return "", fmt.Errorf("-inflight: %q is not a positive number", f)
		}
		rep, err := loadtest.Run(r.ctx, g, loadtest.Mix{InFlight: n, Ops: []loadtest.Op{loadtest.Unary}, Duration: r.d})
		if err != nil {
			return "", err
		}
		fmt.Println(rep.Row(fmt.Sprintf("unary GetAnimal, %d in flight (Streamable HTTP sessions)", n)))
		parts = append(parts, fmt.Sprintf("%d in flight: p99/p50 %.1f", n, float64(rep.All.P99)/float64(max(rep.All.P50, 1))))
	}
	return "unary latency spread (goal at 32 in flight: p99 ≤ 4x p50): " + strings.Join(parts, ", "), nil
}

func (r *runner) mix(idle int) (string, error) {
	g, err := r.gateway()
	if err != nil {
		return "", err
	}
	defer g.Stop()
	u, s, k := loadtest.Unary, loadtest.Stream, loadtest.Kept
	u.Weight, s.Weight, k.Weight = 8, 1, 1
	rep, err := loadtest.Run(r.ctx, g, loadtest.Mix{IdleHTTP: idle, IdleWS: idle, InFlight: 32, WSShare: 0.5, Ops: []loadtest.Op{u, s, k}, Duration: r.d})
	if err != nil {
		return "", err
	}
	fmt.Println(rep.Row(fmt.Sprintf("mix: %d idle sessions; 32 in flight, half WebSocket: 80%% unary, 10%% 20-message streams, 10%% cut results read back", 2*idle)))
	return "", nil
}

// accessLog: the same unary load at --log-level info (one access line per
// call) and warn (none), in five adjacent pairs, to price the line: the
// median of the pairs' ratios, whose runs are seconds apart, so the load
// of other processes cancels better than between best runs.
func (r *runner) accessLog() (string, error) {
	var costs []float64
	for range 5 {
		per := map[string]float64{}
		for _, level := range []string{"warn", "info"} {
			g, err := loadtest.Start(r.ctx, r.bin, "--backend", r.backend, "--log-level", level)
			if err != nil {
				return "", err
			}
			rep, err := loadtest.Run(r.ctx, g, loadtest.Mix{InFlight: 8, Ops: []loadtest.Op{loadtest.Unary}, Duration: r.d})
			g.Stop()
			if err != nil {
				return "", err
			}
			fmt.Println(rep.Row("unary, 8 in flight, --log-level " + level))
			per[level] = rep.PerCoreSecond()
		}
		costs = append(costs, 100*(per["warn"]/per["info"]-1))
	}
	slices.Sort(costs)
	return fmt.Sprintf("access log at info: %.1f%% more gateway CPU per call than at warn (median of five adjacent pairs, %.1f%% to %.1f%%; goal ≤ 3%%)",
		costs[len(costs)/2], costs[0], costs[len(costs)-1]), nil
}

// searchQueries are requests as an agent phrases them, against the
// estate's Google Cloud APIs.
var searchQueries = []string{
	"create a virtual machine", "list instances in a zone", "publish a message to a topic", "create a subscription",
	"upload an object to a bucket", "list buckets", "run a SQL query on a database", "create a spanner instance",
	"deploy a model to an endpoint", "get a prediction from a model", "delete a disk", "resize a managed instance group",
	"acknowledge messages", "read rows in a transaction", "set the IAM policy of a bucket", "list operations",
	"stop an instance", "create a firewall rule", "take a snapshot of a disk", "list training jobs",
}

func (r *runner) search(estateDir, tmp string) (string, error) {
	if _, err := os.Stat(filepath.Join(estateDir, "go.mod")); err != nil {
		return "search skipped: no estate module at " + estateDir, nil
	}
	bin := filepath.Join(tmp, "estate")
	if out, err := exec.Command("go", "build", "-C", estateDir, "-o", bin, "./cmd/estate").CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/estate: %w\n%s", err, out)
	}
	addr, err := loadtest.FreeAddr()
	if err != nil {
		return "", err
	}
	est := exec.Command(bin, "-listen", addr)
	est.Stderr = io.Discard
	if err := est.Start(); err != nil {
		return "", err
	}
	defer func() { _ = est.Process.Signal(syscall.SIGTERM); _ = est.Wait() }()
	for i := 0; ; i++ {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
			break
		}
		if i > 600 {
			return "", fmt.Errorf("the estate did not listen on %s within a minute", addr)
		}
		time.Sleep(100 * time.Millisecond) // polling another process
	}
	g, err := loadtest.Start(r.ctx, r.bin, "--backend", addr, "--tool-mode", "search", "--log-level", "warn")
	if err != nil {
		return "", err
	}
	defer g.Stop()
	var parts []string
	for _, n := range []int{1, 8} {
		rep, err := loadtest.Run(r.ctx, g, loadtest.Mix{InFlight: n, Ops: []loadtest.Op{loadtest.Search(searchQueries)}, Duration: r.d})
		if err != nil {
			return "", err
		}
		fmt.Println(rep.Row(fmt.Sprintf("search_tools on the estate (1,450 tools), %d in flight", n)))
		parts = append(parts, fmt.Sprintf("%.0f queries per gateway CPU-s at %d in flight", rep.PerCoreSecond(), n))
	}
	return "search on the estate: " + strings.Join(parts, ", "), nil
}

// raiseFileLimit lifts the soft limit on open files to the hard one: each
// idle session is a connection here and one in the gateway, which
// inherits the limit.
func raiseFileLimit() {
	var l syscall.Rlimit
	if syscall.Getrlimit(syscall.RLIMIT_NOFILE, &l) == nil && l.Cur < l.Max {
		l.Cur = l.Max
		_ = syscall.Setrlimit(syscall.RLIMIT_NOFILE, &l)
	}
}

// binarySize reports the size of bin, built as the Dockerfile builds it
// (CGO_ENABLED=0 and loadtest.ReleaseFlags: -trimpath, -s -w: no symbol
// table or DWARF),
// and what costs what: the code and read-only data of each module in a
// build with its symbols (go tool nm -size), largest first.
func binarySize(repo, bin, tmp string) (string, error) {
	syms := filepath.Join(tmp, "gateway-symbols")
	build := exec.Command("go", "build", "-C", repo, "-tags", loadtest.BuildTags, "-o", syms, "./cmd/gateway")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build: %w\n%s", err, out)
	}
	st, err := os.Stat(bin)
	if err != nil {
		return "", err
	}
	out, err := exec.Command("go", "tool", "nm", "-size", syms).Output()
	if err != nil {
		return "", fmt.Errorf("go tool nm: %w", err)
	}
	by := map[string]int64{}
	for line := range strings.SplitSeq(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) < 4 || !strings.ContainsAny(f[2], "TtRr") {
			continue // data and BSS are not code; BSS is not in the file
		}
		var size int64
		fmt.Sscan(f[1], &size)
		by[moduleOf(strings.Join(f[3:], " "))] += size
	}
	mods := make([]string, 0, len(by))
	for m := range by {
		mods = append(mods, m)
	}
	slices.SortFunc(mods, func(a, b string) int { return int(by[b] - by[a]) })
	var top []string
	for _, m := range mods[:min(12, len(mods))] {
		top = append(top, fmt.Sprintf("%s %.2f", m, float64(by[m])/1e6))
	}
	return fmt.Sprintf("binary as the Dockerfile builds it (CGO_ENABLED=0, %s): %.1f MB (goal ≤ 40 MB); `CGO_ENABLED=0 go build -tags %s` (symbols and DWARF): %s. Code and read-only data by module, MB: %s",
		shellWords(loadtest.ReleaseFlags), float64(st.Size())/1e6, loadtest.BuildTags, sizeMB(syms), strings.Join(top, ", ")), nil
}

// shellWords joins args as a shell would need them typed.
func shellWords(args []string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = a
		if strings.Contains(a, " ") {
			q[i] = "'" + a + "'"
		}
	}
	return strings.Join(q, " ")
}

func sizeMB(path string) string {
	st, err := os.Stat(path)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%.1f MB", float64(st.Size())/1e6)
}

// moduleOf is the module (or standard library package) a symbol belongs
// to: the first three path elements of a dotted host, else the first.
func moduleOf(sym string) string {
	sym = strings.TrimPrefix(sym, "vendor/")
	if strings.HasPrefix(sym, "go:") || strings.HasPrefix(sym, "type:") {
		return "(runtime tables)"
	}
	parts := strings.Split(sym, "/")
	if strings.Contains(parts[0], ".") && len(parts) >= 3 {
		last := parts[2]
		if i := strings.IndexAny(last, ".("); i >= 0 {
			last = last[:i]
		}
		return parts[0] + "/" + parts[1] + "/" + last
	}
	first := parts[0]
	if i := strings.IndexAny(first, ".("); i >= 0 {
		first = first[:i]
	}
	return first
}
