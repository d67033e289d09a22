package estate_test

import (
	"bufio"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// BenchmarkEstate measures the gateway binary in front of the estate, the
// figures README.md reports beside issue 10's "today" (run it with
// `make bench-estate`; one iteration is one whole measurement):
//
//   - ready-s: from starting the process to /readyz answering 200, and
//     ready-cpu-s: the CPU it used by then (which does not depend on what
//     else the machine is running);
//   - rss-MiB: the process's resident memory once ready, and rss-after-MiB
//     after refresh-rounds refreshes of the unchanged backend;
//   - refresh-cpu-s: the process's CPU per refresh of the unchanged backend
//     (one every refreshInterval, idle work included);
//   - typed-list-bytes and search-list-bytes: every page of tools/list in
//     each mode; largest-tool-bytes, p90-tool-bytes, p50-tool-bytes and
//     total-tool-bytes: the typed tools' definitions; annotated-tools,
//     read-only-tools and destructive-tools: how many carry hints (every
//     tool carries all four) and how many say read-only or destructive;
//   - search-top1-% and search-top5-%: the first 53-intent set;
//     users-top1-% and users-top5-%: the Google Cloud requests of the
//     relevance set that counts (search_users_test.go).
//
// The estate server runs in this process, so its CPU is not counted.
func BenchmarkEstate(b *testing.B) {
	bin := testkit.GatewayBinary(b)
	srv := estateServer(b)
	for b.Loop() {
		measureBinary(b, bin, srv)
		measureLists(b)
	}
}

// refreshRounds and refreshInterval: how long the refresh measurement runs.
const (
	refreshRounds   = 10
	refreshInterval = time.Second
)

func estateServer(b *testing.B) string {
	b.Helper()
	backend := estateBackend(b)
	return backend.Address
}

func measureBinary(b *testing.B, bin, backend string) {
	listen := testkit.FreeAddr(b)
	cmd := exec.Command(bin, "--backend", backend, "--listen", listen, "--tool-mode", "typed",
		"--refresh", refreshInterval.String(), "--log-level", "warn")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}()
	testkit.WaitReady(b, "http://"+listen, 2*time.Minute)
	client := &http.Client{Timeout: time.Second}
	b.ReportMetric(time.Since(start).Seconds(), "ready-s")
	pid := cmd.Process.Pid
	b.ReportMetric(cpuSeconds(b, pid), "ready-cpu-s")
	b.ReportMetric(rssMiB(b, pid), "rss-MiB")

	// Scraping /metrics costs the gateway CPU too (a series per tool), so
	// it is read only before and after the window, outside the CPU
	// readings.
	n0 := discoveries(b, client, listen)
	cpu0 := cpuSeconds(b, pid)
	time.Sleep(refreshRounds * refreshInterval) // the window: the refreshes run on the gateway's own timer
	cpu1 := cpuSeconds(b, pid)
	n1 := discoveries(b, client, listen)
	if n1-n0 < refreshRounds/2 {
		b.Fatalf("%v refreshes in %v", n1-n0, refreshRounds*refreshInterval)
	}
	b.ReportMetric((cpu1-cpu0)/(n1-n0), "refresh-cpu-s")
	b.ReportMetric(rssMiB(b, pid), "rss-after-MiB")
}

// discoveries reads the gateway's count of successful discoveries from
// /metrics.
func discoveries(b *testing.B, client *http.Client, listen string) float64 {
	resp, err := client.Get("http://" + listen + "/metrics")
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	total := 0.0
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.Contains(line, "discovery_refreshes_total{") && strings.Contains(line, `outcome="success"`) {
			f := strings.Fields(line)
			v, err := strconv.ParseFloat(f[len(f)-1], 64)
			if err != nil {
				b.Fatal(err)
			}
			total += v
		}
	}
	return total
}

func rssMiB(b *testing.B, pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 64)
			if err != nil {
				b.Fatal(err)
			}
			return kb / 1024
		}
	}
	b.Fatal("no VmRSS")
	return 0
}

// cpuSeconds is the process's user+system CPU time (/proc/PID/stat fields
// 14 and 15, in clock ticks of 1/100 s on Linux).
func cpuSeconds(b *testing.B, pid int) float64 {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		b.Fatal(err)
	}
	// The command name may hold spaces; fields are counted after its ')'.
	f := strings.Fields(string(raw[strings.LastIndexByte(string(raw), ')')+2:]))
	utime, _ := strconv.ParseFloat(f[11], 64)
	stime, _ := strconv.ParseFloat(f[12], 64)
	return (utime + stime) / 100
}

func measureLists(b *testing.B) {
	typed := listTools(b, newEstateGateway(b, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeTyped}}))
	b.ReportMetric(float64(typed.bytes), "typed-list-bytes")
	s := typed.sizes()
	b.ReportMetric(float64(s.largest), "largest-tool-bytes")
	b.ReportMetric(float64(s.p90), "p90-tool-bytes")
	b.ReportMetric(float64(s.p50), "p50-tool-bytes")
	b.ReportMetric(float64(s.total), "total-tool-bytes")
	b.ReportMetric(float64(s.annotated), "annotated-tools")
	b.ReportMetric(float64(s.readOnly), "read-only-tools")
	b.ReportMetric(float64(s.destructive), "destructive-tools")
	search := listTools(b, newEstateGateway(b, &gateway.Options{Search: gateway.SearchOptions{ToolMode: gateway.ToolModeSearch}}))
	b.ReportMetric(float64(search.bytes), "search-list-bytes")
	if searchRelevance != nil {
		top1, top5 := searchRelevance(b)
		b.ReportMetric(top1, "search-top1-%")
		b.ReportMetric(top5, "search-top5-%")
	}
	if usersRelevance != nil {
		top1, top5 := usersRelevance(b)
		b.ReportMetric(top1, "users-top1-%")
		b.ReportMetric(top5, "users-top5-%")
	}
}

// usersRelevance, when set (by search_users_test.go), measures the
// ranking on the Google Cloud requests of the relevance set that counts.
var usersRelevance func(tb testing.TB) (top1, top5 float64)

// searchRelevance, when set (by the relevance test's file, in an init
// func), measures search mode's ranking on the estate: the share of
// intents whose expected tool comes first, and within the first five.
var searchRelevance func(tb testing.TB) (top1, top5 float64)
