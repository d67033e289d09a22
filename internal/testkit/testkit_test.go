package testkit

import (
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			println(err.Error())
			code = 1
		}
	}
	os.Exit(code)
}

// TestStartGateway runs the binary (fronting its demo backend), reads
// the address it announced, opens a session with the raw client, and
// stops it as an orchestrator would: it answers /healthz and a ping in
// the session, exits cleanly, and a second build is the same file.
func TestStartGateway(t *testing.T) {
	bin := GatewayBinary(t)
	g := StartGateway(t, bin, "--listen", "127.0.0.1:0")
	resp, err := http.Get(g.Base + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("/healthz: %d, want 200", resp.StatusCode)
	}
	WaitReady(t, g.Base, WaitTimeout) // the demo backend, discovered
	if code, body := Readyz(http.DefaultClient, g.Base); code != http.StatusOK || !strings.Contains(body, `"zoo":{"discovered":true`) {
		t.Errorf("/readyz once ready: %d %q, want 200 with the demo backend (zoo) discovered", code, body)
	}
	c := &Client{URL: g.Base + "/mcp"}
	if err := c.Initialize(t.Context(), "2025-11-25"); err != nil {
		t.Fatal(err)
	}
	if r, err := c.Post(t.Context(), []byte(`{"jsonrpc":"2.0","id":2,"method":"ping"}`)); err != nil || r.Status != http.StatusOK || r.Body != `{"jsonrpc":"2.0","id":2,"result":{}}` {
		t.Errorf("ping in the session: %+v, %v", r, err)
	}
	if err := g.Stop(); err != nil {
		t.Errorf("the gateway exited with %v after SIGTERM, want a clean exit", err)
	}
	if again, err := build("./cmd/gateway", "gateway"); err != nil || again != bin {
		t.Errorf("second build: %q, %v; want the cached %q", again, err, bin)
	}
}

func TestFreePort(t *testing.T) {
	l, err := net.Listen("tcp", FreeAddr(t))
	if err != nil {
		t.Fatalf("listening on a free address: %v", err)
	}
	l.Close()
}

// TestResponseMessage: the JSON-RPC answer of a response is its body, or
// of an event stream the last data line with an id, past the
// notifications sent before it.
func TestResponseMessage(t *testing.T) {
	for _, tc := range []struct {
		contentType, body, want string
	}{
		{"application/json", `{"jsonrpc":"2.0","id":1,"result":{}}`, `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"text/event-stream", "event: message\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n" +
			"id: 7\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\n", `{"jsonrpc":"2.0","id":1,"result":{}}`},
		{"text/event-stream", "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n", ""},
	} {
		r := &Response{Status: http.StatusOK, Header: http.Header{"Content-Type": {tc.contentType}}, Body: tc.body}
		if got := r.Message(); got != tc.want {
			t.Errorf("%s %q: Message() = %q, want %q", tc.contentType, tc.body, got, tc.want)
		}
	}
}

// TestPoll: Poll returns as soon as its condition holds, and reports
// false once its bound has passed with the condition still false.
func TestPoll(t *testing.T) {
	n := 0
	if !Poll(time.Second, func() bool { n++; return n == 3 }) || n != 3 {
		t.Errorf("a condition true at the third check: checked %d times", n)
	}
	start := time.Now()
	if Poll(50*time.Millisecond, func() bool { return false }) {
		t.Error("a condition never true: Poll reported it held")
	}
	if took := time.Since(start); took < 50*time.Millisecond {
		t.Errorf("a condition never true: Poll gave up after %v, before its 50ms bound", took)
	}
}
