package testkit

import (
	"bytes"
	"sync"
	"testing"
	"time"
)

// WaitTimeout is how long WaitFor waits before failing the test. It is
// long because it bounds a hang, not a speed: the suite runs under -race
// on shared two-core machines, where a condition reached in a millisecond
// alone can take seconds.
const WaitTimeout = 30 * time.Second

// pollInterval is how often WaitFor checks its condition.
const pollInterval = 5 * time.Millisecond

// WaitFor polls cond until it holds, failing the test naming what was
// awaited if it does not within WaitTimeout. cond is called from the
// test's goroutine.
func WaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(WaitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", WaitTimeout, what)
		}
		time.Sleep(pollInterval)
	}
}

// SyncBuffer is a bytes.Buffer safe for the writes of other goroutines
// (a logger's, a server's) and the test's reads.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String returns everything written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}
