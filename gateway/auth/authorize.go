package auth

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// Refusal is why [Authenticator.Authorize] refused a call, in the terms of
// RFC 6750 so that every transport can say it: an HTTP response carries
// Status and Challenge (the step-up answer the MCP authorization
// specification describes for Streamable HTTP), a transport without a
// status line (WebSocket, the legacy SSE stream) carries the same fields as
// data in a JSON-RPC error.
type Refusal struct {
	// Status is 401 for a token that is no longer valid, 403 for one that
	// lacks a scope.
	Status int
	// Code is the RFC 6750 error code: "invalid_token" or
	// "insufficient_scope".
	Code string
	// Description says what to fix, without echoing the token.
	Description string
	// Scope lists the scopes to ask the authorization server for,
	// space-separated (insufficient_scope in OAuth mode).
	Scope string
	// ResourceMetadata is the RFC 9728 metadata URL (OAuth mode).
	ResourceMetadata string
	// Challenge is the WWW-Authenticate value of the HTTP answer.
	Challenge string
}

func (r *Refusal) Error() string { return "auth: " + r.Code + ": " + r.Description }

// Authorize decides whether the principal in ctx (see [FromContext]) may
// make a call that needs scopes (beyond RequiredScopes, which the
// middleware checked) now: its token must not have expired or been
// revoked since the connection carrying the call was opened, and it must
// hold every one of scopes. It returns nil or a *Refusal. The gateway
// calls it with the scopes of the tool it is about to run, resolved from
// OAuthConfig.ToolScopes when its catalog was built, on every transport,
// so this is the one place tool scopes are enforced. Static bearer tokens
// grant no scopes: a call that needs one is refused.
//
// A context without a principal is refused: every transport the
// middleware guards carries one, so its absence means a request that did
// not pass authentication. Transports that have no front door at all
// (stdio) must not call Authorize.
func (a *Authenticator) Authorize(ctx context.Context, scopes []string) error {
	p, ok := FromContext(ctx)
	if !ok {
		return a.refuse(ctx, http.StatusUnauthorized, "invalid_token", "authentication required", nil)
	}
	if p.Expired(time.Now()) {
		return a.refuse(ctx, http.StatusUnauthorized, "invalid_token", "the token has expired", nil)
	}
	if p.isRevoked() {
		return a.refuse(ctx, http.StatusUnauthorized, "invalid_token", "the token has been revoked", nil)
	}
	if len(missingScopes(p.Scopes, scopes)) == 0 {
		return nil
	}
	var required []string
	if a.oauth != nil {
		required = a.oauth.cfg.RequiredScopes
	}
	return a.refuse(ctx, http.StatusForbidden, "insufficient_scope", "the token lacks a scope this tool requires",
		union(required, scopes))
}

// refuse builds the Refusal, with the challenge the middleware would send
// for the same request.
func (a *Authenticator) refuse(ctx context.Context, status int, code, desc string, scopes []string) *Refusal {
	r := &Refusal{Status: status, Code: code, Description: desc}
	if a.oauth != nil {
		if len(scopes) == 0 && status == http.StatusUnauthorized {
			scopes = a.oauth.cfg.RequiredScopes
		}
		r.Scope = strings.Join(scopes, " ")
		if u, ok := ctx.Value(metadataURLKey{}).(string); ok {
			r.ResourceMetadata = u
		} else {
			r.ResourceMetadata = a.oauth.resourceMetadataURL(a.oauth.cfg.Resource)
		}
	}
	r.Challenge = a.challengeValue(status, code, desc, scopes, r.ResourceMetadata)
	return r
}
