package results_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grpc-mcp-gateway/gateway/gateway/results"
)

// clock is a test clock the store reads.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

func TestStoreOwnerAndExpiry(t *testing.T) {
	c := &clock{now: time.Unix(1000, 0)}
	s := results.NewStore(&results.StoreOptions{TTL: time.Minute, Now: c.Now})
	id, ok := s.Put("alice", "", []byte(`{"a":1}`))
	if !ok || len(id) < 26 {
		t.Fatalf("put: %q %v", id, ok)
	}
	if got, ok := s.Get("alice", id); !ok || string(got) != `{"a":1}` {
		t.Fatal("the owner must read it back")
	}
	if _, ok := s.Get("bob", id); ok {
		t.Fatal("another owner must not read it")
	}
	if _, ok := s.Get("alice", "nope"); ok {
		t.Fatal("unknown id")
	}
	c.advance(59 * time.Second)
	if _, ok := s.Get("alice", id); !ok {
		t.Fatal("expired early")
	}
	c.advance(time.Second)
	if _, ok := s.Get("alice", id); ok {
		t.Fatal("readable after its TTL")
	}
	if n, b := s.Len(); n != 0 || b != 0 {
		t.Fatalf("expired result still held: %d results, %d bytes", n, b)
	}
}

func TestStoreBounds(t *testing.T) {
	s := results.NewStore(&results.StoreOptions{MaxBytes: 1000, MaxEntries: 5})
	if _, ok := s.Put("o", "", make([]byte, 1001)); ok {
		t.Fatal("a result larger than the store must not be kept")
	}
	var ids []string
	for range 4 {
		id, _ := s.Put("o", "", make([]byte, 300))
		ids = append(ids, id)
	}
	// 4 x 300 > 1000: the oldest went to make room.
	if n, b := s.Len(); n != 3 || b != 900 {
		t.Fatalf("%d results, %d bytes; want 3, 900", n, b)
	}
	if _, ok := s.Get("o", ids[0]); ok {
		t.Fatal("the oldest result must have gone first")
	}
	for range 10 {
		s.Put("o", "", []byte("x"))
	}
	if n, _ := s.Len(); n != 5 {
		t.Fatalf("%d results; the count bound is 5", n)
	}
	// Many puts and expiries keep the queue compact (no growth with
	// every result ever put): exercised, and checked by the bounds above.
	for i := range 10000 {
		s.Put(strings.Repeat("o", i%3), "", []byte("y"))
	}
	if n, b := s.Len(); n != 5 || b != 5 {
		t.Fatalf("%d results, %d bytes", n, b)
	}
}

func TestStoreDefaults(t *testing.T) {
	s := results.NewStore(nil)
	if s.TTL() != results.DefaultTTL {
		t.Fatal(s.TTL())
	}
}

// TestStorePrincipalQuota: one principal keeps at most its share of the
// store (half by default, in bytes and in count, over all its owners),
// making room from its own oldest results; when the store is full, the
// principal holding the most pays, so a principal that filled its share
// cannot push out another's results within their TTL. Anonymous results
// have no share of their own.
func TestStorePrincipalQuota(t *testing.T) {
	s := results.NewStore(&results.StoreOptions{MaxBytes: 1000, MaxEntries: 10})
	if _, ok := s.Put("a1", "alice", make([]byte, 501)); ok {
		t.Fatal("a result larger than a principal's share must not be kept")
	}
	bob, _ := s.Put("b1", "bob", make([]byte, 200))
	var alice []string
	for i := range 6 {
		// Over two of her sessions: the share is the principal's.
		id, ok := s.Put(fmt.Sprintf("a%d", i%2), "alice", make([]byte, 200))
		if !ok {
			t.Fatalf("alice's result %d not kept", i)
		}
		alice = append(alice, id)
	}
	if _, ok := s.Get("b1", bob); !ok {
		t.Error("alice's results pushed out bob's")
	}
	// 500 bytes each: alice keeps her two newest.
	for i, id := range alice {
		_, ok := s.Get(fmt.Sprintf("a%d", i%2), id)
		if want := i >= 4; ok != want {
			t.Errorf("alice's result %d kept: %v, want %v", i, ok, want)
		}
	}
	if n, b := s.Len(); n != 3 || b != 600 {
		t.Errorf("%d results, %d bytes; want 3, 600", n, b)
	}

	// The count: 5 each.
	s = results.NewStore(&results.StoreOptions{MaxBytes: 1000, MaxEntries: 10})
	bob, _ = s.Put("b", "bob", []byte("b"))
	alice = alice[:0]
	for range 7 {
		id, _ := s.Put("a", "alice", []byte("a"))
		alice = append(alice, id)
	}
	if _, ok := s.Get("b", bob); !ok {
		t.Error("alice's results pushed out bob's")
	}
	if _, ok := s.Get("a", alice[1]); ok {
		t.Error("alice keeps more than her share of results")
	}
	if _, ok := s.Get("a", alice[2]); !ok {
		t.Error("alice lost more than she had to")
	}

	// Three principals within their shares fill the store: the one that
	// holds the most pays, not whoever is oldest.
	s = results.NewStore(&results.StoreOptions{MaxBytes: 1000, MaxEntries: 100})
	bob, _ = s.Put("b", "bob", make([]byte, 100))
	carol1, _ := s.Put("c", "carol", make([]byte, 450))
	carol2, _ := s.Put("c", "carol", make([]byte, 50))
	alice1, _ := s.Put("a", "alice", make([]byte, 400))
	if _, ok := s.Put("a", "alice", make([]byte, 100)); !ok {
		t.Fatal("alice's second result not kept")
	}
	if _, ok := s.Get("b", bob); !ok {
		t.Error("the store filled, and the principal holding the least paid")
	}
	if _, ok := s.Get("c", carol1); ok {
		t.Error("carol held the most (500 bytes): her oldest should have gone")
	}
	if _, ok := s.Get("c", carol2); !ok {
		t.Error("carol's newer result went, beyond the room needed")
	}
	if _, ok := s.Get("a", alice1); !ok {
		t.Error("alice's older result went, beyond the room needed")
	}

	// Anonymous results have no share: they may fill the store.
	s = results.NewStore(&results.StoreOptions{MaxBytes: 1000, MaxEntries: 10})
	for range 4 {
		s.Put("o", "", make([]byte, 250))
	}
	if n, b := s.Len(); n != 4 || b != 1000 {
		t.Errorf("anonymous: %d results, %d bytes; want 4, 1000", n, b)
	}
}

// BenchmarkStorePutFull: a put into a full store whose every result is
// another principal's, the worst case of finding who pays (a scan of the
// principals, at most MaxEntries of them).
func BenchmarkStorePutFull(b *testing.B) {
	s := results.NewStore(&results.StoreOptions{MaxEntries: results.DefaultMaxEntries})
	data := make([]byte, 1024)
	names := make([]string, 2*results.DefaultMaxEntries)
	for i := range names {
		names[i] = fmt.Sprintf("p%d", i)
	}
	for i := range results.DefaultMaxEntries {
		s.Put(names[i], names[i], data)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s.Put(names[i], names[i], data)
		i = (i + 1) % len(names)
	}
}
