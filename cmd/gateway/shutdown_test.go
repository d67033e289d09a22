package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/reflection"

	zoov1 "github.com/grpc-mcp-gateway/gateway/examples/zoo/gen/zoo/v1"
	"github.com/grpc-mcp-gateway/gateway/examples/zoo/zoo"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// heldBackend is a zoo in the test process whose GetAnimal holds two ids:
// "slow" answers as "leo" after slowFor, "block" waits until its context
// ends and reports why. The shutdown tests point the built gateway at it.
type heldBackend struct {
	addr    string
	started chan string // the id of each held call, when it arrives
	ended   chan error  // a "block" call's ctx.Err()
}

const slowFor = 1500 * time.Millisecond

func startHeldBackend(t *testing.T) *heldBackend {
	t.Helper()
	b := &heldBackend{started: make(chan string, 4), ended: make(chan error, 4)}
	hold := func(ctx context.Context, req any, _ *grpc.UnaryServerInfo, next grpc.UnaryHandler) (any, error) {
		r, ok := req.(*zoov1.GetAnimalRequest)
		switch {
		case ok && r.GetId() == "slow":
			b.started <- "slow"
			time.Sleep(slowFor)
			return next(ctx, &zoov1.GetAnimalRequest{Id: "leo"})
		case ok && r.GetId() == "block":
			b.started <- "block"
			<-ctx.Done()
			b.ended <- ctx.Err()
			return nil, ctx.Err()
		}
		return next(ctx, req)
	}
	gs := grpc.NewServer(grpc.UnaryInterceptor(hold))
	zoo.Register(gs, zoo.NewServer())
	reflection.Register(gs)
	b.addr = testkit.ServeLoopback(t, gs)
	return b
}

// gatewayProcess is the built gateway serving HTTP, with its exit status
// available once it ends.
type gatewayProcess struct {
	cmd    *exec.Cmd
	base   string // http://HOST:PORT
	exited chan error
	logs   *strings.Builder
}

func startGatewayProcess(t *testing.T, args ...string) *gatewayProcess {
	t.Helper()
	g := testkit.StartGateway(t, binary, append([]string{"--listen", "127.0.0.1:0"}, args...)...)
	p := &gatewayProcess{cmd: g.Cmd, base: g.Base, exited: g.Exited, logs: &strings.Builder{}}
	p.logs.WriteString(g.Banner)
	return p
}

// wait returns the exit error and how long after since the process ended.
func (p *gatewayProcess) wait(t *testing.T, since time.Time, limit time.Duration) (error, time.Duration) {
	t.Helper()
	select {
	case err := <-p.exited:
		return err, time.Since(since)
	case <-time.After(limit):
		t.Fatalf("the gateway did not exit within %s of SIGTERM", limit)
		return nil, 0
	}
}

