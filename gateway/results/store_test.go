package results_test

import (
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
	id, ok := s.Put("alice", []byte(`{"a":1}`))
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
	if _, ok := s.Put("o", make([]byte, 1001)); ok {
		t.Fatal("a result larger than the store must not be kept")
	}
	var ids []string
	for range 4 {
		id, _ := s.Put("o", make([]byte, 300))
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
		s.Put("o", []byte("x"))
	}
	if n, _ := s.Len(); n != 5 {
		t.Fatalf("%d results; the count bound is 5", n)
	}
	// Many puts and expiries keep the queue compact (no growth with
	// every result ever put): exercised, and checked by the bounds above.
	for i := range 10000 {
		s.Put(strings.Repeat("o", i%3), []byte("y"))
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
