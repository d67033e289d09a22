package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"time"
)

// Fleet is what the replicas of a scale-out fleet (StreamableHTTPOptions.
// SessionSecret) share about sessions, so that requests a round-robin load
// balancer spreads over them behave as on one server:
//
//   - DELETE of a session token on any replica ends it on every replica
//     until the token would have expired;
//   - notifications/cancelled received by any replica reaches the call on
//     the replica running it.
//
// The gateway's implementation keeps both in Redis (package
// gateway/state). Revoked is asked on every request of a token session,
// so it must answer from memory without blocking; Revoke and Cancel may
// talk to the store.
type Fleet interface {
	// Revoked reports whether session token sid was revoked by any
	// replica.
	Revoked(sid string) bool
	// Revoke ends sid on every replica until expires, the token's own
	// expiry. It returns once every live replica has applied it (their
	// Revoked answers true and their listeners were told), or an error
	// when the fleet's store cannot be reached.
	Revoke(ctx context.Context, sid string, expires time.Time) error
	// Cancel relays notifications/cancelled of request id in session sid
	// to every replica; the one running the request cancels it.
	Cancel(ctx context.Context, sid string, id json.RawMessage) error
	// Listen has l told of what other replicas (and this one) revoke and
	// cancel.
	Listen(l FleetListener)
}

// FleetListener is told what a Fleet's replicas revoke and cancel. Its
// methods must not block: they run on the fleet's one receiving
// goroutine.
type FleetListener interface {
	// SessionRevoked ends session sid where this replica holds it.
	SessionRevoked(sid string)
	// RequestCancelled cancels request id of session sid where this
	// replica runs it.
	RequestCancelled(sid string, id json.RawMessage)
}

// FleetSlots counts requests in flight per principal across the replicas
// of a fleet (ServerOptions.FleetSlots).
type FleetSlots interface {
	// AcquireSlot takes one of principal's limit slots across the fleet
	// and returns what gives it back, which must not block. It fails with
	// ErrNoSlot when the principal holds all of them, and with another
	// error (ErrFleetUnavailable) when it cannot count; then the request
	// goes on.
	AcquireSlot(ctx context.Context, principal string, limit int) (release func(), err error)
}

// ErrNoSlot is FleetSlots' answer when a principal holds all its slots.
var ErrNoSlot = errors.New("no slot left for this principal in the fleet")

// ErrFleetUnavailable is wrapped by a Fleet's errors when its shared store
// cannot be reached; DELETE answers 503 with it.
var ErrFleetUnavailable = errors.New("the state store is unavailable")

// SessionRevoked ends this replica's transient session sid, if it holds
// one: its GET stream ends and its calls are cancelled. Later requests
// with sid get 404 through Fleet.Revoked.
func (h *streamable) SessionRevoked(sid string) {
	h.mu.RLock()
	hs := h.sessions[sid]
	h.mu.RUnlock()
	if hs != nil {
		h.end(hs)
	}
}

// RequestCancelled cancels request id of session sid if it runs here.
func (h *streamable) RequestCancelled(sid string, id json.RawMessage) {
	h.mu.RLock()
	hs := h.sessions[sid]
	h.mu.RUnlock()
	if hs != nil {
		hs.cancel(id)
	}
}