func connectHTTP(t *testing.T, base string) *sdk.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	client := sdk.NewClient(&sdk.Implementation{Name: "shutdown-test", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

type callOutcome struct {
	res *sdk.CallToolResult
	err error
}

func callAsync(cs *sdk.ClientSession, id string) <-chan callOutcome {
	out := make(chan callOutcome, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": id}})
		out <- callOutcome{res, err}
	}()
	return out
}

// TestShutdownLetsCallsFinish: a call in flight when SIGTERM arrives
// completes with its normal result, /readyz answers 503 at once, a new
// session is refused, open GET/SSE streams end, and the process exits 0
// well within the grace period.
func TestShutdownLetsCallsFinish(t *testing.T) {
	b := startHeldBackend(t)
	const grace = 10 * time.Second
	p := startGatewayProcess(t, "--backend", "zoo="+b.addr, "--shutdown-grace", grace.String())
	cs := connectHTTP(t, p.base)
	streams := map[string]io.Reader{"legacy SSE": openStream(t, p.base+"/sse", ""), "Streamable GET": openStream(t, p.base+"/mcp", initRawSession(t, p.base))}
	outcome := callAsync(cs, "slow")
	if id := <-b.started; id != "slow" {
		t.Fatalf("backend got %s", id)
	}
	signalled := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}

	// The signal lands when /readyz turns 503: the first thing shutdown does.
	testkit.WaitFor(t, "/readyz 503 after SIGTERM", func() bool {
		code, ready := getReadyz(t, p.base)
		return code == http.StatusServiceUnavailable && ready["shuttingDown"] == true
	})
	// A new session is refused at once, so the client can go elsewhere.
	late := &testkit.Client{URL: p.base + "/mcp"}
	r, err := late.Post(t.Context(), []byte(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"late","version":"1"}}}`))
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusServiceUnavailable {
		t.Errorf("initialize after SIGTERM: %d, want 503", r.Status)
	}

	// Open streams end, cleanly (a stream cut by the process's exit would
	// end in an error).
	for name, body := range streams {
		if _, err := io.ReadAll(body); err != nil {
			t.Errorf("the %s stream did not end cleanly: %v", name, err)
		}
	}

	o := <-outcome
	if o.err != nil || o.res.IsError {
		t.Fatalf("the call in flight did not complete: %v %+v", o.err, o.res)
	}
	if txt := o.res.Content[0].(*sdk.TextContent).Text; !strings.Contains(txt, `"leo"`) {
		t.Errorf("result: %s", txt)
	}
	err, took := p.wait(t, signalled, grace+5*time.Second)
	if err != nil {
		t.Errorf("exit: %v, want 0", err)
	}
	if took > grace/2 {
		t.Errorf("exit took %s: the gateway waited for more than its one call", took)
	}
}

// initRawSession opens a Streamable HTTP session at base without a client
// library, for a test to open its GET stream itself.
func initRawSession(t *testing.T, base string) string {
	t.Helper()
	c := &testkit.Client{URL: base + "/mcp"}
	if err := c.Initialize(t.Context(), "2025-11-25"); err != nil {
		t.Fatal(err)
	}
	return c.SessionID
}

// openStream opens an event stream with GET (in session sid, when set)
// and returns its body once the server has answered 200.
func openStream(t *testing.T, url, sid string) io.Reader {
	t.Helper()
	raw := &testkit.Client{URL: url, SessionID: sid}
	if sid != "" {
		raw.Version = "2025-11-25"
	}
	resp, err := raw.Send(context.Background(), http.MethodGet, nil, http.Header{"Accept": {"text/event-stream"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", url, resp.Status)
	}
	return resp.Body
}

// TestShutdownCancelsAfterGrace: a call that outlives the grace period is
// cancelled (the backend sees CANCELLED), the client gets an answer, and
// the process still exits 0, shortly after the grace period.
func TestShutdownCancelsAfterGrace(t *testing.T) {
	b := startHeldBackend(t)
	const grace = time.Second
	p := startGatewayProcess(t, "--backend", "zoo="+b.addr, "--shutdown-grace", grace.String())
	cs := connectHTTP(t, p.base)
	outcome := callAsync(cs, "block")
	<-b.started
	signalled := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-b.ended:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("backend saw %v, want CANCELLED", err)
		}
	case <-time.After(grace + 5*time.Second):
		t.Fatal("the held call was not cancelled")
	}
	if o := <-outcome; o.err == nil && !o.res.IsError {
		t.Errorf("a cancelled call answered as a success: %+v", o.res)
	}
	err, took := p.wait(t, signalled, grace+5*time.Second)
	if err != nil {
		t.Errorf("exit: %v, want 0", err)
	}
	if took < grace {
		t.Errorf("exit after %s, before the %s grace period", took, grace)
	}
}

// TestShutdownStdio: on SIGTERM the stdio gateway stops taking requests,
// lets the call in flight finish and write its reply, and exits 0.
func TestShutdownStdio(t *testing.T) {
	b := startHeldBackend(t)
	cmd := exec.Command(binary, "--stdio", "--backend", "zoo="+b.addr, "--shutdown-grace", "10s")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	replies := make(chan map[string]any, 8)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var m map[string]any
			if json.Unmarshal(sc.Bytes(), &m) == nil {
				replies <- m
			}
		}
		close(replies)
	}()
	send := func(s string) { _, _ = io.WriteString(stdin, s+"\n") }
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := <-replies; m["id"] != float64(1) || m["result"] == nil {
		t.Fatalf("initialize: %v\n%s", m, stderr.String())
	}
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"slow"}}}`)
	<-b.started
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	// The signal has landed when a request is refused: ask until one is.
	got := map[float64]map[string]any{}
	refused := false
	for id := 3; !refused; id++ {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, id))
		for {
			m, ok := <-replies
			if !ok {
				t.Fatalf("stdout closed before a request was refused\n%s", stderr.String())
			}
			rid, _ := m["id"].(float64)
			got[rid] = m
			if rid == float64(id) {
				e, _ := m["error"].(map[string]any)
				refused = e != nil && strings.Contains(fmt.Sprint(e["message"]), "shutting down")
				if e != nil && !refused {
					t.Fatalf("a request after SIGTERM: %v, want a result or a shutting-down error", m)
				}
				break
			}
		}
	}
	for m := range replies {
		if id, ok := m["id"].(float64); ok {
			got[id] = m
		}
	}
	if r, _ := got[2]["result"].(map[string]any); r == nil || r["isError"] == true {
		t.Errorf("the call in flight: %v", got[2])
	}
	if err := cmd.Wait(); err != nil {
		t.Errorf("exit: %v, want 0\n%s", err, stderr.String())
	}
}

