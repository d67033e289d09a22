// Package auth authenticates the HTTP requests that reach the gateway's MCP
// endpoints (/mcp, /ws, /sse) and authorizes the tool calls they make. It
// is off unless configured, and then works in one of two modes:
//
//   - Static bearer tokens read from a file, compared in constant time and
//     re-read when the file changes, for teams that hand out a few shared
//     secrets. A token removed from the file is revoked: the connections
//     it opened close.
//   - OAuth 2.1 resource server: JWT access tokens validated against the
//     authorization server's JWKS (signature, issuer, audience per RFC 8707,
//     expiry), with optional scopes required globally or per tool, and the
//     RFC 9728 protected-resource metadata that MCP clients use to find the
//     authorization server.
//
// Authentication happens at the HTTP layer ([Authenticator.Wrap]), as the
// MCP authorization specification asks: 401 with a WWW-Authenticate: Bearer
// challenge for a missing or bad token, 403 with error="insufficient_scope"
// for a valid token that lacks a globally required scope. The middleware
// never reads request bodies: the validated [Principal] travels in the
// request context, and per-tool scopes, expiry and revocation are checked
// by [Authenticator.Authorize] where the gateway dispatches each call, so
// they hold on every transport (a WebSocket frame never passes an HTTP
// middleware) and for a tool run on behalf of another. Which scopes a
// tool needs is the caller's to decide: the package holds the operator's
// per-tool rules (OAuthConfig.ToolScopes) without reading their keys, and
// the gateway resolves them against its catalog.
//
// The package only wraps handlers: health, readiness and metrics endpoints
// stay open because the gateway never wraps them.
//
// This package is library API because a program embedding the gateway
// makes its [Authenticator] with [New] and hands it over as
// gateway.Options.FrontDoor.Auth (see the example); code behind it finds
// the caller with [FromContext].
package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Config selects and configures the mode. Exactly one of BearerTokensFile
// and OAuth must be set.
type Config struct {
	// BearerTokensFile names a file of static tokens, one per line; lines
	// that are blank or start with '#' are ignored. An empty file lets
	// nobody in.
	BearerTokensFile string
	// PollInterval is how often the tokens file is checked for changes;
	// default 3s.
	PollInterval time.Duration
	// OAuth enables the OAuth 2.1 resource-server mode.
	OAuth *OAuthConfig
	// Logger receives reloads, refusals (at debug) and JWKS errors; nil
	// discards them.
	Logger *slog.Logger
}

// OAuthConfig configures the resource-server mode.
type OAuthConfig struct {
	// JWKSURL is where the authorization server publishes its signing
	// keys. Required.
	JWKSURL string
	// Issuer is the exact "iss" a token must carry, and the authorization
	// server named in the protected-resource metadata. Required.
	Issuer string
	// Audience is the value "aud" must contain. Default Resource: with
	// RFC 8707 resource indicators the audience is the resource URI.
	// Audience or Resource is required.
	Audience string
	// Resource is this server's canonical URI (e.g.
	// https://mcp.example.com/mcp), published in the metadata and used to
	// build the resource_metadata URL. Empty derives both from each
	// request's Host and TLS state, which is right unless a proxy in front
	// changes the host or scheme.
	Resource string
	// RequiredScopes must all be granted to a token for any request.
	RequiredScopes []string
	// ToolScopes maps a rule to the scopes a call of the tools it names
	// needs in addition to RequiredScopes. This package does not read the
	// keys: it announces the scopes in the protected-resource metadata
	// and hands the rules to whoever resolves them ([Authenticator.ToolScopes]).
	// The gateway reads a key as a tool name or a method pattern
	// (gateway.CheckScopeRule), resolves every rule to the tools of each
	// catalog it builds, and passes each call's scopes to
	// [Authenticator.Authorize].
	ToolScopes map[string][]string
	// ForwardClaims turns claims of a validated token into request
	// headers (replacing whatever the client sent under those names), so
	// the gateway can pass a verified identity to the backend.
	ForwardClaims []ClaimHeader
	// Leeway is the clock skew tolerated on exp, nbf and iat; default 30s.
	Leeway time.Duration
	// JWKSMinRefresh is the shortest interval between JWKS refreshes;
	// default 5 minutes, at least 1 second. An unknown "kid" also
	// triggers a refresh, at most once per this interval, so a key
	// rotation is picked up at once.
	JWKSMinRefresh time.Duration
	// JWKSMaxRefresh is the longest a fetched JWKS is used without
	// fetching it again, whatever its caching headers say; default 1 hour,
	// or JWKSMinRefresh when that is longer. A key the authorization
	// server withdraws stops being trusted within this interval (plus the
	// 5 minutes a validated token is remembered).
	JWKSMaxRefresh time.Duration
	// HTTPClient fetches the JWKS; nil uses a client with a 10s timeout.
	HTTPClient *http.Client
}

