package estate_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io/fs"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/grpc-mcp-gateway/gateway/descriptors"
	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/gateway/backendconn"
	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// BenchmarkCatalog measures the gateway binary on issue 22's big catalogs,
// built from the googleapis .proto sources with their comments (the npm
// package google-proto-files in testdata/googleapis) and given as an
// operator would: --no-reflection --proto-path DIR --proto FILE... and one
// backend address (the estate server, which is never called). Run it with
// `make bench-catalog`; it takes minutes and gigabytes, so plain `go test`
// never runs it, and it skips without the npm package. Its catalogs:
//
//   - all: every .proto file that defines a service (1,574 files);
//   - cloud-v1: the Cloud v1 APIs (google/cloud/*/v1) and the estate's
//     five APIs, issue 22's first catalog.
//
// Files declaring an edition the compiler does not know (2024 and later)
// are skipped, and their count logged. Figures, one iteration being one
// whole measurement:
//
//   - files, services, tools: the catalog;
//   - ready-s, ready-cpu-s: from starting the process to /readyz
//     answering 200, and the CPU it used by then, with an empty
//     --proto-cache directory; restart-ready-s, restart-ready-cpu-s and
//     restart-rss-MiB: the same for a second process started once the
//     first one ended, over the cache it wrote; auto-restart-ready-s,
//     auto-restart-ready-cpu-s, auto-restart-rss-MiB: the same restart
//     with the default --tool-mode auto (search mode at this size, ready
//     before the tools' schemas are built), and auto-warm-cpu-s and
//     auto-rss-settled-MiB its CPU once the background warm-up has built
//     them and its RSS 5 s later;
//   - rss-MiB: resident memory once ready; rss-settled-MiB 5 s later,
//     once the gateway has returned discovery's garbage; rss-after-MiB after the
//     refreshes (CATALOG_REFRESHES, default 3, at a 10 s interval) of the
//     unchanged files; refresh-cpu-s: the process's CPU per refresh (with
//     what it does on its own between refreshes, without the /metrics
//     scrapes that count them); metrics-cpu-s: one /metrics scrape;
//   - rss-listed-MiB: resident memory after one full typed tools/list;
//   - typed-list-bytes, typed-list-pages: that list; largest-tool-bytes,
//     p90-tool-bytes, p50-tool-bytes and tools-over-48KiB: its tools;
//   - search-p50-us, search-p99-us: one search_tools answer, in process
//     and without the transport, for every request of the relevance sets
//     (each new to the answer cache), on an in-process gateway in search
//     mode over the same files; search-cpu-p50-us, search-cpu-p99-us:
//     the CPU time of those answers, which a machine shared with other
//     work inflates far less than their wall time (Linux only); heap-MiB: that gateway's live heap after
//     a collection once ready. With CATALOG_HEAPPROFILE=FILE the heap
//     profile (inuse_space) is written there at that moment (docs/scale.md
//     reads it); inprocess-ready-s: how long that gateway took to build,
//     and with CATALOG_DISCOVERYPROFILE=FILE the CPU profile of that build
//     (over the compile cache CATALOG_PROTOCACHE names, if any).
//     CATALOG_BINARY=0 skips the binary's measurements.
func BenchmarkCatalog(b *testing.B) {
	dir := googleapisOrSkip(b)
	bin := testkit.GatewayBinary(b)
	backend := estateServer(b)
	for _, c := range []struct {
		name string
		pick func(rel string) bool
	}{
		{"all", func(string) bool { return true }},
		{"cloud-v1", func(rel string) bool { return cloudV1RE.MatchString(rel) || slices.Contains(estateProtos, rel) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			files, services, skipped := serviceProtos(b, dir, c.pick)
			b.Logf("%d files defining %d services; %d skipped (an edition the compiler does not know)", len(files), services, skipped)
			for b.Loop() {
				if os.Getenv("CATALOG_BINARY") != "0" {
					measureCatalogBinary(b, bin, backend, dir, files)
				}
				measureCatalogInProcess(b, backend, dir, files)
			}
			b.ReportMetric(float64(len(files)), "files")
			b.ReportMetric(float64(services), "services")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// cloudV1RE matches the files of the Cloud v1 APIs.
var cloudV1RE = regexp.MustCompile(`^google/cloud/[^/]+/v1/[^/]+\.proto$`)

var (
	serviceRE     = regexp.MustCompile(`(?m)^service \w+`)
	newEditionsRE = regexp.MustCompile(`(?m)^edition\s*=\s*"(20(2[4-9]|[3-9]\d))"`)
)

// googleapisOrSkip returns the googleapis directory, or skips without it.
func googleapisOrSkip(tb testing.TB) string {
	tb.Helper()
	if _, err := os.Stat(googleapisDir); err != nil {
		tb.Skipf("%s is missing: run `cd estate/testdata/googleapis && npm ci --no-audit --no-fund --ignore-scripts`", googleapisDir)
	}
	return googleapisDir
}

// serviceProtos lists the .proto files under dir (relative to it, sorted)
// that pick accepts and that define a service, and the services they
// declare, leaving out the files declaring an edition protocompile does
// not know (counted in skipped).
func serviceProtos(tb testing.TB, dir string, pick func(rel string) bool) (files []string, services, skipped int) {
	tb.Helper()
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".proto") {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if !pick(rel) {
			return nil
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		switch {
		case !serviceRE.Match(raw):
		case newEditionsRE.Match(raw):
			skipped++
		default:
			files = append(files, rel)
			services += len(serviceRE.FindAll(raw, -1))
		}
		return nil
	})
	if err != nil {
		tb.Fatal(err)
	}
	slices.Sort(files)
	return files, services, skipped
}

// catalogRefreshInterval is the refresh interval the binary runs with.
const catalogRefreshInterval = 10 * time.Second

func catalogRefreshes(tb testing.TB) int {
	n := 3
	if s := os.Getenv("CATALOG_REFRESHES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			tb.Fatalf("CATALOG_REFRESHES=%q: want a positive number", s)
		}
		n = v
	}
	return n
}

// settle is how long after readiness rss-settled-MiB is read.
const settle = 5 * time.Second

func measureCatalogBinary(b *testing.B, bin, backend, dir string, files []string) {
	listen := testkit.FreeAddr(b)
	// A cache directory of its own, empty: ready-s is a first start.
	cacheDir := b.TempDir()
	args := []string{"--backend", backend, "--listen", listen, "--tool-mode", "typed",
		"--no-reflection", "--proto-path", dir, "--proto-cache", cacheDir,
		"--refresh", catalogRefreshInterval.String(), "--discovery-timeout", "10m", "--log-level", "error"}
	for _, f := range files {
		args = append(args, "--proto", f)
	}
	client := &http.Client{Timeout: 2 * time.Minute} // a loaded machine may take long to render 13,000 tools' metrics
	cmd, ready := startCatalogBinary(b, client, bin, listen, args, nil)
	stopped := false
	stop := func() {
		if !stopped {
			stopped = true
			_ = cmd.Process.Signal(os.Interrupt)
			_ = cmd.Wait()
		}
	}
	defer stop()
	b.ReportMetric(ready.Seconds(), "ready-s")
	pid := cmd.Process.Pid
	b.ReportMetric(cpuSeconds(b, pid), "ready-cpu-s")
	b.ReportMetric(rssMiB(b, pid), "rss-MiB")
	// The gateway returns discovery's garbage to the OS in the background
	// once its catalog is built (gateway/memory.go): what it holds once
	// that has run, before any refresh.
	time.Sleep(settle)
	b.ReportMetric(rssMiB(b, pid), "rss-settled-MiB")

	// The refreshes run on the gateway's own timer; a refresh may take
	// longer than the interval, so the window lasts until the count is
	// reached (read every interval, outside the first wait).
	// The CPU is read before each /metrics scrape, so a refresh's figure
	// holds the refreshes and whatever else the gateway does on its own,
	// not the scrapes, whose own cost is metrics-cpu-s.
	rounds := catalogRefreshes(b)
	n0 := discoveries(b, client, listen)
	cpu0 := cpuSeconds(b, pid)
	windowStart := time.Now()
	time.Sleep(time.Duration(rounds) * catalogRefreshInterval)
	var n1, cpu1 float64
	var wall time.Duration
	for {
		cpu1, wall = cpuSeconds(b, pid), time.Since(windowStart)
		if n1 = discoveries(b, client, listen); n1-n0 >= float64(rounds) {
			break
		}
		if wall > time.Duration(rounds)*catalogRefreshInterval+10*time.Minute {
			b.Fatalf("%v refreshes in %v", n1-n0, wall)
		}
		time.Sleep(catalogRefreshInterval)
	}
	b.ReportMetric((cpu1-cpu0)/(n1-n0), "refresh-cpu-s")
	b.ReportMetric(wall.Seconds()/(n1-n0), "refresh-wall-s")
	scrape := cpuSeconds(b, pid)
	discoveries(b, client, listen)
	b.ReportMetric(cpuSeconds(b, pid)-scrape, "metrics-cpu-s")
	b.ReportMetric(rssMiB(b, pid), "rss-after-MiB")

	typed := listToolsAt(b, "http://"+listen)
	b.ReportMetric(rssMiB(b, pid), "rss-listed-MiB")
	b.ReportMetric(float64(len(typed.tools)), "tools")
	b.ReportMetric(float64(typed.bytes), "typed-list-bytes")
	b.ReportMetric(float64(typed.pages), "typed-list-pages")
	s := typed.sizes()
	b.ReportMetric(float64(s.largest), "largest-tool-bytes")
	b.ReportMetric(float64(s.p90), "p90-tool-bytes")
	b.ReportMetric(float64(s.p50), "p50-tool-bytes")
	b.ReportMetric(float64(s.over48KiB), "tools-over-48KiB")
	b.Logf("largest tool: %s (%d bytes)", s.largestName, s.largest)

	// A restart over the cache the first process wrote (in the
	// background after its first compile, long done by now).
	stop()
	if entries, _ := filepath.Glob(filepath.Join(cacheDir, "*.protocache")); len(entries) != 1 {
		b.Fatalf("cache entries after the first run: %q, want one", entries)
	}
	cmd, ready = startCatalogBinary(b, client, bin, listen, args, nil)
	b.ReportMetric(ready.Seconds(), "restart-ready-s")
	b.ReportMetric(cpuSeconds(b, cmd.Process.Pid), "restart-ready-cpu-s")
	b.ReportMetric(rssMiB(b, cmd.Process.Pid), "restart-rss-MiB")
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()

	// The same restart with the default --tool-mode auto, which lists
	// this catalog in search mode: ready before the tools' schemas are
	// built, which the gateway then does in the background (its log
	// line, at info level, says when it is done).
	autoArgs := slices.Clone(args)
	for i, a := range autoArgs {
		switch a {
		case "--tool-mode":
			autoArgs[i+1] = "auto"
		case "--log-level":
			autoArgs[i+1] = "info"
		}
	}
	warmed := make(chan struct{})
	cmd, ready = startCatalogBinary(b, client, bin, listen, autoArgs, &logWatch{msg: "tool schemas built in the background", seen: warmed})
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	b.ReportMetric(ready.Seconds(), "auto-restart-ready-s")
	b.ReportMetric(cpuSeconds(b, cmd.Process.Pid), "auto-restart-ready-cpu-s")
	b.ReportMetric(rssMiB(b, cmd.Process.Pid), "auto-restart-rss-MiB")
	select {
	case <-warmed:
	case <-time.After(10 * time.Minute):
		b.Fatal("the schemas' background warm-up did not end in 10 minutes")
	}
	b.ReportMetric(cpuSeconds(b, cmd.Process.Pid), "auto-warm-cpu-s")
	time.Sleep(settle)
	b.ReportMetric(rssMiB(b, cmd.Process.Pid), "auto-rss-settled-MiB")
}

// logWatch is a process's stderr: it closes seen at the first line
// logging msg, and passes on only warnings and errors. exec copies the
// process's output into it, and Wait waits for that copy.
type logWatch struct {
	msg     string
	seen    chan struct{}
	found   bool
	partial []byte
}

func (w *logWatch) Write(p []byte) (int, error) {
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			return len(p), nil
		}
		line := w.partial[:i]
		if !w.found && bytes.Contains(line, []byte(`msg="`+w.msg+`"`)) {
			w.found = true
			close(w.seen)
		}
		if bytes.Contains(line, []byte("level=WARN")) || bytes.Contains(line, []byte("level=ERROR")) {
			_, _ = os.Stderr.Write(w.partial[:i+1])
		}
		w.partial = w.partial[i+1:]
	}
}

