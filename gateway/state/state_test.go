package state_test

import (
	"context"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/grpc-mcp-gateway/gateway/gateway/mcp"
	"github.com/grpc-mcp-gateway/gateway/gateway/results"
	"github.com/grpc-mcp-gateway/gateway/gateway/state"
	"github.com/grpc-mcp-gateway/gateway/internal/redistest"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

// TestMain checks that no goroutine outlives the tests. The Redis
// client's pool, after failing to dial, probes the address once a second
// from a goroutine of its own that ends at its first wake-up after Close:
// the check waits (up to 5 s) for such goroutines to end rather than
// finding them asleep.
func TestMain(m *testing.M) {
	code := m.Run()
	if code == 0 {
		err := goleak.Find()
		for deadline := time.Now().Add(5 * time.Second); err != nil && time.Now().Before(deadline); err = goleak.Find() {
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// open is a replica's view of srv's store, closed with the test.
func open(t *testing.T, url string, opts *state.Options) *state.Redis {
	t.Helper()
	r, err := state.Open(url, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestResultsShared: a result kept through one replica is read through
// another, by its owner only.
func TestResultsShared(t *testing.T) {
	srv := redistest.Start(t, nil)
	a, b := open(t, srv.URL(), nil), open(t, srv.URL(), nil)
	ctx := context.Background()
	id, err := a.Put(ctx, "session s1", "alice", []byte(`{"big":true}`))
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.Get(ctx, "session s1", id)
	if err != nil || string(got) != `{"big":true}` {
		t.Fatalf("Get through the other replica = %q, %v", got, err)
	}
	for _, c := range []struct{ owner, id string }{{"session s2", id}, {"session s1", "NOSUCHID"}} {
		if _, err := b.Get(ctx, c.owner, c.id); !errors.Is(err, results.ErrNotFound) {
			t.Errorf("Get(%q, %q) = %v, want results.ErrNotFound", c.owner, c.id, err)
		}
	}
	// Another fleet's prefix sees nothing of this one's.
	other := open(t, srv.URL(), &state.Options{Prefix: "fleet2"})
	if _, err := other.Get(ctx, "session s1", id); !errors.Is(err, results.ErrNotFound) {
		t.Errorf("another prefix read the result: %v", err)
	}
}

// TestResultsBounded: the shared store keeps results.Store's bounds and
// order of eviction, and its TTL.
func TestResultsBounded(t *testing.T) {
	srv := redistest.Start(t, nil)
	ctx := context.Background()
	t.Run("a principal over its share loses its own oldest", func(t *testing.T) {
		r := open(t, srv.URL(), &state.Options{Prefix: "quota", Results: results.StoreOptions{MaxEntries: 10, MaxEntriesPerPrincipal: 2}})
		var ids []string
		for i := range 3 {
			id, err := r.Put(ctx, "o", "alice", []byte{byte('a' + i)})
			if err != nil {
				t.Fatal(err)
			}
			ids = append(ids, id)
		}
		bob, err := r.Put(ctx, "o", "bob", []byte("b"))
		if err != nil {
			t.Fatal(err)
		}
		for i, want := range []bool{false, true, true} {
			if _, err := r.Get(ctx, "o", ids[i]); (err == nil) != want {
				t.Errorf("alice's result %d kept = %v, want %v", i, err == nil, want)
			}
		}
		if _, err := r.Get(ctx, "o", bob); err != nil {
			t.Errorf("bob's result: %v", err)
		}
	})
	t.Run("a full store takes from the principal holding most", func(t *testing.T) {
		r := open(t, srv.URL(), &state.Options{Prefix: "full", Results: results.StoreOptions{MaxBytes: 100, MaxBytesPerPrincipal: -1}})
		big1, _ := r.Put(ctx, "o", "alice", make([]byte, 40))
		big2, _ := r.Put(ctx, "o", "alice", make([]byte, 40))
		small, _ := r.Put(ctx, "o", "bob", make([]byte, 10))
		if _, err := r.Put(ctx, "o", "bob", make([]byte, 30)); err != nil {
			t.Fatal(err)
		}
		for _, c := range []struct {
			name, id string
			kept     bool
		}{{"alice's oldest", big1, false}, {"alice's newest", big2, true}, {"bob's", small, true}} {
			if _, err := r.Get(ctx, "o", c.id); (err == nil) != c.kept {
				t.Errorf("%s kept = %v, want %v", c.name, err == nil, c.kept)
			}
		}
		if n, b, err := r.Len(ctx); err != nil || n != 3 || b != 80 {
			t.Errorf("Len = %d results, %d bytes, %v; want 3, 80", n, b, err)
		}
		if _, err := r.Put(ctx, "o", "bob", make([]byte, 101)); !errors.Is(err, results.ErrTooLarge) {
			t.Errorf("Put over the store's size = %v, want results.ErrTooLarge", err)
		}
	})
	t.Run("results expire", func(t *testing.T) {
		r := open(t, srv.URL(), &state.Options{Prefix: "ttl", Results: results.StoreOptions{TTL: 100 * time.Millisecond}})
		id, err := r.Put(ctx, "o", "", []byte("x"))
		if err != nil {
			t.Fatal(err)
		}
		// Redis's clock expires the key.
		testkit.WaitFor(t, "the result to expire after its TTL", func() bool {
			_, err := r.Get(ctx, "o", id)
			return errors.Is(err, results.ErrNotFound)
		})
		if _, err := r.Put(ctx, "o", "", []byte("yy")); err != nil {
			t.Fatal(err)
		}
		if n, b, _ := r.Len(ctx); n != 1 || b != 2 {
			t.Errorf("after a put, the expired result is still counted: %d results, %d bytes", n, b)
		}
	})
}

// revoked is r.Revoked, failing the test on an error.
func revoked(t *testing.T, r *state.Redis, key string) bool {
	t.Helper()
	ok, err := r.Revoked(context.Background(), key)
	if err != nil {
		t.Fatalf("Revoked(%q): %v", key, err)
	}
	return ok
}

// listener records what a replica is told.
type listener struct {
	mu        sync.Mutex
	revoked   []string
	cancelled []string
}

func (l *listener) SessionRevoked(sid string) {
	l.mu.Lock()
	l.revoked = append(l.revoked, sid)
	l.mu.Unlock()
}

func (l *listener) RequestCancelled(sid string, id json.RawMessage) {
	l.mu.Lock()
	l.cancelled = append(l.cancelled, sid+" "+string(id))
	l.mu.Unlock()
}

func (l *listener) seen() ([]string, []string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.revoked...), append([]string(nil), l.cancelled...)
}

// TestRevokeEveryReplica: when Revoke returns, every replica answers
// Revoked and was told; a replica that starts later reads it.
func TestRevokeEveryReplica(t *testing.T) {
	srv := redistest.Start(t, nil)
	var reps []*state.Redis
	var ls []*listener
	for range 3 {
		r := open(t, srv.URL(), nil)
		l := &listener{}
		r.Listen(l)
		reps, ls = append(reps, r), append(ls, l)
	}
	// Revoke counts the subscribers; wait until all three are.
	testkit.WaitFor(t, "three subscribers", func() bool {
		n, _ := reps[0].Subscribers(context.Background())
		return n == 3
	})
	if err := reps[1].Revoke(context.Background(), "tok-1", "alice", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	for i, r := range reps {
		if !revoked(t, r, "tok-1") {
			t.Errorf("replica %d: tok-1 not revoked when Revoke returned", i)
		}
		if rev, _ := ls[i].seen(); len(rev) != 1 || rev[0] != "tok-1" {
			t.Errorf("replica %d was told %q, want [tok-1]", i, rev)
		}
		if revoked(t, r, "tok-2") {
			t.Errorf("replica %d: tok-2 revoked", i)
		}
	}
	if err := reps[0].Revoke(context.Background(), "tok-old", "alice", time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if revoked(t, reps[2], "tok-old") {
		t.Error("a token revoked past its expiry counts as revoked (it is expired anyway)")
	}
	late := open(t, srv.URL(), nil)
	testkit.WaitFor(t, "a replica started later reads the revocations", func() bool { return revoked(t, late, "tok-1") })
}

// TestCancelReachesEveryReplica: a cancellation published by one replica
// reaches the listeners of all, with the request id as sent.
func TestCancelReachesEveryReplica(t *testing.T) {
	srv := redistest.Start(t, nil)
	a, b := open(t, srv.URL(), nil), open(t, srv.URL(), nil)
	l := &listener{}
	b.Listen(l)
	testkit.WaitFor(t, "two subscribers", func() bool { n, _ := a.Subscribers(context.Background()); return n == 2 })
	for _, id := range []string{`7`, `"req 7"`} {
		if err := a.Cancel(context.Background(), "tok-1", json.RawMessage(id)); err != nil {
			t.Fatal(err)
		}
	}
	testkit.WaitFor(t, "both cancellations arrive", func() bool { _, c := l.seen(); return len(c) == 2 })
	if _, c := l.seen(); c[0] != `tok-1 7` || c[1] != `tok-1 "req 7"` {
		t.Errorf("cancellations = %q", c)
	}
}

// TestStoreLostAndBack: without Redis, what needs it fails at once with
// ErrUnavailable, the mirror still answers, Up says so; when Redis is back
// everything works again without a restart.
func TestStoreLostAndBack(t *testing.T) {
	srv := redistest.Start(t, nil)
	r := open(t, srv.URL(), nil)
	ctx := context.Background()
	testkit.WaitFor(t, "up", func() bool { up, _ := r.Up(); return up })
	if err := r.Revoke(ctx, "tok-1", "alice", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	srv.Stop()
	start := time.Now()
	if _, err := r.Put(ctx, "o", "", []byte("x")); !errors.Is(err, state.ErrUnavailable) {
		t.Errorf("Put without Redis = %v, want ErrUnavailable", err)
	}
	if _, err := r.Get(ctx, "o", "X"); !errors.Is(err, state.ErrUnavailable) || errors.Is(err, results.ErrNotFound) {
		t.Errorf("Get without Redis = %v, want ErrUnavailable (not not-found)", err)
	}
	if err := r.Revoke(ctx, "tok-2", "alice", time.Now().Add(time.Hour)); !errors.Is(err, state.ErrUnavailable) {
		t.Errorf("Revoke without Redis = %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("three failing calls took %s: the store's timeouts are not applied", d)
	}
	if !revoked(t, r, "tok-1") {
		t.Error("the mirror forgot a revocation while Redis is away")
	}
	testkit.WaitFor(t, "Up reports the loss", func() bool { up, why := r.Up(); return !up && why != "" })
	srv.Start()
	testkit.WaitFor(t, "Up reports the store back", func() bool { up, _ := r.Up(); return up })
	id, err := r.Put(ctx, "o", "", []byte("x"))
	if err != nil {
		t.Fatalf("Put after Redis came back: %v", err)
	}
	if _, err := r.Get(ctx, "o", id); err != nil {
		t.Fatalf("Get after Redis came back: %v", err)
	}
	l := &listener{}
	r.Listen(l)
	other := open(t, srv.URL(), nil)
	testkit.WaitFor(t, "resubscribed", func() bool { n, _ := other.Subscribers(ctx); return n == 2 })
	if err := other.Cancel(ctx, "tok-3", json.RawMessage(`1`)); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "a cancellation reaches the replica that lost Redis", func() bool { _, c := l.seen(); return len(c) == 1 })
}

// TestOpenErrors: a bad URL or prefix is refused naming what is wrong; a
// password from Options authenticates, and a missing one is reported.
func TestOpenErrors(t *testing.T) {
	for _, c := range []struct{ url, prefix, want string }{
		{"http://127.0.0.1:6379", "", `not scheme "http"`},
		{"redis://127.0.0.1:6379/notanumber", "", "state URL"},
		{"redis://127.0.0.1:6379/0", "has space", "state prefix"},
	} {
		_, err := state.Open(c.url, &state.Options{Prefix: c.prefix})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Open(%q, prefix %q) = %v, want an error with %q", c.url, c.prefix, err, c.want)
		}
	}
	for _, u := range []string{"redis://user:s3cret@127.0.0.1:1/0?bogus=1", "redis://user:s3cret@127.0.0.1:63x79/0"} {
		if _, err := state.Open(u, nil); err == nil || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("Open(%q): an error shows the URL's password: %v", u, err)
		}
	}
	srv := redistest.Start(t, &redistest.Options{Password: "pw-from-file"})
	r, err := state.Open("unix://"+srv.Socket, &state.Options{Password: "pw-from-file"})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.Ping(context.Background()); err != nil {
		t.Errorf("over the unix socket with the password: %v", err)
	}
	noPW, err := state.Open(srv.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer noPW.Close()
	if err := noPW.Ping(context.Background()); err == nil || !errors.Is(err, state.ErrUnavailable) {
		t.Errorf("without the password: %v", err)
	}
}

// TestSlotsAcrossReplicas: a principal's slots are counted on every
// replica together; a released slot is free again; the slots of a replica
// that stopped without releasing come free when their lease ends, while a
// live replica's outlive it (renewed).
func TestSlotsAcrossReplicas(t *testing.T) {
	srv := redistest.Start(t, nil)
	ctx := context.Background()
	opts := &state.Options{SlotLease: 3 * time.Second}
	a, b := open(t, srv.URL(), opts), open(t, srv.URL(), opts)
	for _, r := range []*state.Redis{a, b} {
		testkit.WaitFor(t, "up", func() bool { up, _ := r.Up(); return up })
	}
	relA, err := a.AcquireSlot(ctx, "alice", 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := b.AcquireSlot(ctx, "alice", 2); err != nil {
		t.Fatal(err)
	}
	if _, err := b.AcquireSlot(ctx, "alice", 2); !errors.Is(err, mcp.ErrNoSlot) {
		t.Fatalf("a third slot of two = %v, want mcp.ErrNoSlot", err)
	}
	if rel, err := a.AcquireSlot(ctx, "bob", 2); err != nil {
		t.Fatalf("another principal: %v", err)
	} else {
		rel()
	}
	relA()
	testkit.WaitFor(t, "a released slot is free again", func() bool {
		rel, err := b.AcquireSlot(ctx, "alice", 2)
		if err == nil {
			rel()
		}
		return err == nil
	})
	// b holds one slot of alice's; c takes the other and stops without
	// giving it back.
	c, err := state.Open(srv.URL(), opts)
	if err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "up", func() bool { up, _ := c.Up(); return up })
	cTook := time.Now() // c's lease ends no sooner than SlotLease after this
	if _, err := c.AcquireSlot(ctx, "alice", 2); err != nil {
		t.Fatal(err)
	}
	c.Close()
	if _, err := a.AcquireSlot(ctx, "alice", 2); !errors.Is(err, mcp.ErrNoSlot) {
		t.Fatalf("the stopped replica's slot is free before its lease ended: %v", err)
	}
	// Past the lease: b renewed its slot, c could not. b took its slot
	// before c, so a slot gone before c's lease could end is b's, whose
	// first lease ended unrenewed; one gone after it, with one left, is
	// c's. (The lease stays 3 s: a replica renews on its once-a-second
	// health check, so a shorter one would leave b's renewal no margin.)
	testkit.WaitFor(t, "a slot of alice's to come free", func() bool {
		n, err := a.InFlight(ctx, "alice")
		return err == nil && n < 2
	})
	if took := time.Since(cTook); took < opts.SlotLease {
		t.Errorf("a slot of alice's came free %v after c took its, before its %v lease could end: b's, which b renews", took, opts.SlotLease)
	}
	if n, err := a.InFlight(ctx, "alice"); err != nil || n != 1 {
		t.Errorf("after the lease alice holds %d slots (%v), want 1: b's, renewed", n, err)
	}
	rel, err := a.AcquireSlot(ctx, "alice", 2)
	if err != nil {
		t.Fatalf("the stopped replica's slot did not come free after its lease: %v", err)
	}
	rel()
	srv.Stop()
	testkit.WaitFor(t, "down", func() bool { up, _ := a.Up(); return !up })
	start := time.Now()
	if _, err := a.AcquireSlot(ctx, "alice", 2); !errors.Is(err, state.ErrUnavailable) {
		t.Errorf("without Redis = %v, want ErrUnavailable", err)
	}
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("AcquireSlot waited %s for a store known to be down", d)
	}
}

// TestResultsSurviveDriftedTallies: keys of the result store lost behind
// its back (a Redis that evicts keys, an operator's DEL) never make the
// put script spin, which would block the whole Redis.
func TestResultsSurviveDriftedTallies(t *testing.T) {
	srv := redistest.Start(t, nil)
	ctx := context.Background()
	r := open(t, srv.URL(), &state.Options{Prefix: "drift", Results: results.StoreOptions{MaxEntries: 4, MaxEntriesPerPrincipal: 2, MaxBytes: 64}})
	var ids []string
	for range 2 {
		id, err := r.Put(ctx, "o", "alice", make([]byte, 10))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer raw.Close()
	if err := raw.HDel(ctx, "{drift}:who", ids[0]).Err(); err != nil {
		t.Fatal(err)
	}
	if err := raw.Del(ctx, "{drift}:wbytes", "{drift}:wcount").Err(); err != nil {
		t.Fatal(err)
	}
	if err := raw.Set(ctx, "{drift}:bytes", 60, 0).Err(); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		id, err := r.Put(pctx, "o", "alice", make([]byte, 10))
		cancel()
		if err != nil {
			t.Fatalf("put %d after the tallies drifted: %v", i, err)
		}
		if _, err := r.Get(ctx, "o", id); err != nil {
			t.Fatalf("get %d after the tallies drifted: %v", i, err)
		}
	}
	if err := raw.Ping(ctx).Err(); err != nil {
		t.Fatalf("Redis after the puts: %v", err)
	}
}

// TestTLS: a rediss:// store is reached over TLS, its certificate checked
// against Options.RootCAs; one the client does not trust is refused.
func TestTLS(t *testing.T) {
	srv := redistest.Start(t, &redistest.Options{TLS: true})
	pem, err := os.ReadFile(srv.CAFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(pem)
	r := open(t, srv.URL(), &state.Options{RootCAs: pool})
	id, err := r.Put(context.Background(), "o", "", []byte("over TLS"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Get(context.Background(), "o", id); err != nil || string(got) != "over TLS" {
		t.Errorf("Get over TLS = %q, %v", got, err)
	}
	untrusting, err := state.Open(srv.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer untrusting.Close()
	if err := untrusting.Ping(context.Background()); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("a certificate the client does not trust: %v", err)
	}
	if _, err := state.Open(strings.Replace(srv.URL(), "rediss://", "redis://", 1), &state.Options{RootCAs: pool}); err == nil {
		t.Error("RootCAs with a plaintext URL accepted")
	}
}

// TestSentinel: with ?master_name=, the URL names a Sentinel, which tells
// the store where the master is.
func TestSentinel(t *testing.T) {
	master := redistest.Start(t, &redistest.Options{Password: "master-password"})
	port := redistest.StartSentinel(t, master)
	r := open(t, fmt.Sprintf("redis://127.0.0.1:%d/0?master_name=mymaster", port), &state.Options{Password: "master-password"})
	id, err := r.Put(context.Background(), "o", "", []byte("through the Sentinel"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Get(context.Background(), "o", id); err != nil || string(got) != "through the Sentinel" {
		t.Errorf("Get = %q, %v", got, err)
	}
	raw := redis.NewClient(&redis.Options{Addr: master.Addr(), Password: "master-password"})
	defer raw.Close()
	if n, err := raw.Exists(context.Background(), "{mcpgw}:r:"+mcp.FleetKey(id)).Result(); err != nil || n != 1 {
		t.Errorf("the result is not on the master the Sentinel names: %d, %v", n, err)
	}
	if _, err := state.Open("unix:///tmp/x.sock?master_name=mymaster", nil); err == nil {
		t.Error("a unix socket with master_name accepted")
	}
}

// TestRevocationBounds: the fleet keeps at most MaxRevocationsPerPrincipal
// revocations of one principal and MaxRevocations in all; beyond either a
// Revoke records nothing, every replica still serves the session, and the
// error says which bound and when room comes. A session revoked again
// takes no room; an expired revocation frees its room; anonymous sessions
// count against the fleet's bound only; negative bounds are none.
func TestRevocationBounds(t *testing.T) {
	srv := redistest.Start(t, nil)
	ctx := context.Background()
	opts := &state.Options{Prefix: "bounds", MaxRevocations: 5, MaxRevocationsPerPrincipal: 3}
	a, b := open(t, srv.URL(), opts), open(t, srv.URL(), opts)
	hour := time.Now().Add(time.Hour).Truncate(time.Second)
	for i := range 3 {
		if err := a.Revoke(ctx, fmt.Sprintf("alice-%d", i), "sub:alice", hour.Add(time.Duration(i)*time.Second)); err != nil {
			t.Fatal(err)
		}
	}
	var le *mcp.RevocationLimitError
	if err := a.Revoke(ctx, "alice-3", "sub:alice", hour); !errors.As(err, &le) || !le.PerPrincipal || le.Limit != 3 || !le.Free.Equal(hour) {
		t.Fatalf("alice's fourth revocation of three = %v (%+v), want the principal's bound, room at %s", err, le, hour)
	}
	for i, r := range []*state.Redis{a, b} {
		if revoked(t, r, "alice-3") {
			t.Errorf("replica %d: a refused revocation took effect", i)
		}
		if !revoked(t, r, "alice-0") {
			t.Errorf("replica %d: alice's first revocation is gone", i)
		}
	}
	if err := a.Revoke(ctx, "alice-0", "sub:alice", hour); err != nil {
		t.Errorf("a session revoked again (it takes no room): %v", err)
	}
	if err := b.Revoke(ctx, "bob-0", "sub:bob", hour); err != nil {
		t.Errorf("another principal, within its own share: %v", err)
	}
	if err := b.Revoke(ctx, "anon-0", "", hour); err != nil {
		t.Errorf("an anonymous session, within the fleet's bound: %v", err)
	}
	for _, who := range []string{"sub:carol", ""} {
		if err := b.Revoke(ctx, "more", who, hour); !errors.As(err, &le) || le.PerPrincipal || le.Limit != 5 {
			t.Errorf("a sixth revocation in a fleet of five, by %q = %v, want the fleet's bound", who, err)
		}
	}

	short := open(t, srv.URL(), &state.Options{Prefix: "short", MaxRevocationsPerPrincipal: 1})
	soon := time.Now().Add(time.Second)
	if err := short.Revoke(ctx, "x-0", "sub:x", soon); err != nil {
		t.Fatal(err)
	}
	if err := short.Revoke(ctx, "x-1", "sub:x", hour); !errors.As(err, &le) {
		t.Fatalf("over the bound: %v", err)
	}
	testkit.WaitFor(t, "the expired revocation to make room", func() bool { return short.Revoke(ctx, "x-1", "sub:x", hour) == nil })

	unbounded := open(t, srv.URL(), &state.Options{Prefix: "unbounded", MaxRevocations: -1, MaxRevocationsPerPrincipal: -1})
	for i := range 20 {
		if err := unbounded.Revoke(ctx, fmt.Sprintf("u-%d", i), "sub:u", hour); err != nil {
			t.Fatalf("revocation %d without bounds: %v", i, err)
		}
	}
}

// TestRevocationsReadInPages: a replica started on 200,000 revocations
// (what a caller looping initialize and DELETE leaves behind; the issue
// saw 2,000,000 make a replica fail its one read under a 2 s deadline,
// forever, while serving deleted sessions again) reads them in short
// pages. While its read is held half way, it refuses a revoked session by
// asking Redis, serves others, and its store stays up through several
// health checks; once the read ends the mirror answers alone.
func TestRevocationsReadInPages(t *testing.T) {
	srv := redistest.Start(t, nil)
	ctx := context.Background()
	raw := redis.NewClient(&redis.Options{Addr: srv.Addr()})
	defer raw.Close()
	exp := float64(time.Now().Add(time.Hour).Unix())
	const n, batch = 200_000, 10_000
	for i := 0; i < n; i += batch {
		zs := make([]redis.Z, 0, batch)
		for j := i; j < i+batch; j++ {
			zs = append(zs, redis.Z{Score: exp, Member: fmt.Sprintf("session-%07d", j)})
		}
		if _, err := raw.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.ZAdd(ctx, "{big}:revoked", zs...)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	if err := raw.ZAdd(ctx, "{big}:revoked", redis.Z{Score: exp, Member: "victim"},
		redis.Z{Score: float64(time.Now().Add(-time.Minute).Unix()), Member: "expired"}).Err(); err != nil {
		t.Fatal(err)
	}

	var pages atomic.Int32
	held, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	logs := &testkit.SyncBuffer{}
	opts := &state.Options{Prefix: "big", Logger: slog.New(slog.NewTextHandler(logs, nil))}
	var checks, downs atomic.Int32
	state.WithCheckHook(opts, func(up bool) {
		checks.Add(1)
		if !up {
			downs.Add(1)
		}
	})
	state.WithPageHook(opts, func(ctx context.Context, page int) {
		pages.Add(1)
		if page == 1 {
			once.Do(func() { close(held) })
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
	})
	r := open(t, srv.URL(), opts)
	var releaseOnce sync.Once
	t.Cleanup(func() { releaseOnce.Do(func() { close(release) }) }) // before open's Close
	select {
	case <-held:
	case <-time.After(testkit.WaitTimeout):
		t.Fatal("the read of the revocations did not reach its second page")
	}
	if r.RevocationsLoaded() {
		t.Fatal("loaded with the read held")
	}
	for key, want := range map[string]bool{"victim": true, "session-0199999": true, "never-revoked": false, "expired": false} {
		if got := revoked(t, r, key); got != want {
			t.Errorf("before the read ended, Revoked(%q) = %v, want %v", key, got, want)
		}
	}
	// Three health checks (one a second) pass with the read held, and
	// none reports the store down.
	from := checks.Load()
	testkit.WaitFor(t, "three health checks with the read held", func() bool { return checks.Load() >= from+3 })
	if d := downs.Load(); d > 0 {
		up, why := r.Up()
		t.Fatalf("the store was reported down %d times while a read was slow (now up %v: %s)", d, up, why)
	}
	releaseOnce.Do(func() { close(release) })
	testkit.WaitFor(t, "the read of the revocations to end", r.RevocationsLoaded)
	if p := pages.Load(); p < n/1000/2 {
		t.Errorf("%d revocations read in %d pages: the read is not paged", n, p)
	}
	for key, want := range map[string]bool{"victim": true, "session-0000000": true, "session-0123456": true, "never-revoked": false, "expired": false} {
		if got := revoked(t, r, key); got != want {
			t.Errorf("after the read, Revoked(%q) = %v, want %v", key, got, want)
		}
	}
	if strings.Contains(logs.String(), "level=WARN") {
		t.Errorf("warnings while reading:\n%s", logs)
	}
}

// TestRevokedUnsure: a replica that has not read the revocations and
// cannot reach Redis answers Revoked with an error, not "not revoked"
// (a session deleted meanwhile would be served again); once Redis
// answers it reads them and knows.
func TestRevokedUnsure(t *testing.T) {
	srv := redistest.Start(t, nil)
	ctx := context.Background()
	first := open(t, srv.URL(), nil)
	srv.Stop()
	r, err := state.Open(srv.URL(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, key := range []string{"deleted", "other"} {
		if ok, err := r.Revoked(ctx, key); !errors.Is(err, state.ErrUnavailable) {
			t.Errorf("Revoked(%q) with Redis down and nothing read = %v, %v; want ErrUnavailable", key, ok, err)
		}
	}
	srv.Start() // empty: the test's Redis keeps nothing across a restart
	testkit.WaitFor(t, "a revocation through the other replica", func() bool {
		return first.Revoke(ctx, "deleted", "sub:alice", time.Now().Add(time.Hour)) == nil
	})
	testkit.WaitFor(t, "the replica to read the revocations", r.RevocationsLoaded)
	testkit.WaitFor(t, "the replica to know of the revocation", func() bool { return revoked(t, r, "deleted") })
	if revoked(t, r, "other") {
		t.Error("a session never deleted is revoked")
	}
}