// ClaimHeader names a claim of a validated token and the HTTP header that
// carries its value onward.
type ClaimHeader struct {
	Claim  string
	Header string
}

// Authenticator is the configured middleware. It owns background work (the
// tokens-file poller or the JWKS cache) that ends with Close.
type Authenticator struct {
	log    *slog.Logger
	bearer *tokenFile
	oauth  *oauthValidator
	stop   func()
}

// New validates cfg and starts the mode it selects. In bearer mode the
// tokens file must be readable now; in OAuth mode the JWKS must be
// fetchable now, so a wrong URL is a start-up error instead of a stream of
// 401s. ctx bounds only that start-up work.
func New(ctx context.Context, cfg Config) (*Authenticator, error) {
	a := &Authenticator{log: cfg.Logger}
	if a.log == nil {
		a.log = slog.New(slog.DiscardHandler)
	}
	switch {
	case cfg.BearerTokensFile != "" && cfg.OAuth != nil:
		return nil, errors.New("auth: choose either a bearer tokens file or OAuth, not both")
	case cfg.BearerTokensFile != "":
		tf, err := startTokenFile(cfg.BearerTokensFile, cfg.PollInterval, a.log)
		if err != nil {
			return nil, err
		}
		a.bearer, a.stop = tf, tf.close
	case cfg.OAuth != nil:
		ov, err := startOAuth(ctx, *cfg.OAuth, a.log)
		if err != nil {
			return nil, err
		}
		a.oauth, a.stop = ov, ov.close
	default:
		return nil, errors.New("auth: no mode configured: set a bearer tokens file or OAuth")
	}
	return a, nil
}

// OAuth reports whether a validates OAuth access tokens (whose
// principals carry the token for exchange), not only static ones.
func (a *Authenticator) OAuth() bool { return a != nil && a.oauth != nil }

// ToolScopes returns a copy of OAuthConfig.ToolScopes: the operator's
// per-tool scope rules, for the caller that knows what a tool is to
// resolve. It is nil in bearer-token mode, where tokens carry no scopes.
func (a *Authenticator) ToolScopes() map[string][]string {
	if a.oauth == nil || len(a.oauth.cfg.ToolScopes) == 0 {
		return nil
	}
	out := make(map[string][]string, len(a.oauth.cfg.ToolScopes))
	for k, v := range a.oauth.cfg.ToolScopes {
		out[k] = slices.Clone(v)
	}
	return out
}

// Close stops the background work and waits for it to end. It is safe to
// call more than once.
func (a *Authenticator) Close() error {
	if a.stop != nil {
		a.stop()
	}
	return nil
}

