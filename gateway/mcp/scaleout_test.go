package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// roundRobin is a load balancer without stickiness: each request goes to
// the next replica.
type roundRobin struct {
	targets []string // base URLs
	next    atomic.Uint64
	base    http.RoundTripper
}

func (rr *roundRobin) RoundTrip(req *http.Request) (*http.Response, error) {
	i := rr.next.Add(1) % uint64(len(rr.targets))
	r := req.Clone(req.Context())
	target := strings.TrimPrefix(rr.targets[i], "http://")
	r.URL.Host = target
	r.Host = target
	return rr.base.RoundTrip(r)
}

// replicas notifies every replica, as a catalog refresh would.
type replicas []*Server

func (rs replicas) NotifyToolListChanged() {
	for _, s := range rs {
		s.NotifyToolListChanged()
	}
}

func (rs replicas) NotificationStreams() int {
	n := 0
	for _, s := range rs {
		n += s.NotificationStreams()
	}
	return n
}

var testSecret = bytes.Repeat([]byte("k"), 32)

// startReplicas starts n gateways sharing a session secret, each counting
// the requests it serves.
func startReplicas(t *testing.T, n int, opts StreamableHTTPOptions) (replicas, []string, []*atomic.Int64) {
	t.Helper()
	var rs replicas
	var urls []string
	var counts []*atomic.Int64
	for range n {
		s := NewServer(testImpl, newFakeHandler(t, &ToolListOptions{PageSize: 3}), nil)
		h := streamableHandler(t, s, &opts)
		count := new(atomic.Int64)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			count.Add(1)
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(func() {
			shutdown(t, s)
			srv.Close()
		})
		rs = append(rs, s)
		urls = append(urls, srv.URL)
		counts = append(counts, count)
	}
	return rs, urls, counts
}

// TestScaleOutRoundRobin: two replicas with the same secret, no sticky
// sessions, the reference client at 2025-11-25 end to end.
func TestScaleOutRoundRobin(t *testing.T) {
	rs, urls, counts := startReplicas(t, 2, StreamableHTTPOptions{SessionSecret: testSecret})
	hc := &http.Client{Transport: &roundRobin{targets: urls, base: http.DefaultTransport}}
	defer hc.CloseIdleConnections()
	ev := &sdkEvents{changed: make(chan struct{}, 1)}
	cs, err := newSDKClient(ev).Connect(context.Background(),
		&sdk.StreamableClientTransport{Endpoint: urls[0], HTTPClient: hc, MaxRetries: -1},
		&sdk.ClientSessionOptions{ProtocolVersion: Version20251125})
	if err != nil {
		t.Fatalf("Connect: %v", err)
	}
	exerciseSDK(t, rs, cs, ev, Version20251125)
	if err := cs.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	for i, c := range counts {
		if c.Load() < 3 {
			t.Errorf("replica %d served %d requests: the balancer did not alternate", i, c.Load())
		}
	}
}

func scaleOutHandler(t *testing.T, opts StreamableHTTPOptions) (*Server, *fakeHandler, *streamable, *httpClient) {
	t.Helper()
	h := newFakeHandler(t, nil)
	s := NewServer(testImpl, h, nil)
	hh := streamableHandler(t, s, &opts)
	srv := httptest.NewServer(hh)
	t.Cleanup(func() {
		shutdown(t, s)
		srv.Close()
	})
	return s, h, hh.(*originGuard).next.(*streamable), &httpClient{t: t, url: srv.URL, c: srv.Client()}
}

