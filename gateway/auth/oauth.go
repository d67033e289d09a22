package auth

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	josejson "github.com/go-jose/go-jose/v4/json"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/grpc-mcp-gateway/gateway/internal/option"
)

// cacheMaxAge caps how long a validated token is trusted without a new
// signature check, so a key removed from the JWKS stops working within this
// time even for tokens that live longer.
const cacheMaxAge = 5 * time.Minute

// minJWKSRefresh is the least OAuthConfig.JWKSMinRefresh may be.
const minJWKSRefresh = time.Second

// cacheMaxEntries bounds the validated-token cache.
const cacheMaxEntries = 10000

// oauthValidator validates JWT access tokens as an OAuth 2.1 resource
// server: signature (against the keySource), issuer, audience, expiry, and
// the claims that make the Principal.
type oauthValidator struct {
	cfg     OAuthConfig
	log     *slog.Logger
	keys    *keySource
	forward []ClaimHeader

	mu    sync.Mutex
	cache map[[sha256.Size]byte]cachedToken
}

type cachedToken struct {
	p     *Principal
	until time.Time
}

func startOAuth(ctx context.Context, cfg OAuthConfig, log *slog.Logger) (*oauthValidator, error) {
	if err := checkOAuthConfig(&cfg); err != nil {
		return nil, err
	}
	keys, err := startKeySource(ctx, &cfg, log, afterFunc)
	if err != nil {
		return nil, err
	}
	ov := &oauthValidator{cfg: cfg, log: log, keys: keys, forward: cfg.ForwardClaims, cache: make(map[[sha256.Size]byte]cachedToken)}
	log.Info("auth: OAuth resource server", "issuer", cfg.Issuer, "audience", cfg.Audience, "jwks", cfg.JWKSURL, "keys", len(*keys.keys.Load()))
	return ov, nil
}

// optionError is an error about the OAuthConfig field named, of the
// type that lets a caller name the field its own way
// (gateway.OptionError).
func optionError(field string, err error) error {
	return fmt.Errorf("auth: %w", &option.Error{Option: "OAuthConfig." + field, Err: err})
}

// checkOAuthConfig fills defaults and rejects what cannot work.
func checkOAuthConfig(cfg *OAuthConfig) error {
	if cfg.JWKSURL == "" {
		return optionError("JWKSURL", errors.New("OAuth needs a JWKS URL"))
	}
	if err := CheckJWKSURL(cfg.JWKSURL); err != nil {
		return err
	}
	if cfg.Issuer == "" {
		return optionError("Issuer", errors.New("OAuth needs the authorization server's issuer"))
	}
	if cfg.Resource != "" {
		if u, err := url.Parse(cfg.Resource); err != nil || u.Scheme == "" || u.Host == "" || u.Fragment != "" {
			return optionError("Resource", fmt.Errorf("want an absolute URI without a fragment, got %q", cfg.Resource))
		}
	}
	if cfg.Audience == "" {
		cfg.Audience = cfg.Resource
	}
	if cfg.Audience == "" {
		return optionError("Audience", errors.New("OAuth needs the audience tokens are issued for (or OAuthConfig.Resource)"))
	}
	for _, s := range cfg.RequiredScopes {
		if !ValidScope(s) {
			return optionError("RequiredScopes", fmt.Errorf("%q is not a scope token", s))
		}
	}
	// The rules' keys are the gateway's to check; the scopes are ours,
	// since they end up in challenges and the metadata.
	for rule, scopes := range cfg.ToolScopes {
		for _, s := range scopes {
			if rule == "" || !ValidScope(s) {
				return optionError("ToolScopes", fmt.Errorf("want RULE=SCOPE with a scope token, got %q=%q", rule, s))
			}
		}
	}
	if cfg.Leeway <= 0 {
		cfg.Leeway = 30 * time.Second
	}
	switch {
	case cfg.JWKSMinRefresh <= 0:
		cfg.JWKSMinRefresh = 5 * time.Minute
	case cfg.JWKSMinRefresh < minJWKSRefresh:
		// 5 for 5 minutes is 5ns: every token naming an unknown kid, and
		// every answer saying not to cache, would be a fetch.
		return optionError("JWKSMinRefresh", fmt.Errorf("%s is under %s: it also rate-limits the fetches a token naming an unknown kid makes", cfg.JWKSMinRefresh, minJWKSRefresh))
	}
	switch {
	case cfg.JWKSMaxRefresh <= 0:
		cfg.JWKSMaxRefresh = max(time.Hour, cfg.JWKSMinRefresh)
	case cfg.JWKSMaxRefresh < cfg.JWKSMinRefresh:
		return optionError("JWKSMaxRefresh", fmt.Errorf("%s is shorter than JWKSMinRefresh %s", cfg.JWKSMaxRefresh, cfg.JWKSMinRefresh))
	}
	return nil
}

// ValidScope reports whether s is a scope-token (RFC 6749 section 3.3),
// which also makes it safe inside a quoted WWW-Authenticate parameter.
func ValidScope(s string) bool {
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

func (ov *oauthValidator) close() { ov.keys.close() }

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

	reg, claims, err := ov.check(ctx, tok, now)
	if err != nil {
		return nil, err
	}
	p, err := ov.principal(reg, claims, key)
	if err != nil {
		return nil, err
	}
	p.token = tok
	until := now.Add(cacheMaxAge)
	if exp := reg.Expiry.Time(); exp.Before(until) {
		until = exp
	}
	ov.remember(key, cachedToken{p: p, until: until}, now)
	return p, nil
}

