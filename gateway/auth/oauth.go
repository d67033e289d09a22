package auth

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lestrrat-go/httprc/v3"
	"github.com/lestrrat-go/httprc/v3/errsink"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"
	"github.com/lestrrat-go/jwx/v3/jwt"
)

// MetadataPath is where RFC 9728 protected-resource metadata is served;
// the gateway also serves it with the resource's path appended
// (/.well-known/oauth-protected-resource/mcp), the form clients derive
// from the resource URI.
const MetadataPath = "/.well-known/oauth-protected-resource"

// cacheMaxAge caps how long a validated token is trusted without a new
// signature check, so a key removed from the JWKS stops working within this
// time even for tokens that live longer.
const cacheMaxAge = 5 * time.Minute

// cacheMaxEntries bounds the validated-token cache.
const cacheMaxEntries = 10000

// oauthValidator validates JWT access tokens as an OAuth 2.1 resource
// server.
type oauthValidator struct {
	cfg      OAuthConfig
	log      *slog.Logger
	jwks     *jwk.Cache
	keys     *keyProvider
	forward  []ClaimHeader
	parseOpt []jwt.ParseOption
	// lastRefresh is when an unknown kid last forced a JWKS refresh
	// (UnixNano), to rate-limit refreshes a forger could trigger.
	lastRefresh atomic.Int64

	mu    sync.Mutex
	cache map[[sha256.Size]byte]cachedToken

	// idle is the JWKS client whose idle connections close with the
	// validator; nil when the caller supplied (and owns) the client.
	idle *http.Client

	closeOnce sync.Once
}

type cachedToken struct {
	p     *Principal
	until time.Time
}

func startOAuth(ctx context.Context, cfg OAuthConfig, log *slog.Logger) (*oauthValidator, error) {
	if err := checkOAuthConfig(&cfg); err != nil {
		return nil, err
	}
	hc, ownClient := cfg.HTTPClient, false
	if hc == nil {
		hc, ownClient = &http.Client{Timeout: 10 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}, true
	}
	// The cache's workers live until close, not until ctx (which bounds
	// only start-up), so they get a context of their own.
	cache, err := jwk.NewCache(context.WithoutCancel(ctx), httprc.NewClient(
		httprc.WithErrorSink(errsink.NewFunc(func(_ context.Context, err error) {
			log.Warn("auth: refreshing the JWKS failed; keeping the keys already fetched", "url", cfg.JWKSURL, "err", err)
		})),
	))
	if err != nil {
		return nil, fmt.Errorf("auth: starting the JWKS cache: %w", err)
	}
	ov := &oauthValidator{cfg: cfg, log: log, jwks: cache, forward: cfg.ForwardClaims, cache: make(map[[sha256.Size]byte]cachedToken)}
	if ownClient {
		ov.idle = hc
	}
	fail := func(err error) (*oauthValidator, error) {
		ov.close()
		return nil, err
	}
	if err := cache.Register(ctx, cfg.JWKSURL,
		jwk.WithHTTPClient(hc),
		jwk.WithMinInterval(cfg.JWKSMinRefresh),
		// Refreshed at least hourly whatever the JWKS response's caching
		// headers say, so a key the authorization server withdraws stops
		// being trusted within the hour.
		jwk.WithHttprcResourceOption(httprc.WithMaxInterval(max(time.Hour, cfg.JWKSMinRefresh))),
		jwk.WithWaitReady(false),
	); err != nil {
		return fail(fmt.Errorf("auth: --oauth-jwks-url %s: %w", cfg.JWKSURL, err))
	}
	// A synchronous first fetch turns a wrong URL or an unreachable
	// authorization server into a start-up error with its cause.
	if _, err := cache.Refresh(ctx, cfg.JWKSURL); err != nil {
		return fail(fmt.Errorf("auth: fetching the JWKS from %s: %w", cfg.JWKSURL, err))
	}
	set, err := cache.CachedSet(cfg.JWKSURL)
	if err != nil {
		return fail(fmt.Errorf("auth: JWKS %s: %w", cfg.JWKSURL, err))
	}
	ov.keys = &keyProvider{set: set}
	ov.parseOpt = []jwt.ParseOption{
		jwt.WithKeyProvider(ov.keys),
		jwt.WithValidate(true),
		jwt.WithIssuer(cfg.Issuer),
		jwt.WithAudience(cfg.Audience),
		jwt.WithAcceptableSkew(cfg.Leeway),
		// A token without exp would be valid forever.
		jwt.WithRequiredClaim("exp"),
	}
	if u, _ := url.Parse(cfg.JWKSURL); u.Scheme == "http" && !isLoopbackHost(u.Hostname()) {
		log.Warn("auth: the JWKS is fetched over plain http: anyone on the path can substitute signing keys; use https", "url", cfg.JWKSURL)
	}
	log.Info("auth: OAuth resource server", "issuer", cfg.Issuer, "audience", cfg.Audience, "jwks", cfg.JWKSURL, "keys", set.Len())
	return ov, nil
}

