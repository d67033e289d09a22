package mcp

import (
	"context"
	"sync"
	"time"
)

// Task polls of listen streams.
//
// A 2026-07-28 subscriptions/listen stream that names task ids follows
// them by polling the handler (in the gateway, a backend's GetOperation
// per poll). Unpaced, MaxListenTasks ids per stream, each polled every
// second, on every request slot of MaxInFlight would be tens of thousands
// of backend calls a second. So polls are paced, and the pace is shared:
//
//   - all streams together make at most MaxTaskPolls polls a second;
//   - an authenticated principal's streams at most half of them
//     (DefaultPrincipalShare), so another principal's tasks are still
//     followed while one principal asks for more than its share;
//   - a stream polls one task at a time, each no oftener than the poll
//     interval the task suggests;
//   - turns are taken in the order they were asked for, so every stream
//     waiting is served in turn.
//
// A stream whose turns come late tells of a change later; nothing is
// lost, since each notification carries the task's whole current state.

// pacer starts turns at least interval apart, in the order they were
// asked for: a token bucket that holds one token.
type pacer struct {
	interval time.Duration

	mu   sync.Mutex
	next time.Time // when the next turn may start
}

// wait reserves the next turn and returns when it starts, or ctx's error
// if ctx ends first. A turn given up is given back only when no later one
// was reserved meanwhile, so the pace may fall a little under the bound
// when waiters leave, never over it.
func (p *pacer) wait(ctx context.Context) error {
	p.mu.Lock()
	at := time.Now()
	if p.next.After(at) {
		at = p.next
	}
	p.next = at.Add(p.interval)
	p.mu.Unlock()
	d := time.Until(at)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		p.mu.Lock()
		if p.next.Equal(at.Add(p.interval)) {
			p.next = at
		}
		p.mu.Unlock()
		return ctx.Err()
	}
}

// pollBudgets are the server's pace and each authenticated principal's
// share of it, the latter held while the principal has a stream.
type pollBudgets struct {
	all      pacer
	perShare time.Duration // the interval of a principal's share

	mu     sync.Mutex
	shares map[string]*share
}

type share struct {
	pacer
	streams int
}

func newPollBudgets(perSecond int) *pollBudgets {
	return &pollBudgets{
		all:      pacer{interval: time.Second / time.Duration(perSecond)},
		perShare: time.Second / time.Duration(max(1, perSecond/DefaultPrincipalShare)),
		shares:   make(map[string]*share),
	}
}

// pollBudget is what one stream polls under.
type pollBudget struct {
	b     *pollBudgets
	who   string
	share *share // nil for anonymous streams, bounded by the server's pace alone
}

// forStream returns the budget of a stream of principal who ("" for
// anonymous); release it when the stream ends.
func (b *pollBudgets) forStream(who string) *pollBudget {
	pb := &pollBudget{b: b, who: who}
	if who == "" {
		return pb
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	sh := b.shares[who]
	if sh == nil {
		sh = &share{pacer: pacer{interval: b.perShare}}
		b.shares[who] = sh
	}
	sh.streams++
	pb.share = sh
	return pb
}

// wait returns when the stream may make its next poll: its principal's
// turn, then the server's.
func (pb *pollBudget) wait(ctx context.Context) error {
	if pb.share != nil {
		if err := pb.share.wait(ctx); err != nil {
			return err
		}
	}
	return pb.b.all.wait(ctx)
}

// release ends the stream's use of its principal's share.
func (pb *pollBudget) release() {
	if pb.share == nil {
		return
	}
	pb.b.mu.Lock()
	defer pb.b.mu.Unlock()
	if pb.share.streams--; pb.share.streams == 0 {
		delete(pb.b.shares, pb.who)
	}
}
