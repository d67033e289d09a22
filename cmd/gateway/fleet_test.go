package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/grpc-mcp-gateway/gateway/internal/haproxytest"
	"github.com/grpc-mcp-gateway/gateway/internal/redistest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// fleetToken is the one principal of the fleet's clients; the replicas
// let it have fleetShare requests in flight, all replicas together.
const (
	fleetToken = "fleet-test-token-0123456789"
	fleetShare = 2
)

// fleet is three gateway processes sharing one Redis (--state) and one
// session secret, behind HAProxy balancing round-robin with no
// stickiness: the deployment of docs/transports.md, "A fleet".
type fleet struct {
	redis    *redistest.Server
	backend  *heldBackend
	replicas []*gatewayProcess
	lb       string // http://127.0.0.1:PORT, HAProxy's frontend
	servedBy *servedBy
}

// servedBy is an http.RoundTripper that records which replica HAProxy
// sent each request to (its X-Served-By header).
type servedBy struct {
	mu  sync.Mutex
	log []string // "METHOD replica" per request, in order
}

func (s *servedBy) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+fleetToken)
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err == nil {
		s.mu.Lock()
		s.log = append(s.log, req.Method+" "+resp.Header.Get("X-Served-By"))
		s.mu.Unlock()
	}
	return resp, err
}

func (s *servedBy) last(n int) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.log[max(0, len(s.log)-n):]...)
}

// startFleet starts Redis, the held zoo backend, three gateways and
// HAProxy, and waits until HAProxy sends requests to all three.
func startFleet(t *testing.T) *fleet {
	t.Helper()
	f := &fleet{redis: redistest.Start(t, nil), backend: startHeldBackend(t), servedBy: &servedBy{}}
	dir := t.TempDir()
	secret := filepath.Join(dir, "session-secret")
	b := make([]byte, 48)
	rand.Read(b)
	if err := os.WriteFile(secret, []byte(hex.EncodeToString(b)), 0o600); err != nil {
		t.Fatal(err)
	}
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte(fleetToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for range 3 {
		p := startGatewayProcess(t, "--backend", f.backend.addr, "--session-secret-file", secret,
			"--state", f.redis.URL(), "--max-result-bytes", "1024",
			"--bearer-tokens-file", tokens, "--max-in-flight-per-principal", fmt.Sprint(fleetShare))
		f.replicas = append(f.replicas, p)
		addrs = append(addrs, strings.TrimPrefix(p.base, "http://"))
	}
	f.lb = haproxytest.Start(t, addrs)
	return f
}

// connect opens a go-sdk session through the load balancer.
func (f *fleet) connect(t *testing.T, ctx context.Context) *sdk.ClientSession {
	t.Helper()
	client := sdk.NewClient(&sdk.Implementation{Name: "fleet", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &sdk.StreamableClientTransport{
		Endpoint:             f.lb + "/mcp",
		HTTPClient:           &http.Client{Transport: f.servedBy},
		MaxRetries:           -1,
		DisableStandaloneSSE: true,
	}, &sdk.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect through HAProxy: %v", err)
	}
	return cs
}

// post sends one JSON-RPC message of session sid to base and returns the
// status, the replica that served it (through HAProxy) and the body.
func post(ctx context.Context, base, sid, body string) (int, string, string, error) {
	c := &testkit.Client{URL: base + "/mcp", SessionID: sid, Version: "2025-11-25", Header: http.Header{"Authorization": {"Bearer " + fleetToken}}}
	r, err := c.Post(ctx, []byte(body))
	if err != nil {
		return 0, "", "", err
	}
	return r.Status, r.Header.Get("X-Served-By"), r.Body, nil
}

// cutResult calls ListAnimals, whose result is over the fleet's 1 KiB
// budget, and returns the link to the whole result and who served it.
func cutResult(t *testing.T, ctx context.Context, f *fleet, cs *sdk.ClientSession) (string, string) {
	t.Helper()
	res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_ListAnimals", Arguments: map[string]any{"pageSize": 100}})
	if err != nil {
		t.Fatal(err)
	}
	by := f.servedBy.last(1)[0]
	for _, c := range res.Content {
		if l, ok := c.(*sdk.ResourceLink); ok {
			return l.URI, by
		}
	}
	var text []string
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			text = append(text, tc.Text)
		}
	}
	t.Fatalf("ListAnimals: no resource_link to the whole result (isError %v): %s", res.IsError, strings.Join(text, " | "))
	return "", ""
}