// startCatalogBinary starts the gateway binary with args and returns it
// once its /readyz answers 200 at listen, and how long that took. With
// watch, its log goes to watch instead of stderr.
func startCatalogBinary(b *testing.B, client *http.Client, bin, listen string, args []string, watch *logWatch) (*exec.Cmd, time.Duration) {
	b.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if watch != nil {
		cmd.Stderr = watch
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	if !testkit.Poll(10*time.Minute, func() bool { code, _ := testkit.Readyz(client, "http://"+listen); return code == http.StatusOK }) {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
		b.Fatal("gateway not ready after 10 minutes")
	}
	return cmd, time.Since(start)
}

// measureCatalogInProcess builds the catalog in this process, in search
// mode (the one --tool-mode auto picks at this size), reports its live
// heap and search_tools' latency, and writes the heap profile when
// CATALOG_HEAPPROFILE names a file, the searches' CPU profile when
// CATALOG_CPUPROFILE does.
func measureCatalogInProcess(b *testing.B, backend, dir string, files []string) {
	conn, err := backendconn.Dial(backend, backendconn.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	src := descriptors.NewProtoSource([]string{dir}, files)
	// With CATALOG_PROTOCACHE=DIR the build reads (and writes) that
	// compile cache, as a restart of the binary does: run twice, the
	// second run's CATALOG_DISCOVERYPROFILE is a restart's.
	src.CacheDir = os.Getenv("CATALOG_PROTOCACHE")
	bk := gateway.Backend{Name: "googleapis", Address: backend, Conn: conn,
		Files: src, NoReflection: true}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	stopProfile := startCPUProfile(b, os.Getenv("CATALOG_DISCOVERYPROFILE"))
	warmed := make(chan struct{})
	logger := slog.New(messageHandler{msg: "tool schemas built in the background", seen: warmed, once: new(sync.Once)})
	start := time.Now()
	g, err := gateway.New(ctx, []gateway.Backend{bk}, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}, Catalog: gateway.CatalogOptions{Refresh: -1, RequireBackends: true}, Logger: logger, PaceGC: true})
	stopProfile()
	if err != nil {
		b.Fatal(err)
	}
	ready := time.Now()
	b.ReportMetric(ready.Sub(start).Seconds(), "inprocess-ready-s")
	defer g.Close()
	// A search-mode catalog is listed before its tools' schemas are built
	// (gateway/toolschemas.go); the figures below are the steady state,
	// once the background warm-up has built them.
	select {
	case <-warmed:
	case <-ctx.Done():
		b.Fatal("the schemas' background warm-up did not end")
	}
	b.ReportMetric(time.Since(ready).Seconds(), "schemas-warm-s")
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MiB")
	// What the live heap's spans take, and what the runtime holds from
	// the OS once free memory is returned: the gap to heap-MiB is
	// fragmentation, which no collection returns.
	debug.FreeOSMemory()
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "heap-inuse-MiB")
	b.ReportMetric(float64(ms.Sys-ms.HeapReleased)/(1<<20), "runtime-held-MiB")
	if path := os.Getenv("CATALOG_HEAPPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			b.Fatal(err)
		}
		if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
			b.Fatal(err)
		}
		if err := f.Close(); err != nil {
			b.Fatal(err)
		}
	}

	var queries []string
	for _, set := range []string{"google.tsv", "temporal.tsv", "validation.tsv"} {
		for _, c := range loadRelevance(b, set) {
			queries = append(queries, c.query)
		}
	}
	took := make([]time.Duration, 0, len(queries))
	cpu := make([]time.Duration, 0, len(queries))
	stopSearchProfile := startCPUProfile(b, os.Getenv("CATALOG_CPUPROFILE"))
	defer stopSearchProfile()
	// The search runs on this goroutine; locked to its thread, the
	// thread's CPU time is the search's own (with any GC assist it pays),
	// which the machine's other work does not inflate as it does the
	// wall time.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for i, q := range queries {
		args, _ := json.Marshal(map[string]any{"query": q + " " + nonce(i), "limit": 5})
		cpu0 := threadCPU(b)
		start := time.Now()
		res, err := g.CallTool(ctx, &mcp.CallToolRequest{Name: gateway.SearchToolsName, Arguments: args})
		took = append(took, time.Since(start))
		cpu = append(cpu, threadCPU(b)-cpu0)
		if err != nil || res.IsError {
			b.Fatalf("%q: %v %+v", q, err, res)
		}
	}
	slices.Sort(took)
	slices.Sort(cpu)
	b.ReportMetric(float64(took[len(took)/2].Microseconds()), "search-p50-us")
	b.ReportMetric(float64(took[len(took)*99/100].Microseconds()), "search-p99-us")
	b.ReportMetric(float64(cpu[len(cpu)/2].Microseconds()), "search-cpu-p50-us")
	b.ReportMetric(float64(cpu[len(cpu)*99/100].Microseconds()), "search-cpu-p99-us")
	b.Logf("search_tools: %d requests", len(took))
}

