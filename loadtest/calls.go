package loadtest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
)

// calls matches the answers a session's stream carries to the calls
// waiting for them, by JSON-RPC id: for the WebSocket and legacy SSE
// clients, whose answers arrive apart from their requests.
type calls struct {
	what    string // the stream, for errors: "websocket", "sse stream"
	next    atomic.Int64
	mu      sync.Mutex
	waiting map[string]chan response
	done    chan struct{} // closed when the stream has ended
	err     error         // why it ended; read after done
}

func newCalls(what string) *calls {
	return &calls{what: what, waiting: map[string]chan response{}, done: make(chan struct{})}
}

// do sends the request through send and waits for its answer.
func (c *calls) do(ctx context.Context, method, params string, send func([]byte) error) (json.RawMessage, error) {
	id := strconv.FormatInt(c.next.Add(1), 10)
	ch := make(chan response, 1)
	c.mu.Lock()
	select {
	case <-c.done:
		c.mu.Unlock()
		return nil, fmt.Errorf("loadtest: %s closed: %w", c.what, c.err)
	default:
	}
	c.waiting[id] = ch
	c.mu.Unlock()
	forget := func() {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
	}
	if err := send([]byte(`{"jsonrpc":"2.0","id":` + id + `,"method":"` + method + `","params":` + params + `}`)); err != nil {
		forget()
		return nil, err
	}
	select {
	case r, ok := <-ch:
		if !ok {
			return nil, fmt.Errorf("loadtest: %s closed: %w", c.what, c.err)
		}
		return r.outcome()
	case <-ctx.Done():
		forget()
		return nil, ctx.Err()
	}
}

// deliver hands a message read from the stream to the call it answers;
// notifications (progress, list changed) answer none.
func (c *calls) deliver(msg []byte) {
	var r response
	if json.Unmarshal(msg, &r) != nil || r.Method != "" || len(r.ID) == 0 {
		return
	}
	c.mu.Lock()
	ch := c.waiting[string(r.ID)]
	delete(c.waiting, string(r.ID))
	c.mu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// end records why the stream ended and fails the calls still waiting.
func (c *calls) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.err = err
	for id, ch := range c.waiting {
		close(ch)
		delete(c.waiting, id)
	}
	close(c.done)
}
