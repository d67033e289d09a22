package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// peakRSS is the process's high-water mark of resident memory (VmHWM), in
// bytes. Comparing it before and after an attack measures the most the
// attack ever added, whenever the garbage collector ran: a memory bound
// that cannot flake on a loaded machine the way a timing would.
func peakRSS(t *testing.T, pid int) int64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	for line := range strings.Lines(string(b)) {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return kb << 10
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// rawSession initializes a Streamable HTTP session with plain requests,
// so the test sends exactly the bytes it means to.
func rawSession(t *testing.T, base string) func(body []byte) (int, string) {
	t.Helper()
	c := &testkit.Client{URL: base + "/mcp"}
	if err := c.Initialize(t.Context(), "2025-11-25"); err != nil {
		t.Fatal(err)
	}
	return func(body []byte) (int, string) {
		r, err := c.Post(context.Background(), body)
		if err != nil {
			t.Fatal(err)
		}
		return r.Status, r.Body
	}
}

// TestHostileCallMemory: one 4 MiB tools/call whose arguments hold two
// million invalid values (the issue measured 400 MB for 838,820) costs
// the gateway process under 64 MiB of resident memory at its peak and is
// answered with 100 explained violations and a count of the rest.
// BenchmarkDecodeHostile (internal/schema) shows the time.
func TestHostileCallMemory(t *testing.T) {
	p := startGatewayProcess(t)
	call := rawSession(t, p.base)
	var b bytes.Buffer
	b.WriteString(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ZooService_CreateAnimal","arguments":{"animal":{"tags":[`)
	for b.Len() < 4<<20-64 {
		b.WriteString(`1,`)
	}
	b.WriteString(`1]}}}}`)
	// Warm up the call path, so the peak measured is the attack's.
	if code, out := call([]byte(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"ZooService_CreateAnimal","arguments":{"animal":{"tags":[1,2]}}}}`)); code != 200 || !strings.Contains(out, `"isError":true`) {
		t.Fatalf("warm-up: %d %s", code, out)
	}
	before := peakRSS(t, p.cmd.Process.Pid)
	start := time.Now()
	code, out := call(b.Bytes())
	took := time.Since(start)
	after := peakRSS(t, p.cmd.Process.Pid)
	if code != 200 || !strings.Contains(out, `"isError":true`) || !strings.Contains(out, " more") {
		t.Fatalf("hostile call: %d %.300s", code, out)
	}
	if n := strings.Count(out, "expected a string"); n != 100 {
		t.Errorf("%d violations explained, want 100", n)
	}
	t.Logf("4 MiB hostile tools/call: %d bytes answered in %s, peak RSS +%d MiB", len(out), took, (after-before)>>20)
	if grew := after - before; grew > 64<<20 {
		t.Errorf("peak RSS grew by %d MiB, want under 64 MiB", grew>>20)
	}
}

// stalledRequests opens n connections to addr at once, writes start (a
// request that never completes) on each, and returns what answer made of
// each server's reply. The minute's read deadline is a safety net only:
// the server is expected to answer or close well before.
func stalledRequests(addr string, n int, start string, answer func(net.Conn) string) []string {
	var wg sync.WaitGroup
	out := make(chan string, n)
	for range n {
		wg.Go(func() {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				out <- err.Error()
				return
			}
			defer c.Close()
			fmt.Fprint(c, start)
			_ = c.SetReadDeadline(time.Now().Add(time.Minute))
			out <- answer(c)
		})
	}
	wg.Wait()
	close(out)
	var all []string
	for o := range out {
		all = append(all, o)
	}
	return all
}

// TestSlowSenders: 50 connections that declare a 4 MiB body and send one
// byte reserve almost nothing (buffers grow with what arrives) and are
// cut with 408 after --read-timeout (the attack reserved 200 MiB
// and held the connections indefinitely).
func TestSlowSenders(t *testing.T) {
	p := startGatewayProcess(t, "--read-timeout", "1s")
	addr := strings.TrimPrefix(p.base, "http://")
	before := peakRSS(t, p.cmd.Process.Pid)
	// Each declares a 4 MiB body and sends its first byte.
	start := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 4194304\r\n\r\n{", addr)
	statusLine := func(c net.Conn) string {
		line, err := bufio.NewReader(c).ReadString('\n')
		if err != nil {
			return "no answer: " + err.Error()
		}
		return strings.TrimSpace(line)
	}
	for _, s := range stalledRequests(addr, 50, start, statusLine) {
		if s != "HTTP/1.1 408 Request Timeout" {
			t.Errorf("slow sender got %q, want 408", s)
		}
	}
	if grew := peakRSS(t, p.cmd.Process.Pid) - before; grew > 16<<20 {
		t.Errorf("50 slow senders grew the peak RSS by %d MiB, want under 16 MiB", grew>>20)
	}
}

// TestSlowHeaders: connections that start a request and never finish
// its headers are closed (after readHeaderTimeout, 10s; without it
// net/http would wait for the headers forever, since --read-timeout
// starts after them), and headers over 64 KiB are refused with 431
// before the gateway reads further.
func TestSlowHeaders(t *testing.T) {
	p := startGatewayProcess(t)
	addr := strings.TrimPrefix(p.base, "http://")
	start := fmt.Sprintf("POST /mcp HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\n", addr)
	untilClosed := func(c net.Conn) string {
		b, err := io.ReadAll(c)
		return fmt.Sprintf("%q %v", b, err)
	}
	for _, o := range stalledRequests(addr, 20, start, untilClosed) {
		if o != `"" <nil>` {
			t.Errorf("a connection stuck in its headers: %s, want it closed by the server", o)
		}
	}

	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Minute))
	go fmt.Fprintf(c, "POST /mcp HTTP/1.1\r\nHost: %s\r\nX-Big: %s\r\n\r\n", addr, strings.Repeat("x", 128<<10))
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 431 ") {
		t.Errorf("128 KiB of headers: %q %v, want 431", line, err)
	}
}

// TestReadTimeoutSparesLongCalls: --read-timeout bounds how long a body
// may take to arrive, not the request: the deadline is lifted once the
// body is read, so a call that runs longer than it (1.5 s here, against
// 1 s) is answered.
func TestReadTimeoutSparesLongCalls(t *testing.T) {
	b := startHeldBackend(t)
	p := startGatewayProcess(t, "--backend", "zoo="+b.addr, "--read-timeout", "1s")
	// Stateless (2026-07-28): the call runs in the request's context, which
	// a read deadline left in place would cancel.
	raw := &testkit.Client{URL: p.base + "/mcp", Version: "2026-07-28"}
	resp, err := raw.Do(t.Context(), http.MethodPost, []byte(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"slow"},`+
		`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`), testkit.MethodHeaders("tools/call", "ZooService_GetAnimal"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Status != 200 || !strings.Contains(resp.Body, `Leo`) || strings.Contains(resp.Body, `"isError":true`) {
		t.Fatalf("a call longer than --read-timeout: %d %s", resp.Status, resp.Body)
	}
}

// TestStdioLineLimit: over stdio, a line longer than --max-request-bytes
// is answered with an error naming the limit and skipped, and the next
// request on the same session is served (the real binary, lockstep: each
// line is sent after the previous answer arrived).
func TestStdioLineLimit(t *testing.T) {
	cmd := exec.Command(binary, "--stdio", "--max-request-bytes", "65536")
	in, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	outPipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		in.Close()
		_ = cmd.Wait()
	}()
	out := bufio.NewReader(outPipe)
	send := func(line string) string {
		t.Helper()
		go func() { _, _ = io.WriteString(in, line+"\n") }()
		got, err := out.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(got)
	}
	if got := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`); !strings.Contains(got, `"protocolVersion":"2025-11-25"`) {
		t.Fatalf("initialize: %s", got)
	}
	long := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"` + strings.Repeat("x", 1<<20) + `"}}}`
	if got, want := send(long), `{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message exceeds the limit of 65536 bytes"}}`; got != want {
		t.Errorf("a 1 MiB line: %.200s\nwant %s", got, want)
	}
	if got := send(`{"jsonrpc":"2.0","id":3,"method":"ping"}`); got != `{"jsonrpc":"2.0","id":3,"result":{}}` {
		t.Errorf("the next line: %s", got)
	}
}