// checkOAuthConfig fills defaults and rejects what cannot work.
func checkOAuthConfig(cfg *OAuthConfig) error {
	if cfg.JWKSURL == "" {
		return errors.New("auth: OAuth needs a JWKS URL (--oauth-jwks-url)")
	}
	if u, err := url.Parse(cfg.JWKSURL); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return fmt.Errorf("auth: --oauth-jwks-url: want an http(s) URL, got %q", cfg.JWKSURL)
	}
	if cfg.Issuer == "" {
		return errors.New("auth: OAuth needs the authorization server's issuer (--oauth-issuer)")
	}
	if cfg.Resource != "" {
		if u, err := url.Parse(cfg.Resource); err != nil || u.Scheme == "" || u.Host == "" || u.Fragment != "" {
			return fmt.Errorf("auth: --oauth-resource: want an absolute URI without a fragment, got %q", cfg.Resource)
		}
	}
	if cfg.Audience == "" {
		cfg.Audience = cfg.Resource
	}
	if cfg.Audience == "" {
		return errors.New("auth: OAuth needs the audience tokens are issued for (--oauth-audience, or --oauth-resource)")
	}
	for _, s := range cfg.RequiredScopes {
		if !validScope(s) {
			return fmt.Errorf("auth: --oauth-required-scope: %q is not a scope token", s)
		}
	}
	for tool, scopes := range cfg.ToolScopes {
		for _, s := range scopes {
			if tool == "" || !validScope(s) {
				return fmt.Errorf("auth: --oauth-tool-scope: want TOOL=SCOPE, got %q=%q", tool, s)
			}
		}
	}
	if cfg.Leeway <= 0 {
		cfg.Leeway = 30 * time.Second
	}
	if cfg.JWKSMinRefresh <= 0 {
		cfg.JWKSMinRefresh = 5 * time.Minute
	}
	return nil
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// validScope reports whether s is a scope-token (RFC 6749 section 3.3),
// which also makes it safe inside a quoted WWW-Authenticate parameter.
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func (ov *oauthValidator) close() {
	ov.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := ov.jwks.Shutdown(ctx); err != nil {
			ov.log.Warn("auth: stopping the JWKS cache", "err", err)
		}
		if ov.idle != nil {
			ov.idle.CloseIdleConnections()
		}
	})
}

// validate checks a token's signature and claims, answering from the cache
// when the same token was validated recently.
func (ov *oauthValidator) validate(ctx context.Context, tok string) (*Principal, error) {
	key := sha256.Sum256([]byte(tok))
	now := time.Now()
	ov.mu.Lock()
	c, ok := ov.cache[key]
	ov.mu.Unlock()
	if ok && now.Before(c.until) {
		return c.p, nil
	}

	t, err := jwt.ParseString(tok, ov.parseOpt...)
	if errors.Is(err, errNoKey) && ov.mayRefresh(now) {
		// The authorization server may have rotated its keys since the
		// last refresh.
		if _, rerr := ov.jwks.Refresh(ctx, ov.cfg.JWKSURL); rerr != nil {
			ov.log.Warn("auth: refreshing the JWKS for an unknown key failed", "err", rerr)
		} else {
			t, err = jwt.ParseString(tok, ov.parseOpt...)
		}
	}
	if err != nil {
		return nil, err
	}
	p, err := ov.principal(t)
	if err != nil {
		return nil, err
	}
	until := now.Add(cacheMaxAge)
	if exp, ok := t.Expiration(); ok && exp.Before(until) {
		until = exp
	}
	ov.remember(key, cachedToken{p: p, until: until}, now)
	return p, nil
}

func (ov *oauthValidator) mayRefresh(now time.Time) bool {
	last := ov.lastRefresh.Load()
	if now.UnixNano()-last < int64(ov.cfg.JWKSMinRefresh) && last != 0 {
		return false
	}
	return ov.lastRefresh.CompareAndSwap(last, now.UnixNano())
}

