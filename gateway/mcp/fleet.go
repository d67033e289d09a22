package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
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
// gateway/state). A session is named to the fleet by its key,
// FleetKey(id), never by its token, which is a credential and must not sit
// in a shared store. Revoked is asked on every request of a token session,
// so it must answer from memory without blocking; Revoke and Cancel may
// talk to the store.
type Fleet interface {
	// Revoked reports whether the session of key was revoked by any
	// replica.
	Revoked(key string) bool
	// Revoke ends the session of key on every replica until expires, the
	// token's own expiry. It returns once every live replica has applied it (their
	// Revoked answers true and their listeners were told), or an error
	// when the fleet's store cannot be reached.
	Revoke(ctx context.Context, key string, expires time.Time) error
	// Cancel relays notifications/cancelled of request id in the session
	// of key to every replica; the one running the request cancels it.
	Cancel(ctx context.Context, key string, id json.RawMessage) error
	// Listen has l told of what other replicas (and this one) revoke and
	// cancel.
	Listen(l FleetListener)
}

// FleetListener is told what a Fleet's replicas revoke and cancel. Its
// methods must not block: they run on the fleet's one receiving
// goroutine.
type FleetListener interface {
	// SessionRevoked ends the session of key where this replica holds
	// it.
	SessionRevoked(key string)
	// RequestCancelled cancels request id of the session of key where
	// this replica runs it.
	RequestCancelled(key string, id json.RawMessage)
}

// FleetKey names session id to a Fleet: its SHA-256, base64url. Whoever
// reads the fleet's store learns which sessions were revoked or had a
// request cancelled, but holds no token to use.
func FleetKey(id string) string {
	sum := sha256.Sum256([]byte(id))
	return base64.RawURLEncoding.EncodeToString(sum[:])
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

// SessionRevoked ends this replica's transient session of key, if it
// holds one: its GET stream ends and its calls are cancelled. Later
// requests with its token get 404 through Fleet.Revoked.
func (h *streamable) SessionRevoked(key string) {
	h.mu.RLock()
	hs := h.byFleetKey[key]
	h.mu.RUnlock()
	if hs != nil {
		h.end(hs)
	}
}

// RequestCancelled cancels request id of the session of key if it runs
// here.
func (h *streamable) RequestCancelled(key string, id json.RawMessage) {
	h.mu.RLock()
	hs := h.byFleetKey[key]
	h.mu.RUnlock()
	if hs != nil {
		hs.cancel(id)
	}
}