func TestSessionTokens(t *testing.T) {
	other := bytes.Repeat([]byte("o"), 32)
	_, h, st, c := scaleOutHandler(t, StreamableHTTPOptions{SessionSecret: testSecret, PreviousSessionSecrets: [][]byte{other}, SessionTTL: time.Hour})
	c.initialize()
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if got := c.status("POST", ping, nil); got != 200 {
		t.Fatalf("ping: %d", got)
	}
	if n := st.sessionCount(); n != 0 {
		t.Errorf("%d sessions held while idle, want 0", n)
	}

	// A call in flight holds a transient session, which cancellation and
	// DELETE reach on this replica; it is dropped when the call ends.
	done := make(chan int, 1)
	go func() {
		done <- c.status("POST", `{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"block"}}`, nil)
	}()
	<-h.started
	if n := st.sessionCount(); n != 1 {
		t.Errorf("%d sessions during a call, want 1", n)
	}
	if got := c.status("POST", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}`, nil); got != http.StatusAccepted {
		t.Errorf("cancel: %d", got)
	}
	if got := <-done; got != http.StatusAccepted {
		t.Errorf("cancelled call: %d, want 202 (no response)", got)
	}
	testkit.WaitFor(t, "the condition", func() bool { return st.sessionCount() == 0 })

	// DELETE cannot revoke a token: it still works afterwards.
	if got := c.status("DELETE", "", nil); got != http.StatusNoContent {
		t.Errorf("DELETE: %d", got)
	}
	if got := c.status("POST", ping, nil); got != 200 {
		t.Errorf("after DELETE: %d (tokens are valid until they expire)", got)
	}

	now := time.Now()
	good := c.sid
	for _, tc := range []struct {
		name string
		sid  string
		want int
	}{
		{"valid", good, 200},
		{"signed with a previous secret", mustMint(t, other, Version20250618, time.Hour, now), 200},
		{"signed with an unknown secret", mustMint(t, bytes.Repeat([]byte("x"), 32), Version20250618, time.Hour, now), http.StatusNotFound},
		{"expired", mustMint(t, testSecret, Version20250618, time.Hour, now.Add(-2*time.Hour)), http.StatusNotFound},
		{"tampered", tamper(good), http.StatusNotFound},
		{"truncated", good[:len(good)-4], http.StatusNotFound},
		{"garbage", "not-a-token", http.StatusNotFound},
		{"too long", strings.Repeat("A", 500), http.StatusNotFound},
	} {
		c.sid = tc.sid
		if got := c.status("POST", ping, nil); got != tc.want {
			t.Errorf("%s: %d, want %d", tc.name, got, tc.want)
		}
	}
}

func mustMint(t *testing.T, secret []byte, version string, ttl time.Duration, at time.Time) string {
	t.Helper()
	k, err := newTokenKeys(secret, nil, ttl, "")
	if err != nil {
		t.Fatal(err)
	}
	return k.mint(version, []byte(`{}`), "", at)
}

// tamper flips one bit of the token's payload (its revision).
func tamper(tok string) string {
	raw, _ := base64.RawURLEncoding.DecodeString(tok)
	raw[5] ^= 1
	return base64.RawURLEncoding.EncodeToString(raw)
}

// TestSessionSecretTooShort: a secret too short to key the tokens is an
// error naming the option, from StreamableHTTPHandler (which then
// registers nothing with the server) and from Check alike.
func TestSessionSecretTooShort(t *testing.T) {
	s := NewServer(testImpl, newFakeHandler(t, nil), nil)
	opts := &StreamableHTTPOptions{SessionSecret: []byte("short")}
	const want = "mcp: StreamableHTTPOptions.SessionSecret: want at least 32 random bytes, got 5"
	h, err := s.StreamableHTTPHandler(opts)
	if h != nil || err == nil || err.Error() != want {
		t.Errorf("StreamableHTTPHandler = %v, %v, want the error %q", h, err, want)
	}
	if err := opts.Check(); err == nil || err.Error() != want {
		t.Errorf("Check = %v, want %q", err, want)
	}
	s.mu.Lock()
	registered := len(s.onShutdown)
	s.mu.Unlock()
	if registered != 0 {
		t.Errorf("%d shutdown hooks registered by a refused handler", registered)
	}
	if _, err := s.StreamableHTTPHandler(&StreamableHTTPOptions{SessionSecret: testSecret}); err != nil {
		t.Errorf("a 32-byte secret: %v", err)
	}
	shutdown(t, s)
}

// TestAbandonedSessionsExpire: in the normal (memory) mode, sessions a
// client never ends are dropped after SessionIdleTimeout, so memory stays
// bounded however many clients walk away.
func TestAbandonedSessionsExpire(t *testing.T) {
	_, _, st, c := scaleOutHandler(t, StreamableHTTPOptions{SessionIdleTimeout: 100 * time.Millisecond})
	const n = 50
	var wg sync.WaitGroup
	ids := make(chan string, n)
	for range n {
		wg.Go(func() {
			cc := *c
			cc.initialize()
			ids <- cc.sid
		})
	}
	wg.Wait()
	close(ids)
	// Each initialize made a session of its own (some may have expired
	// already on a loaded machine: counting them at this point would be a
	// race with the idle timer, not a check).
	seen := map[string]bool{}
	for id := range ids {
		seen[id] = true
	}
	if len(seen) != n {
		t.Fatalf("%d distinct sessions, want %d", len(seen), n)
	}
	testkit.WaitFor(t, "the condition", func() bool { return st.sessionCount() == 0 })
}

// TestScaleOutClientDisconnectCancels: closing the HTTP request cancels the
// call on whichever replica runs it.
func TestScaleOutClientDisconnectCancels(t *testing.T) {
	_, h, _, c := scaleOutHandler(t, StreamableHTTPOptions{SessionSecret: testSecret})
	c.initialize()
	ctx, cancel := context.WithCancel(context.Background())
	raw := c.raw()
	errc := make(chan error, 1)
	go func() {
		resp, err := raw.Send(ctx, http.MethodPost, []byte(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`), nil)
		if err == nil {
			resp.Body.Close()
		}
		errc <- err
	}()
	<-h.started
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("client: %v", err)
	}
	testkit.WaitFor(t, "the condition", func() bool { v, _ := h.lastCtx.Load().(error); return errors.Is(v, context.Canceled) })
}