// errNoExp refuses a token without exp, which would be valid forever.
var errNoExp = errors.New(`the token has no "exp" claim`)

// check verifies a token's signature and its registered claims at now,
// and returns them and all its claims. Only the JWS compact serialization
// is accepted (a JWE or a JSON serialization is refused), with an
// asymmetric algorithm, and without "crit": no extension is understood,
// so none may change how the token is read (RFC 7515 section 4.1.11).
func (ov *oauthValidator) check(ctx context.Context, tok string, now time.Time) (*jwt.Claims, map[string]any, error) {
	sig, err := jose.ParseSignedCompact(tok, allowedAlgs)
	if err != nil {
		if ua, ok := errors.AsType[*jose.ErrUnexpectedSignatureAlgorithm](err); ok {
			return nil, nil, fmt.Errorf("%w: %q", errAlgNotAllowed, ua.Got)
		}
		return nil, nil, fmt.Errorf("parsing the token: %w", err)
	}
	for _, name := range []jose.HeaderKey{"crit", "b64"} {
		if _, ok := sig.Signatures[0].Header.ExtraHeaders[name]; ok {
			return nil, nil, fmt.Errorf("the token's header has %q: no JWS extension is accepted", name)
		}
	}
	payload, err := ov.keys.verify(sig)
	if errors.Is(err, errNoKey) && ov.keys.refreshForUnknownKey(ctx, now) {
		payload, err = ov.keys.verify(sig)
	}
	if err != nil {
		return nil, nil, err
	}
	// go-jose's decoder matches names exactly, where encoding/json would
	// also take "ISS" or "Exp" for a registered claim.
	c := new(jwt.Claims)
	if err := josejson.Unmarshal(payload, c); err != nil {
		return nil, nil, fmt.Errorf("reading the token's claims: %w", err)
	}
	// All claims, numbers as written, for the scopes and the forwarded
	// claims.
	var claims map[string]any
	dec := json.NewDecoder(bytes.NewReader(payload))
	dec.UseNumber()
	if err := dec.Decode(&claims); err != nil {
		return nil, nil, fmt.Errorf("reading the token's claims: %w", err)
	}
	if c.Expiry == nil {
		return nil, nil, errNoExp
	}
	exp := jwt.Expected{Issuer: ov.cfg.Issuer, AnyAudience: jwt.Audience{ov.cfg.Audience}, Time: now}
	if err := c.ValidateWithLeeway(exp, ov.cfg.Leeway); err != nil {
		return nil, nil, err
	}
	return c, claims, nil
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

// principal extracts the subject, the scopes, the expiry and the
// forwarded claims of a validated token whose SHA-256 is digest, from its
// registered claims c and all its claims.
func (ov *oauthValidator) principal(c *jwt.Claims, claims map[string]any, digest [sha256.Size]byte) (*Principal, error) {
	p := &Principal{TokenID: tokenID(digest), Subject: c.Subject}
	if p.Subject != "" {
		p.identity = "sub:" + p.Subject
	} else {
		p.identity = "token:" + p.TokenID
	}
	if c.Expiry != nil {
		exp := c.Expiry.Time()
		// What the leeway accepts at the door, so a connection ends when
		// a new request with the same token would be refused.
		p.Expiry = exp.Add(ov.cfg.Leeway)
		// The leeway is for the clocks at the door; what runs on the
		// token, and what is kept for it, ends at its own expiry.
		p.TokenExpiry = exp
	}
	if raw, ok := claims["scope"]; ok {
		scope, ok := raw.(string)
		if !ok {
			return nil, fmt.Errorf("claim scope: want a space-separated string, got %T", raw)
		}
		p.Scopes = strings.Fields(scope)
	} else if raw, ok := claims["scp"]; ok {
		// Some authorization servers (Okta, Microsoft Entra) send "scp",
		// as an array or a space-separated string.
		switch v := raw.(type) {
		case string:
			p.Scopes = strings.Fields(v)
		case []any:
			for _, s := range v {
				if str, ok := s.(string); ok {
					p.Scopes = append(p.Scopes, str)
				}
			}
		}
	}
	for _, f := range ov.forward {
		raw, ok := claims[f.Claim]
		if !ok {
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
	scalar := func(x any) bool {
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

// describe turns a validation error into a short error_description that
// tells the client what to fix without echoing token contents.
func describe(err error) string {
	switch {
	case errors.Is(err, errUnknownToken):
		return "the token is not valid"
	case errors.Is(err, jwt.ErrExpired):
		return "the token has expired"
	case errors.Is(err, jwt.ErrNotValidYet):
		return "the token is not valid yet"
	case errors.Is(err, jwt.ErrInvalidAudience):
		return "the token was not issued for this resource (aud)"
	case errors.Is(err, jwt.ErrInvalidIssuer):
		return "the token was not issued by the expected authorization server (iss)"
	case errors.Is(err, errAlgNotAllowed):
		return "the token's signature algorithm is not accepted"
	}
	return "the token is not valid"
}
