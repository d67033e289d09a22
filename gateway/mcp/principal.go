package mcp

import (
	"context"
	"net/http"
	"time"
)

// Principal is who the front door authenticated a request as, reduced to
// what the protocol layer needs: whose sessions they may use, and how long
// the connections they open may live. The server learns it through
// ServerOptions.PrincipalOf; the layer that authenticates (the gateway's
// auth package) is not known here.
type Principal struct {
	// ID names the principal; "" is anonymous (no authentication). A
	// session (Streamable HTTP, legacy SSE) belongs to the ID that opened
	// it: a request on it under any other ID is answered 404, exactly as
	// if the session did not exist, so a stolen or guessed session id is
	// worth nothing without its owner's credentials.
	ID string
	// Expires is when the credential stops being accepted; zero never. A
	// connection it opened (WebSocket, legacy SSE, a Streamable HTTP GET
	// stream, a subscriptions/listen stream) ends then: WebSocket with close code 1008 (policy violation)
	// and a reason, the SSE streams by ending the response. A request read
	// on such a connection after Expires is not served.
	Expires time.Time
	// TokenExpires is the token's own expiry (a JWT's "exp"), without
	// the clock skew Expires tolerates at the door; zero when unknown,
	// and then Expires serves. No request runs past it: every request's
	// context (a tools/call's, streams included) has it as its deadline,
	// on every transport, so a token accepted just before it expires
	// cannot keep a call running for --call-timeout or --stream-timeout
	// after.
	TokenExpires time.Time
	// Revoked is closed when the credential is withdrawn before it
	// expires; the connections it opened end as at Expires. Nil never
	// fires.
	Revoked <-chan struct{}
}

// callEnd is when the requests of p must have ended: its token's own
// expiry, or Expires when that is unknown; zero for never.
func (p *Principal) callEnd() time.Time {
	if !p.TokenExpires.IsZero() {
		return p.TokenExpires
	}
	return p.Expires
}

// expired reports whether the credential has expired at now.
func (p *Principal) expired(now time.Time) bool {
	return !p.Expires.IsZero() && !now.Before(p.Expires)
}

// principalOf is ServerOptions.PrincipalOf, or anonymous without it.
func (s *Server) principalOf(ctx context.Context) Principal {
	if s.principal == nil {
		return Principal{}
	}
	return s.principal(ctx)
}

// credentialEnd delivers why a connection opened by p must end: expiry or
// revocation. stop releases its timer.
type credentialEnd struct {
	expired <-chan time.Time
	revoked <-chan struct{}
	timer   *time.Timer
}

func watchCredential(p *Principal) *credentialEnd {
	ce := &credentialEnd{revoked: p.Revoked}
	if !p.Expires.IsZero() {
		ce.timer = time.NewTimer(time.Until(p.Expires))
		ce.expired = ce.timer.C
	}
	return ce
}

func (ce *credentialEnd) stop() {
	if ce.timer != nil {
		ce.timer.Stop()
	}
}

// onCredentialEnd calls end, on a goroutine of its own, with endExpired
// when p's credential expires or endRevoked when it is revoked, until
// stop is called. It is watchCredential for the connections that keep no
// goroutine of their own (WebSocket, legacy SSE, a Streamable HTTP GET
// stream): only a revocable credential costs one, since a channel has no
// callback. end may still be called once after stop; it must do nothing
// by then.
func onCredentialEnd(p *Principal, end func(connEnd)) (stop func()) {
	var expiry *time.Timer
	if !p.Expires.IsZero() {
		expiry = time.AfterFunc(time.Until(p.Expires), func() { end(endExpired) })
	}
	var left chan struct{}
	if revoked := p.Revoked; revoked != nil {
		left = make(chan struct{})
		go func() {
			select {
			case <-revoked:
				end(endRevoked)
			case <-left:
			}
		}()
	}
	return func() {
		if expiry != nil {
			expiry.Stop()
		}
		if left != nil {
			close(left)
		}
	}
}

// Refusal is what a [Handler] returns (as the error of CallTool) to refuse
// a request for lack of authorization, so that each transport can say so
// in its own terms: Streamable HTTP (sessions and stateless 2026-07-28)
// answers with Status and Header (403 with a WWW-Authenticate
// insufficient_scope challenge, as the MCP authorization specification
// asks, so the client can step up its authorization) and Err as the
// JSON-RPC body; transports without a status line of their own (WebSocket,
// legacy SSE, an element of a batch, a response already streaming) answer
// with Err alone, whose Data should carry what Header says.
type Refusal struct {
	Status int
	Header http.Header
	Err    *Error
}

func (r *Refusal) Error() string { return r.Err.Message }

// reasons a connection ends early, in the words of a WebSocket close frame
// (at most 123 bytes).
const (
	reasonExpired = "the access token has expired"
	reasonRevoked = "the access token has been revoked"
)