// TestProtocolTraceFlag: --log-level debug turns the protocol trace on,
// with values redacted unless --log-arguments.
func TestProtocolTraceFlag(t *testing.T) {
	b := startHeldBackend(t)
	for _, withArgs := range []bool{false, true} {
		args := []string{"--stdio", "--backend", "zoo=" + b.addr, "--log-level", "debug", "--log-format", "json"}
		if withArgs {
			args = append(args, "--log-arguments")
		}
		cmd := exec.Command(binary, args...)
		// The trace logs each message as it arrives: the tools/call's
		// arguments are traced whatever its answer.
		cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n" +
			`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"secret-animal"}}}` + "\n")
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%v\n%s", err, stderr.String())
		}
		logs := stderr.String()
		if !strings.Contains(logs, `"msg":"mcp in"`) || !strings.Contains(logs, `"msg":"mcp out"`) || !strings.Contains(logs, `"transport":"stdio"`) {
			t.Errorf("no protocol trace at --log-level debug:\n%s", logs)
		}
		if redacted, shown := strings.Contains(logs, `\"arguments\":\"<redacted: 22 bytes>\"`), strings.Contains(logs, "secret-animal"); redacted == withArgs || shown != withArgs {
			t.Errorf("--log-arguments %v: arguments redacted %v, shown %v:\n%s", withArgs, redacted, shown, logs)
		}
	}
}

// TestShutdownRepliesOnTakenConnections: a call in flight on a legacy SSE
// stream or a WebSocket when SIGTERM arrives gets its reply before the
// process exits, whether it finishes within the grace period ("slow") or
// is cancelled at its end ("block"). Those sessions run on connections
// net/http has handed over, which its Shutdown does not wait for: the
// gateway waits for them itself. The SSE client is a raw one: the
// go-sdk's may drop a message that arrives just before its stream ends
// (its reader closes the connection as it queues the last message).
func TestShutdownRepliesOnTakenConnections(t *testing.T) {
	for _, tr := range []string{"legacy SSE", "WebSocket"} {
		for _, id := range []string{"slow", "block"} {
			t.Run(tr+"/"+id, func(t *testing.T) {
				b := startHeldBackend(t)
				grace := 10 * time.Second
				if id == "block" {
					grace = time.Second
				}
				p := startGatewayProcess(t, "--backend", "zoo="+b.addr, "--shutdown-grace", grace.String())
				var reply <-chan callOutcome
				if tr == "WebSocket" {
					ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
					defer cancel()
					client := sdk.NewClient(&sdk.Implementation{Name: "shutdown-test", Version: "1"}, nil)
					cs, err := client.Connect(ctx, &testkit.WebSocketTransport{URL: "ws" + strings.TrimPrefix(p.base, "http") + "/ws"}, nil)
					if err != nil {
						t.Fatal(err)
					}
					defer cs.Close()
					reply = callAsync(cs, id)
				} else {
					reply = sseCallAsync(t, p.base, id)
				}
				<-b.started
				signalled := time.Now()
				if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
					t.Fatal(err)
				}
				o := <-reply
				switch {
				case o.err != nil:
					t.Errorf("the call's reply was lost: %v", o.err)
				case id == "slow" && (o.res.IsError || !strings.Contains(o.res.Content[0].(*sdk.TextContent).Text, `"leo"`)):
					t.Errorf("the call in flight did not complete: %+v", o.res)
				case id == "block" && !o.res.IsError:
					t.Errorf("a cancelled call answered as a success: %+v", o.res)
				}
				if err, _ := p.wait(t, signalled, grace+5*time.Second); err != nil {
					t.Errorf("exit: %v, want 0", err)
				}
			})
		}
	}
}

// sseCallAsync opens a legacy SSE session at base with a raw client,
// calls GetAnimal of id on it, and delivers the call's reply, or the error
// the stream ended with before it came.
func sseCallAsync(t *testing.T, base, id string) <-chan callOutcome {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+"/sse", nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /sse: %v %v", resp, err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	br := bufio.NewReader(resp.Body)
	next := func() (name, data string, err error) { return testkit.NextEvent(br) }
	_, endpoint, err := next()
	if err != nil {
		t.Fatal(err)
	}
	post := func(body string) {
		t.Helper()
		r, err := http.Post(base+endpoint, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		r.Body.Close()
		if r.StatusCode != http.StatusAccepted {
			t.Fatalf("POST %s: %s", body, r.Status)
		}
	}
	post(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2024-11-05","capabilities":{},"clientInfo":{"name":"shutdown-test","version":"1"}}}`)
	if _, data, err := next(); err != nil || !strings.Contains(data, `"id":1`) {
		t.Fatalf("initialize: %s %v", data, err)
	}
	post(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	post(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"` + id + `"}}}`)
	out := make(chan callOutcome, 1)
	go func() {
		for {
			_, data, err := next()
			if err != nil {
				out <- callOutcome{err: fmt.Errorf("the stream ended without the reply: %w", err)}
				return
			}
			var m struct {
				ID     int                `json:"id"`
				Result sdk.CallToolResult `json:"result"`
			}
			if json.Unmarshal([]byte(data), &m) == nil && m.ID == 2 {
				out <- callOutcome{res: &m.Result}
				return
			}
		}
	}()
	return out
}
