package auth

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"
)

// Principal is who a request was authenticated as. The middleware puts it
// in the request context ([FromContext]); every MCP transport hands that
// context on to the calls it serves (a WebSocket's and an SSE stream's calls
// carry the principal that opened them), so authorization is decided where
// calls are dispatched ([Authenticator.Authorize]), whatever the transport.
//
// A Principal is shared between requests with the same token: read-only.
type Principal struct {
	// Subject is the token's "sub"; empty for static bearer tokens.
	Subject string
	// Scopes are the granted scopes ("scope" or "scp"); nil for static
	// bearer tokens.
	Scopes []string
	// Expiry is when the gateway stops accepting the token: its "exp"
	// plus the tolerated clock skew (OAuthConfig.Leeway). Zero for static
	// bearer tokens, which last until they are removed from the file.
	Expiry time.Time
	// TokenExpiry is the token's own "exp", without the leeway: no call
	// runs past it, and nothing the gateway keeps for the token (an
	// exchanged token) outlives it. Zero for static bearer tokens.
	TokenExpiry time.Time
	// TokenID names the credential in logs without revealing it: the
	// first 8 bytes of the token's SHA-256, in hex.
	TokenID string

	// identity is what sessions are bound to; see Identity.
	identity string
	// revoked is closed when a static token is removed from its file; nil
	// for OAuth tokens, which end at Expiry.
	revoked chan struct{}
	// headers holds the forwarded claims' header values, computed once per
	// validated token.
	headers map[string][]string
	// token is the OAuth access token itself, for token exchange
	// (AccessToken); empty for static bearer tokens.
	token string
}

// AccessToken is the OAuth access token the principal presented, for the
// one use that needs it: exchanging it for a backend's token (RFC 8693).
// It must never be logged, forwarded or kept beyond the request. Empty
// for static bearer tokens, which are the gateway's own and exchange for
// nothing.
func (p *Principal) AccessToken() string { return p.token }

// Identity is the principal a session belongs to: "sub:" and the subject
// for an OAuth token that names one (so a client that refreshes its token
// keeps its sessions), otherwise "token:" and the TokenID (each static
// token is its own principal). Two requests with equal identities are the
// same caller.
func (p *Principal) Identity() string { return p.identity }

// Revoked is closed when the credential is withdrawn before it expires (a
// static token removed from the bearer tokens file); it is nil, never
// ready, for OAuth tokens. Long-lived connections watch it to end.
func (p *Principal) Revoked() <-chan struct{} {
	if p.revoked == nil {
		return nil
	}
	return p.revoked
}

// Holds reports whether the token grants every one of scopes.
func (p *Principal) Holds(scopes []string) bool { return len(missingScopes(p.Scopes, scopes)) == 0 }

// Expired reports whether the token is no longer accepted at now.
func (p *Principal) Expired(now time.Time) bool {
	return !p.Expiry.IsZero() && !now.Before(p.Expiry)
}

// isRevoked reports whether Revoked is closed.
func (p *Principal) isRevoked() bool {
	select {
	case <-p.Revoked():
		return true
	default:
		return false
	}
}

// tokenID is the TokenID of a token's digest.
func tokenID(digest [sha256.Size]byte) string { return hex.EncodeToString(digest[:8]) }

// newStaticPrincipal is the principal of one static token: no subject, no
// scopes, no expiry, revocable.
func newStaticPrincipal(digest [sha256.Size]byte) *Principal {
	id := tokenID(digest)
	return &Principal{TokenID: id, identity: "token:" + id, revoked: make(chan struct{})}
}

type principalKey struct{}

// metadataURLKey holds the resource_metadata URL of a request whose
// resource is derived from its Host (no OAuthConfig.Resource), so a
// refusal decided later, in the call path, names the same URL the
// middleware's challenges do.
type metadataURLKey struct{}

// FromContext returns the principal the middleware authenticated, if any.
func FromContext(ctx context.Context) (*Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(*Principal)
	return p, ok
}
