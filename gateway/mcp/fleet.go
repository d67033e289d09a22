package mcp

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
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
// so it should answer from memory; until a replica holds every revocation
// in memory it may ask the store, and it must never answer "not revoked"
// for a session it cannot vouch for. Revoke and Cancel may talk to the
// store.
type Fleet interface {
	// Revoked reports whether the session of key was revoked by any
	// replica. An error (wrapping ErrFleetUnavailable) means it cannot
	// tell, and the request is refused rather than served on a session
	// that may have been deleted.
	Revoked(ctx context.Context, key string) (bool, error)
	// Revoke ends the session of key, owned by principal (Principal.ID,
	// "" anonymous), on every replica until expires, the token's own
	// expiry. It returns once every live replica has applied it (their
	// Revoked answers true and their listeners were told), an error
	// wrapping ErrFleetUnavailable when the fleet's store cannot be
	// reached, or a *RevocationLimitError when the fleet keeps as many
	// revocations as it may: then nothing was revoked.
	Revoke(ctx context.Context, key, principal string, expires time.Time) error
	// Cancel relays notifications/cancelled of request id in the session
	// of key to every replica; the one running the request cancels it.
	Cancel(ctx context.Context, key string, id json.RawMessage) error
	// Listen has l told of what other replicas (and this one) revoke and
	// cancel.
	Listen(l FleetListener)
}

// RevocationLimitError is a Fleet's answer to a Revoke that would keep
// more revocations than it may: for the principal (PerPrincipal) or for
// the whole fleet. Every revocation is kept until its token expires, and
// tokens cost nothing to mint, so an unbounded list would let one caller
// who initializes and deletes in a loop grow every replica's memory and
// the time each takes to read the list at start. The session is not
// revoked: DELETE says so, and the session stays valid until it expires.
type RevocationLimitError struct {
	// Limit is the bound that was reached.
	Limit int
	// PerPrincipal is true for the principal's bound, false for the
	// fleet's.
	PerPrincipal bool
	// Free is when the earliest of the revocations counted expires,
	// making room; zero when unknown.
	Free time.Time
}

func (e *RevocationLimitError) Error() string {
	if e.PerPrincipal {
		return fmt.Sprintf("this principal already has %d deleted sessions whose tokens have not expired, the most the fleet keeps for one principal", e.Limit)
	}
	return fmt.Sprintf("the fleet already keeps %d deleted sessions whose tokens have not expired, the most it keeps", e.Limit)
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