// Wrap returns next behind authentication: a request without a valid
// token (or, in OAuth mode, without the globally required scopes) is
// answered here; one with a valid token reaches next with its [Principal]
// in the context. OPTIONS requests pass, since CORS preflights never carry
// credentials and act on nothing.
func (a *Authenticator) Wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		tok, found := bearerToken(r.Header)
		if !found {
			a.challenge(w, r, http.StatusUnauthorized, "", "authentication required", nil)
			return
		}
		p, err := a.authenticate(r.Context(), tok)
		if err != nil {
			a.log.Debug("auth: token refused", "remote", r.RemoteAddr, "path", r.URL.Path, "err", err)
			a.challenge(w, r, http.StatusUnauthorized, "invalid_token", describe(err), nil)
			return
		}
		ctx := context.WithValue(r.Context(), principalKey{}, p)
		if a.oauth != nil {
			if missing := missingScopes(p.Scopes, a.oauth.cfg.RequiredScopes); len(missing) > 0 {
				a.challenge(w, r, http.StatusForbidden, "insufficient_scope", "the token lacks a required scope", a.oauth.cfg.RequiredScopes)
				return
			}
			if a.oauth.cfg.Resource == "" {
				ctx = context.WithValue(ctx, metadataURLKey{}, a.oauth.metadataURL(r))
			}
			if len(a.oauth.forward) > 0 {
				r = withClaimHeaders(r, a.oauth.forward, p.headers)
			}
		}
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// authenticate checks a presented token in the configured mode.
func (a *Authenticator) authenticate(ctx context.Context, tok string) (*Principal, error) {
	if a.bearer != nil {
		if p := a.bearer.lookup(tok); p != nil {
			return p, nil
		}
		return nil, errUnknownToken
	}
	return a.oauth.validate(ctx, tok)
}

var errUnknownToken = errors.New("token not recognised")

// bearerToken returns the token of an "Authorization: Bearer" header. The
// scheme is case-insensitive (RFC 9110); tokens in query strings are not
// accepted, as the MCP specification forbids them.
func bearerToken(h http.Header) (string, bool) {
	v := h.Get("Authorization")
	if len(v) < 7 || !strings.EqualFold(v[:7], "bearer ") {
		return "", false
	}
	tok := strings.TrimSpace(v[7:])
	return tok, tok != ""
}

// challenge answers with a Bearer challenge (RFC 6750 section 3). A 401
// without errCode is the plain "credentials required" answer; in OAuth
// mode every challenge names the protected-resource metadata so clients can
// discover the authorization server (RFC 9728 section 5.1).
func (a *Authenticator) challenge(w http.ResponseWriter, r *http.Request, status int, errCode, desc string, scopes []string) {
	metadata := ""
	if a.oauth != nil {
		metadata = a.oauth.metadataURL(r)
	}
	w.Header().Set("WWW-Authenticate", a.challengeValue(status, errCode, desc, scopes, metadata))
	if errCode == "" {
		errCode = "unauthorized"
	}
	writeError(w, status, errCode, desc)
}

// challengeValue is a WWW-Authenticate: Bearer value; see challenge.
func (a *Authenticator) challengeValue(status int, errCode, desc string, scopes []string, metadataURL string) string {
	var params []string
	if errCode != "" {
		params = append(params, fmt.Sprintf("error=%q", errCode), fmt.Sprintf("error_description=%q", desc))
	}
	if a.oauth != nil {
		if len(scopes) == 0 && status == http.StatusUnauthorized {
			scopes = a.oauth.cfg.RequiredScopes
		}
		if len(scopes) > 0 {
			params = append(params, fmt.Sprintf("scope=%q", strings.Join(scopes, " ")))
		}
		params = append(params, fmt.Sprintf("resource_metadata=%q", metadataURL))
	}
	v := "Bearer"
	if len(params) > 0 {
		v += " " + strings.Join(params, ", ")
	}
	return v
}

// writeError writes an OAuth-style JSON error body; the status and the
// WWW-Authenticate header are what clients act on.
func writeError(w http.ResponseWriter, status int, code, desc string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	body, _ := json.Marshal(struct {
		Error       string `json:"error"`
		Description string `json:"error_description,omitempty"`
	}{code, desc})
	_, _ = w.Write(append(body, '\n'))
}

// missingScopes returns the scopes in need that granted lacks.
func missingScopes(granted, need []string) []string {
	var missing []string
	for _, s := range need {
		found := false
		for _, g := range granted {
			if g == s {
				found = true
				break
			}
		}
		if !found {
			missing = append(missing, s)
		}
	}
	return missing
}

// union returns a followed by the members of b not in a.
func union(a, b []string) []string {
	out := append([]string(nil), a...)
	return append(out, missingScopes(a, b)...)
}