// TestFleet: three replicas behind HAProxy, round-robin, no stickiness,
// one Redis. Each step sends its requests to different replicas, as the
// X-Served-By header HAProxy adds shows.
func TestFleet(t *testing.T) {
	f := startFleet(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cs := f.connect(t, ctx)
	sid := cs.ID()

	t.Run("a result cut on one replica is read whole through another", func(t *testing.T) {
		uri, cutBy := cutResult(t, ctx, f, cs)
		rr, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri})
		if err != nil {
			t.Fatalf("resources/read %s: %v", uri, err)
		}
		readBy := f.servedBy.last(1)[0]
		if cutBy == readBy {
			t.Fatalf("the cut and the read were both served by %q: the test shows nothing", cutBy)
		}
		if len(rr.Contents) != 1 || len(rr.Contents[0].Text) <= 1024 || !strings.Contains(rr.Contents[0].Text, `"animals"`) {
			t.Errorf("the whole result read through %s: %+v", readBy, rr.Contents)
		}
	})

	t.Run("a cancellation sent through one replica stops the call on another", func(t *testing.T) {
		type answer struct {
			status  int
			by, out string
			err     error
		}
		done := make(chan answer, 1)
		go func() {
			st, by, out, err := post(ctx, f.lb, sid, `{"jsonrpc":"2.0","id":"held-1","method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"block"}}}`)
			done <- answer{st, by, out, err}
		}()
		select {
		case <-f.backend.started:
		case <-time.After(20 * time.Second):
			t.Fatal("the held call never reached the backend")
		}
		st, cancelBy, out, err := post(ctx, f.lb, sid, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"held-1","reason":"test"}}`)
		if err != nil || st != http.StatusAccepted {
			t.Fatalf("notifications/cancelled: %d %s %v", st, out, err)
		}
		select {
		case err := <-f.backend.ended:
			if err != context.Canceled {
				t.Errorf("the backend's call ended with %v, want context.Canceled", err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the call on the other replica was not cancelled within 20s")
		}
		a := <-done
		if a.err != nil {
			t.Fatal(a.err)
		}
		if a.by == cancelBy {
			t.Fatalf("the call and its cancellation were both served by %q: the test shows nothing", a.by)
		}
		if strings.Contains(a.out, `"result"`) {
			t.Errorf("a cancelled request was answered (the spec says it gets no response): %s", a.out)
		}
	})

	t.Run("a principal's share of requests in flight holds across the fleet", func(t *testing.T) {
		type answer struct {
			by, out string
			err     error
		}
		held := make(chan answer, fleetShare)
		for i := range fleetShare {
			go func() {
				_, by, out, err := post(ctx, f.lb, sid, fmt.Sprintf(`{"jsonrpc":"2.0","id":"share-%d","method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"block"}}}`, i))
				held <- answer{by, out, err}
			}()
			select {
			case <-f.backend.started:
			case <-time.After(20 * time.Second):
				t.Fatal("a held call never reached the backend")
			}
		}
		// Each replica runs at most one of the principal's calls, so only
		// the fleet-wide count can refuse this one.
		_, refusedBy, out, err := post(ctx, f.lb, sid, `{"jsonrpc":"2.0","id":"over","method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"leo"}}}`)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(out, "across the gateway's endpoints and replicas") {
			t.Errorf("a call over the principal's fleet-wide share was not refused: %s", out)
		}
		for i := range fleetShare {
			if st, _, out, err := post(ctx, f.lb, sid, fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"share-%d"}}`, i)); err != nil || st != http.StatusAccepted {
				t.Fatalf("notifications/cancelled: %d %s %v", st, out, err)
			}
		}
		by := map[string]bool{refusedBy: true}
		for range fleetShare {
			<-f.backend.ended
			a := <-held
			if a.err != nil {
				t.Fatal(a.err)
			}
			by[a.by] = true
		}
		if len(by) != fleetShare+1 {
			t.Fatalf("the held calls and the refused one were served by %v: want %d replicas", by, fleetShare+1)
		}
		// The slots come back (in the background, after each call ended).
		testkit.WaitFor(t, "the principal's slots to come back", func() bool {
			_, _, out, err := post(ctx, f.lb, sid, `{"jsonrpc":"2.0","id":"after","method":"tools/call","params":{"name":"ZooService_GetAnimal","arguments":{"id":"leo"}}}`)
			return err == nil && strings.Contains(out, `"result"`)
		})
	})

	t.Run("DELETE through one replica ends the session on all", func(t *testing.T) {
		if err := cs.Close(); err != nil {
			t.Fatalf("close (DELETE): %v", err)
		}
		for i, p := range f.replicas {
			st, _, out, err := post(ctx, p.base, sid, `{"jsonrpc":"2.0","id":1,"method":"ping"}`)
			if err != nil {
				t.Fatal(err)
			}
			if st != http.StatusNotFound {
				t.Errorf("replica %d answered the deleted session: %d %s", i, st, out)
			}
		}
	})

	t.Run("the store lost and back", func(t *testing.T) {
		cs := f.connect(t, ctx)
		defer cs.Close()
		f.redis.Stop()
		for range 3 { // one call on each replica
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": "leo"}})
			if err != nil || res.IsError {
				t.Fatalf("a call that needs no store failed without it: %v %+v", err, res)
			}
		}
		res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_ListAnimals", Arguments: map[string]any{"pageSize": 100}})
		if err != nil {
			t.Fatal(err)
		}
		var note string
		for _, c := range res.Content {
			if tc, ok := c.(*sdk.TextContent); ok && strings.Contains(tc.Text, "cut to fit") {
				note = tc.Text
			}
		}
		if !strings.Contains(note, "could not be kept (the state store is unavailable") {
			t.Errorf("a cut result without the store does not say why it has no link: %q", note)
		}
		for i, p := range f.replicas {
			waitReadyz(t, p.base, func(body map[string]any) bool {
				st, _ := body["state"].(map[string]any)
				return st != nil && st["up"] == false && body["ready"] == true
			}, fmt.Sprintf("replica %d: /readyz ready with state.up false", i))
		}
		f.redis.Start()
		for i, p := range f.replicas {
			waitReadyz(t, p.base, func(body map[string]any) bool {
				st, _ := body["state"].(map[string]any)
				return st != nil && st["up"] == true
			}, fmt.Sprintf("replica %d: /readyz state.up true again", i))
		}
		uri, _ := cutResult(t, ctx, f, cs)
		if _, err := cs.ReadResource(ctx, &sdk.ReadResourceParams{URI: uri}); err != nil {
			t.Fatalf("resources/read after the store came back: %v", err)
		}
	})

	t.Run("a replica killed, the next calls succeed on the others", func(t *testing.T) {
		cs := f.connect(t, ctx)
		defer cs.Close()
		f.replicas[1].cmd.Process.Kill()
		<-f.replicas[1].exited // its port refuses connections from now on
		for i := range 6 {
			res, err := cs.CallTool(ctx, &sdk.CallToolParams{Name: "ZooService_GetAnimal", Arguments: map[string]any{"id": "leo"}})
			if err != nil || res.IsError {
				t.Fatalf("call %d after a replica died: %v %+v", i, err, res)
			}
		}
		for _, s := range f.servedBy.last(6) {
			if strings.HasSuffix(s, " g1") {
				t.Errorf("a request was answered by the dead replica: %v", f.servedBy.last(6))
			}
		}
	})
}

// waitReadyz polls base's /readyz until cond holds of its body.
func waitReadyz(t *testing.T, base string, cond func(map[string]any) bool, what string) {
	t.Helper()
	var last map[string]any
	defer func() {
		if t.Failed() {
			t.Logf("last /readyz: %v", last)
		}
	}()
	testkit.WaitFor(t, what, func() bool {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			return false
		}
		last = nil
		json.NewDecoder(resp.Body).Decode(&last)
		resp.Body.Close()
		return cond(last)
	})
}

// TestStateNotRequired: with --require-state=false a replica starts while
// Redis is down, is ready (its calls work) with /readyz saying the store
// is not up, and picks the store up when it comes, without a restart.
func TestStateNotRequired(t *testing.T) {
	srv := redistest.Start(t, nil)
	srv.Stop()
	secret := filepath.Join(t.TempDir(), "session-secret")
	if err := os.WriteFile(secret, []byte(strings.Repeat("s", 48)), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startGatewayProcess(t, "--session-secret-file", secret, "--state", srv.URL(), "--require-state=false")
	if !strings.Contains(p.logs.String(), "the state store does not answer; serving without it until it does") {
		t.Errorf("no warning that the store is away:\n%s", p.logs.String())
	}
	waitReadyz(t, p.base, func(body map[string]any) bool {
		st, _ := body["state"].(map[string]any)
		return body["ready"] == true && st != nil && st["up"] == false && st["error"] != ""
	}, "ready, with state.up false and why")
	srv.Start()
	waitReadyz(t, p.base, func(body map[string]any) bool {
		st, _ := body["state"].(map[string]any)
		return st != nil && st["up"] == true
	}, "state.up true once Redis answers")
}

// TestStateTLS: --state rediss:// with --state-ca reaches a Redis that
// serves TLS only, with a certificate from a private authority.
func TestStateTLS(t *testing.T) {
	srv := redistest.Start(t, &redistest.Options{TLS: true, Password: "tls-test-password"})
	dir := t.TempDir()
	secret, pw := filepath.Join(dir, "session-secret"), filepath.Join(dir, "state-password")
	if err := os.WriteFile(secret, []byte(strings.Repeat("s", 48)), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(pw, []byte("tls-test-password\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startGatewayProcess(t, "--session-secret-file", secret, "--state", srv.URL(), "--state-ca", srv.CAFile, "--state-password-file", pw)
	waitReadyz(t, p.base, func(body map[string]any) bool {
		st, _ := body["state"].(map[string]any)
		return st != nil && st["up"] == true
	}, "state.up over TLS")
}