// remember caches a validated token. When the cache is full, expired
// entries go first; if none has expired, an arbitrary one makes room, which
// costs only a signature check later.
func (ov *oauthValidator) remember(key [sha256.Size]byte, c cachedToken, now time.Time) {
	ov.mu.Lock()
	defer ov.mu.Unlock()
	if len(ov.cache) >= cacheMaxEntries {
		for k, v := range ov.cache {
			if !now.Before(v.until) {
				delete(ov.cache, k)
			}
		}
		for k := range ov.cache {
			if len(ov.cache) < cacheMaxEntries {
				break
			}
			delete(ov.cache, k)
		}
	}
	ov.cache[key] = c
}

// principal extracts the subject, the scopes and the forwarded claims.
func (ov *oauthValidator) principal(t jwt.Token) (*Principal, error) {
	p := &Principal{}
	p.Subject, _ = t.Subject()
	var scope string
	if t.Has("scope") {
		if err := t.Get("scope", &scope); err != nil {
			return nil, fmt.Errorf("claim scope: want a space-separated string: %w", err)
		}
		p.Scopes = strings.Fields(scope)
	} else if t.Has("scp") {
		// Some authorization servers (Okta, Microsoft Entra) send "scp",
		// as an array or a space-separated string.
		var raw any
		if err := t.Get("scp", &raw); err != nil {
			return nil, fmt.Errorf("claim scp: %w", err)
		}
		switch v := raw.(type) {
		case string:
			p.Scopes = strings.Fields(v)
		case []any:
			for _, s := range v {
				if str, ok := s.(string); ok {
					p.Scopes = append(p.Scopes, str)
				}
			}
		case []string:
			p.Scopes = v
		}
	}
	for _, f := range ov.forward {
		var raw any
		if !t.Has(f.Claim) {
			continue
		}
		if err := t.Get(f.Claim, &raw); err != nil {
			continue
		}
		vals := claimValues(raw)
		if len(vals) == 0 {
			continue
		}
		if p.headers == nil {
			p.headers = make(map[string][]string, len(ov.forward))
		}
		p.headers[f.Header] = append(p.headers[f.Header], vals...)
	}
	return p, nil
}

// claimValues renders a claim as header values: scalars as one value, an
// array of scalars as one value each. Objects are not forwarded: a backend
// that needs structure should get the token itself. Values with control
// characters are dropped, since they cannot travel as headers or metadata.
func claimValues(v any) []string {
	var out []string
	add := func(s string) {
		for i := 0; i < len(s); i++ {
			if s[i] < 0x20 || s[i] == 0x7f {
				return
			}
		}
		out = append(out, s)
	}
	var scalar func(any) bool
	scalar = func(x any) bool {
		switch x := x.(type) {
		case string:
			add(x)
		case float64:
			add(strconv.FormatFloat(x, 'f', -1, 64))
		case json.Number:
			add(x.String())
		case bool:
			add(strconv.FormatBool(x))
		case time.Time:
			add(strconv.FormatInt(x.Unix(), 10))
		default:
			return false
		}
		return true
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			scalar(e)
		}
	case []string:
		for _, e := range x {
			add(e)
		}
	default:
		scalar(v)
	}
	return out
}

// withClaimHeaders returns r with the forwarded-claim headers replaced by
// the token's values. The client's own values under those names are always
// removed, so a header the backend trusts as verified cannot be forged.
func withClaimHeaders(r *http.Request, forward []ClaimHeader, values map[string][]string) *http.Request {
	r2 := new(http.Request)
	*r2 = *r
	r2.Header = r.Header.Clone()
	for _, f := range forward {
		r2.Header.Del(f.Header)
	}
	for h, vs := range values {
		for _, v := range vs {
			r2.Header.Add(h, v)
		}
	}
	return r2
}