// memFleet is a Fleet in memory shared by the replicas of a test: what one
// revokes or cancels, every listener is told at once. It records the keys
// it is given, to show that no token reaches a fleet's store. limit, when
// positive, bounds the revocations it keeps per principal; unsure makes
// Revoked fail, as a store's does while it cannot be asked.
type memFleet struct {
	mu        sync.Mutex
	revoked   map[string]bool
	listeners []FleetListener
	keys      []string
	limit     int
	byWho     map[string]int
	unsure    bool
}

func (f *memFleet) Revoked(_ context.Context, key string) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.unsure {
		return false, fmt.Errorf("%w: the mirror is not loaded and the store does not answer", ErrFleetUnavailable)
	}
	return f.revoked[key], nil
}

func (f *memFleet) Revoke(_ context.Context, key, principal string, expires time.Time) error {
	f.mu.Lock()
	if f.limit > 0 && f.byWho[principal] >= f.limit {
		f.mu.Unlock()
		return &RevocationLimitError{Limit: f.limit, PerPrincipal: true, Free: time.Now().Add(time.Minute)}
	}
	if f.byWho == nil {
		f.byWho = map[string]int{}
	}
	f.byWho[principal]++
	f.revoked[key] = true
	f.keys = append(f.keys, key)
	ls := f.listeners
	f.mu.Unlock()
	for _, l := range ls {
		l.SessionRevoked(key)
	}
	return nil
}

func (f *memFleet) Cancel(_ context.Context, key string, id json.RawMessage) error {
	f.mu.Lock()
	f.keys = append(f.keys, key)
	ls := f.listeners
	f.mu.Unlock()
	for _, l := range ls {
		l.RequestCancelled(key, id)
	}
	return nil
}

func (f *memFleet) Listen(l FleetListener) {
	f.mu.Lock()
	f.listeners = append(f.listeners, l)
	f.mu.Unlock()
}

