package testkit

import (
	"bytes"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"
)

// WaitTimeout is how long WaitFor waits before failing the test. It is
// long because it bounds a hang, not a speed: the suite runs under -race
// on shared two-core machines, where a condition reached in a millisecond
// alone can take seconds.
const WaitTimeout = 30 * time.Second

// pollInterval is how often Poll first checks its condition, and
// maxPollInterval how often at most once it has waited long: a condition
// that costs something to check (another process's /metrics, a Redis
// query) is not asked hundreds of times a second through a long wait,
// and a wait overshoots its condition by a tenth of its length at most.
const (
	pollInterval    = 5 * time.Millisecond
	maxPollInterval = 100 * time.Millisecond
)

// Poll calls cond until it holds or d has passed, and reports whether it
// held; cond is called from the caller's goroutine, once more at the
// deadline. It is for a test that reports a wait's failure itself (with
// Errorf, or with what the last check saw); WaitWithin fails the test.
func Poll(d time.Duration, cond func() bool) bool {
	start := time.Now()
	deadline := start.Add(d)
	for !cond() {
		now := time.Now()
		if now.After(deadline) {
			return false
		}
		time.Sleep(min(max(pollInterval, now.Sub(start)/10), maxPollInterval, deadline.Sub(now)+time.Millisecond))
	}
	return true
}

// WaitWithin polls cond until it holds, failing the test naming what was
// awaited if it does not within d: for a wait whose bound the test
// chooses (a Redis failover, a subprocess's readiness), where WaitFor's
// is wrong.
func WaitWithin(tb testing.TB, d time.Duration, what string, cond func() bool) {
	tb.Helper()
	if !Poll(d, cond) {
		tb.Fatalf("timed out after %s waiting for %s", d, what)
	}
}

// WaitFor is WaitWithin bounded by WaitTimeout.
func WaitFor(tb testing.TB, what string, cond func() bool) {
	tb.Helper()
	WaitWithin(tb, WaitTimeout, what, cond)
}

// Readyz asks the gateway at base (http://HOST:PORT) for its /readyz and
// returns the status and body; 0 and the error's text when it did not
// answer (not listening yet, or gone).
func Readyz(hc *http.Client, base string) (int, string) {
	resp, err := hc.Get(base + "/readyz")
	if err != nil {
		return 0, err.Error()
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return 0, err.Error()
	}
	return resp.StatusCode, string(b)
}

// readyzTimeout bounds one /readyz request of WaitReady: a gateway
// building a large catalog on a loaded machine answers slowly, but an
// answer that takes longer is asked again.
const readyzTimeout = 5 * time.Second

// WaitReady waits, at most d, until the gateway at base (another
// process, which signals nothing) answers /readyz with 200, failing the
// test with the last answer otherwise.
func WaitReady(tb testing.TB, base string, d time.Duration) {
	tb.Helper()
	hc := &http.Client{Timeout: readyzTimeout}
	var code int
	var body string
	if !Poll(d, func() bool { code, body = Readyz(hc, base); return code == http.StatusOK }) {
		tb.Fatalf("%s/readyz did not answer 200 within %s: %d %.300s", base, d, code, body)
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