// resource is the canonical URI of this server as the metadata names it.
func (ov *oauthValidator) resource(r *http.Request) string {
	if ov.cfg.Resource != "" {
		return ov.cfg.Resource
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + "/mcp"
}

// metadataURL is where a client finds the metadata of resource: the
// well-known path inserted between host and path (RFC 9728 section 3.1).
func (ov *oauthValidator) metadataURL(r *http.Request) string {
	u, err := url.Parse(ov.resource(r))
	if err != nil {
		return MetadataPath
	}
	return u.Scheme + "://" + u.Host + MetadataPath + resourcePath(u.String())
}

// resourcePath is the path of a resource URI without a trailing slash.
func resourcePath(resource string) string {
	u, err := url.Parse(resource)
	if err != nil {
		return ""
	}
	return strings.TrimSuffix(u.Path, "/")
}

// scopesSupported lists every scope the configuration mentions.
func (ov *oauthValidator) scopesSupported() []string {
	out := union(nil, ov.cfg.RequiredScopes)
	for _, ss := range ov.cfg.ToolScopes {
		out = union(out, ss)
	}
	return out
}

// MetadataHandler serves the RFC 9728 protected-resource metadata, at
// [MetadataPath] and at that path followed by the resource's path. It is
// nil in bearer-token mode, which has no authorization server to announce.
// It must not be wrapped: clients read it before they have a token.
func (a *Authenticator) MetadataHandler() http.Handler {
	if a.oauth == nil {
		return nil
	}
	ov := a.oauth
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		// Only the two forms a client derives from the resource URI; any
		// other path would name a resource this document does not describe.
		if r.URL.Path != MetadataPath && r.URL.Path != MetadataPath+resourcePath(ov.resource(r)) {
			http.NotFound(w, r)
			return
		}
		doc := struct {
			Resource               string   `json:"resource"`
			AuthorizationServers   []string `json:"authorization_servers"`
			ScopesSupported        []string `json:"scopes_supported,omitempty"`
			BearerMethodsSupported []string `json:"bearer_methods_supported"`
		}{ov.resource(r), []string{ov.cfg.Issuer}, ov.scopesSupported(), []string{"header"}}
		body, err := json.Marshal(doc)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "public, max-age=3600")
		// Browser-based clients fetch this cross-origin before they have
		// a token; it holds nothing secret.
		w.Header().Set("Access-Control-Allow-Origin", "*")
		_, _ = w.Write(append(body, '\n'))
	})
}

// describe turns a validation error into a short error_description that
// tells the client what to fix without echoing token contents.
func describe(err error) string {
	switch {
	case errors.Is(err, errUnknownToken):
		return "the token is not valid"
	case errors.Is(err, jwt.TokenExpiredError()):
		return "the token has expired"
	case errors.Is(err, jwt.TokenNotYetValidError()):
		return "the token is not valid yet"
	case errors.Is(err, jwt.InvalidAudienceError()):
		return "the token was not issued for this resource (aud)"
	case errors.Is(err, jwt.InvalidIssuerError()):
		return "the token was not issued by the expected authorization server (iss)"
	case errors.Is(err, errAlgNotAllowed):
		return "the token's signature algorithm is not accepted"
	}
	return "the token is not valid"
}

var (
	errNoKey         = errors.New("no key in the JWKS matches the token")
	errAlgNotAllowed = errors.New("signature algorithm not allowed")
)

// keyFamily maps the accepted signature algorithms to the key type that
// may verify them. Only asymmetric algorithms are here: "none" and the
// HMAC family are refused outright, so a public key can never be used as
// an HMAC secret.
var keyFamily = map[string]jwa.KeyType{
	"RS256": jwa.RSA(), "RS384": jwa.RSA(), "RS512": jwa.RSA(),
	"PS256": jwa.RSA(), "PS384": jwa.RSA(), "PS512": jwa.RSA(),
	"ES256": jwa.EC(), "ES384": jwa.EC(), "ES512": jwa.EC(),
	"EdDSA": jwa.OKP(), "Ed25519": jwa.OKP(),
}

// keyProvider offers jwx the JWKS keys that may verify a signature: the
// token's alg must be asymmetric, the key must be of that alg's type, meant
// for signatures, carry the token's kid when it names one, and carry the
// same alg when the key declares one. Keys without "alg" (common in
// Microsoft Entra's JWKS) are still usable, but only with an alg of their
// own key type.
type keyProvider struct {
	set jwk.Set
}

func (kp *keyProvider) FetchKeys(_ context.Context, sink jws.KeySink, sig *jws.Signature, _ *jws.Message) error {
	h := sig.ProtectedHeaders()
	alg, ok := h.Algorithm()
	if !ok {
		return fmt.Errorf("%w: the token has no alg", errAlgNotAllowed)
	}
	kty, ok := keyFamily[alg.String()]
	if !ok {
		return fmt.Errorf("%w: %q", errAlgNotAllowed, alg.String())
	}
	kid, hasKid := h.KeyID()
	found := false
	for i := range kp.set.Len() {
		key, ok := kp.set.Key(i)
		if !ok {
			continue
		}
		if hasKid {
			if k, _ := key.KeyID(); k != kid {
				continue
			}
		}
		if use, ok := key.KeyUsage(); ok && use != "" && use != jwk.ForSignature.String() {
			continue
		}
		if key.KeyType() != kty {
			continue
		}
		if ka, ok := key.Algorithm(); ok && ka.String() != alg.String() {
			continue
		}
		sink.Key(alg, key)
		found = true
	}
	if !found {
		return errNoKey
	}
	return nil
}