// TestFleetSessions: with a Fleet, a cancellation sent to one replica
// stops the call running on another, and DELETE through one ends the
// session on both; the fleet is given keys, never the token.
func TestFleetSessions(t *testing.T) {
	fleet := &memFleet{revoked: map[string]bool{}}
	opts := StreamableHTTPOptions{SessionSecret: testSecret, Fleet: fleet}
	_, ha, _, a := scaleOutHandler(t, opts)
	_, hb, _, b := scaleOutHandler(t, opts)
	a.initialize()
	b.sid = a.sid
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	if got := b.status("POST", ping, nil); got != 200 {
		t.Fatalf("the session on the other replica: %d", got)
	}

	done := make(chan int, 1)
	go func() {
		done <- a.status("POST", `{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"block"}}`, nil)
	}()
	<-ha.started
	if got := b.status("POST", `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"b"}}`, nil); got != http.StatusAccepted {
		t.Errorf("cancel through the other replica: %d", got)
	}
	select {
	case got := <-done:
		if got != http.StatusAccepted {
			t.Errorf("the call cancelled from the other replica: %d, want 202 (no response)", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the call was not cancelled from the other replica")
	}
	select {
	case <-hb.started:
		t.Error("the other replica ran a call")
	default:
	}

	if got := b.status("DELETE", "", nil); got != http.StatusNoContent {
		t.Fatalf("DELETE through the other replica: %d", got)
	}
	for name, c := range map[string]*httpClient{"a": a, "b": b} {
		if got := c.status("POST", ping, nil); got != http.StatusNotFound {
			t.Errorf("replica %s after DELETE: %d, want 404", name, got)
		}
	}
	fleet.mu.Lock()
	defer fleet.mu.Unlock()
	if len(fleet.keys) != 2 {
		t.Fatalf("the fleet was given %d keys, want 2 (one cancellation, one revocation)", len(fleet.keys))
	}
	for _, k := range fleet.keys {
		if k != FleetKey(a.sid) || strings.Contains(k, a.sid) {
			t.Errorf("the fleet was given %q for the session, want FleetKey of its token and never the token", k)
		}
	}
}

// TestFleetNeedsTokens: a Fleet without SessionSecret is an error naming
// both options.
func TestFleetNeedsTokens(t *testing.T) {
	s := NewServer(testImpl, newFakeHandler(t, nil), nil)
	_, err := s.StreamableHTTPHandler(&StreamableHTTPOptions{Fleet: &memFleet{revoked: map[string]bool{}}})
	if err == nil || !strings.Contains(err.Error(), "StreamableHTTPOptions.Fleet needs SessionSecret") {
		t.Errorf("Fleet without SessionSecret: %v", err)
	}
}

// TestFleetDeleteRefused: a DELETE the fleet will not record (its bound
// of revocations reached) is 429 with Retry-After and a message saying
// that the session was not deleted and until when it stays valid; the
// session is left whole on every replica, its running call included,
// rather than ended on one replica only.
func TestFleetDeleteRefused(t *testing.T) {
	fleet := &memFleet{revoked: map[string]bool{}, limit: 1}
	opts := StreamableHTTPOptions{SessionSecret: testSecret, Fleet: fleet}
	_, ha, _, a := scaleOutHandler(t, opts)
	_, _, _, b := scaleOutHandler(t, opts)
	a.initialize()
	first := a.sid
	if got := a.status("DELETE", "", nil); got != http.StatusNoContent {
		t.Fatalf("the first DELETE: %d", got)
	}
	a.sid = ""
	a.initialize()
	b.sid = a.sid
	done := make(chan int, 1)
	go func() {
		done <- a.status("POST", `{"jsonrpc":"2.0","id":"b","method":"tools/call","params":{"name":"block"}}`, nil)
	}()
	<-ha.started
	resp := b.do("DELETE", "", nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a DELETE over the bound: %d, Retry-After %q; want 429 with it", resp.StatusCode, resp.Header.Get("Retry-After"))
	}
	for _, want := range []string{"the session was not deleted", "stays valid until its token expires at", "most the fleet keeps for one principal"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("the refusal %s does not say %q", body, want)
		}
	}
	select {
	case got := <-done:
		t.Fatalf("a refused DELETE ended the call in flight: %d", got)
	default:
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	for name, c := range map[string]*httpClient{"a": a, "b": b} {
		if got := c.status("POST", ping, nil); got != 200 {
			t.Errorf("replica %s after the refused DELETE: %d, want the session still served", name, got)
		}
	}
	// Room again: the DELETE goes through and ends the call.
	fleet.mu.Lock()
	fleet.limit = 0
	fleet.mu.Unlock()
	if got := b.status("DELETE", "", nil); got != http.StatusNoContent {
		t.Errorf("DELETE with room: %d", got)
	}
	select {
	case <-done:
	case <-time.After(testkit.WaitTimeout):
		t.Fatal("the DELETE did not end the call in flight")
	}
	a.sid = first
	if got := a.status("POST", ping, nil); got != http.StatusNotFound {
		t.Errorf("the session deleted first: %d, want 404", got)
	}
}

// TestFleetRevokedUnsure: while the fleet cannot tell whether a session
// was deleted (its store unreachable before this replica read the
// revocations), the session's requests are refused with 503 and never
// reach the handler.
func TestFleetRevokedUnsure(t *testing.T) {
	fleet := &memFleet{revoked: map[string]bool{}}
	_, h, _, c := scaleOutHandler(t, StreamableHTTPOptions{SessionSecret: testSecret, Fleet: fleet})
	c.initialize()
	fleet.mu.Lock()
	fleet.unsure = true
	fleet.mu.Unlock()
	resp := c.do("POST", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"block"}}`, nil)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusServiceUnavailable || !strings.Contains(string(body), "cannot tell yet whether the session was deleted") {
		t.Errorf("a call while the fleet is unsure: %d %s; want 503 saying why", resp.StatusCode, body)
	}
	select {
	case <-h.started:
		t.Error("the call reached the handler")
	default:
	}
	fleet.mu.Lock()
	fleet.unsure = false
	fleet.mu.Unlock()
	if got := c.status("POST", `{"jsonrpc":"2.0","id":3,"method":"ping"}`, nil); got != 200 {
		t.Errorf("once the fleet can tell: %d", got)
	}
}

// TestSessionTokenEndpoint: a scale-out session token says which endpoint
// issued it. Handlers sharing the secret but not the endpoint (the
// gateway's /mcp and a toolset's /mcp/NAME) answer another's token as an
// unknown session, a DELETE included, and the session goes on where it
// was issued; an endpoint name too long for the token's MAC input is
// refused, naming the option.
func TestSessionTokenEndpoint(t *testing.T) {
	endpoints := []string{"", "/mcp/a", "/mcp/b"}
	clients := make([]*httpClient, len(endpoints))
	for i, e := range endpoints {
		_, _, _, clients[i] = scaleOutHandler(t, StreamableHTTPOptions{SessionSecret: testSecret, Endpoint: e})
		clients[i].initialize()
	}
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	for i, issued := range clients {
		for j, at := range clients {
			elsewhere := *at
			elsewhere.sid = issued.sid
			want := http.StatusNotFound
			if i == j {
				want = http.StatusOK
			}
			if got := elsewhere.status("POST", ping, nil); got != want {
				t.Errorf("a token of %q at %q: %d, want %d", endpoints[i], endpoints[j], got, want)
			}
			if i != j {
				if got := elsewhere.status("DELETE", "", nil); got != http.StatusNotFound {
					t.Errorf("DELETE of a token of %q at %q: %d, want 404", endpoints[i], endpoints[j], got)
				}
			}
		}
	}
	for i, c := range clients {
		if got := c.status("POST", ping, nil); got != http.StatusOK {
			t.Errorf("the session of %q after the others' attempts: %d", endpoints[i], got)
		}
	}
	s := NewServer(testImpl, newFakeHandler(t, nil), nil)
	defer shutdown(t, s)
	long := &StreamableHTTPOptions{SessionSecret: testSecret, Endpoint: "/mcp/" + strings.Repeat("x", 251)}
	const want = "mcp: StreamableHTTPOptions.Endpoint: want at most 255 bytes, got 256"
	if _, err := s.StreamableHTTPHandler(long); err == nil || err.Error() != want {
		t.Errorf("StreamableHTTPHandler with a long endpoint: %v, want %q", err, want)
	}
	if err := long.Check(); err == nil || err.Error() != want {
		t.Errorf("Check with a long endpoint: %v, want %q", err, want)
	}
}
