package loadtest

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"
)

// Outcome is one operation of a Background load.
type Outcome struct {
	End time.Time
	Dur time.Duration
	Err error
}

// Background keeps a load running while a test breaks something, and
// records every operation's outcome with the time it ended.
type Background struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	hc     *http.Client
	conns  []Conn

	mu       sync.Mutex
	outcomes []Outcome
	changed  chan struct{} // closed and replaced at each outcome
}

// StartBackground runs op in a loop on n sessions of g (the first ws of
// them over WebSocket, the others Streamable HTTP), each operation
// bounded by timeout, until Stop.
func StartBackground(ctx context.Context, g *Gateway, n, ws int, op Op, timeout time.Duration) (*Background, error) {
	ctx, cancel := context.WithCancel(ctx)
	b := &Background{cancel: cancel, hc: &http.Client{Transport: NewTransport()}, changed: make(chan struct{})}
	for i := range n {
		c, err := dial(ctx, b.hc, g.Base, i < ws)
		if err != nil {
			b.Stop()
			return nil, err
		}
		b.conns = append(b.conns, c)
	}
	for _, c := range b.conns {
		b.wg.Go(func() {
			for ctx.Err() == nil {
				opCtx, opCancel := context.WithTimeout(ctx, timeout)
				t := time.Now()
				err := op.Do(opCtx, c)
				opCancel()
				if ctx.Err() != nil {
					return // stopped: this one's outcome is the test's doing
				}
				b.record(Outcome{Dur: time.Since(t), Err: err})
				if err != nil {
					// Do not spin on a broken backend: errors come fast.
					time.Sleep(5 * time.Millisecond)
				}
			}
		})
	}
	return b, nil
}

func (b *Background) record(o Outcome) {
	b.mu.Lock()
	o.End = time.Now() // under the lock, so outcomes stay in order of End
	b.outcomes = append(b.outcomes, o)
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

// WaitFor waits until cond holds over the outcomes so far (at most d) and
// reports whether it did.
func (b *Background) WaitFor(d time.Duration, cond func([]Outcome) bool) bool {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for {
		b.mu.Lock()
		ok, ch := cond(b.outcomes), b.changed
		b.mu.Unlock()
		if ok {
			return true
		}
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// Since is the outcomes that ended after t.
func Since(all []Outcome, t time.Time) []Outcome {
	i, _ := slices.BinarySearchFunc(all, t, func(o Outcome, t time.Time) int { return o.End.Compare(t) })
	return all[i:]
}

// Count counts the outcomes that failed (errs) or succeeded (!errs).
func Count(os []Outcome, errs bool) int {
	n := 0
	for _, o := range os {
		if (o.Err != nil) == errs {
			n++
		}
	}
	return n
}

// Outcomes returns a copy of the outcomes so far, in the order they ended.
func (b *Background) Outcomes() []Outcome {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.outcomes)
}

// Stop ends the load, closes its sessions and returns every outcome.
func (b *Background) Stop() []Outcome {
	b.cancel()
	b.wg.Wait()
	for _, c := range b.conns {
		_ = c.Close()
	}
	b.hc.CloseIdleConnections()
	return b.Outcomes()
}