// clockThreadCPUTime is Linux's CLOCK_THREAD_CPUTIME_ID, which package
// syscall does not name: the calling thread's CPU time, to the
// nanosecond (getrusage's counts in scheduler ticks, too coarse here).
const clockThreadCPUTime = 3

// threadCPU is the CPU time the calling thread has used.
func threadCPU(b *testing.B) time.Duration {
	var ts syscall.Timespec
	if _, _, errno := syscall.Syscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTime, uintptr(unsafe.Pointer(&ts)), 0); errno != 0 {
		b.Fatal(errno)
	}
	return time.Duration(ts.Nano())
}

// startCPUProfile writes a CPU profile to path until the returned function
// is called; with an empty path it does nothing.
func startCPUProfile(b *testing.B, path string) (stop func()) {
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		b.Fatal(err)
	}
	return func() {
		pprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			b.Error(err)
		}
	}
}

// messageHandler closes seen at the first record with message msg.
type messageHandler struct {
	msg  string
	seen chan struct{}
	once *sync.Once
}

func (h messageHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h messageHandler) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h messageHandler) WithGroup(string) slog.Handler            { return h }
func (h messageHandler) Handle(_ context.Context, r slog.Record) error {
	if r.Message == h.msg {
		h.once.Do(func() { close(h.seen) })
	}
	return nil
}
