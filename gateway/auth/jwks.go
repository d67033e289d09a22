package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lestrrat-go/httprc/v3"
	"github.com/lestrrat-go/httprc/v3/errsink"
	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jws"

	"github.com/grpc-mcp-gateway/gateway/internal/loopback"
)

// keySource is where token signatures are checked against: the
// authorization server's JWKS, cached and refreshed in the background, and
// refreshed at once (at most once per JWKSMinRefresh) when a token names a
// key it does not know, so a rotation is picked up without a restart.
//
// Whoever can answer the JWKS fetch can mint tokens, so the fetch is held
// to https (plain http only to a loopback address, for a local
// authorization server) and follows no redirect to another scheme or host.
type keySource struct {
	url        string
	log        *slog.Logger
	cache      *jwk.Cache
	provider   *keyProvider
	minRefresh time.Duration
	// lastRefresh is when an unknown kid last forced a refresh
	// (UnixNano), to rate-limit refreshes a forger could trigger.
	lastRefresh atomic.Int64
	// idle is the HTTP client whose idle connections close with the
	// source; nil when the caller supplied (and owns) the transport.
	idle      *http.Client
	closeOnce sync.Once
}

// CheckJWKSURL accepts an https URL, or an http one whose host is a
// loopback address (a local authorization server): whoever answers the
// fetch can mint tokens. [New] applies it; it is exported so a command
// line can refuse a bad URL before starting anything.
func CheckJWKSURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		return optionError("JWKSURL", fmt.Errorf("want an https URL, got %q", raw))
	}
	if u.Scheme == "http" && !loopback.Host(u.Hostname()) {
		return optionError("JWKSURL", fmt.Errorf("%s: the JWKS must be fetched over https (plain http is allowed only to a loopback address): anyone on the path could substitute signing keys", raw))
	}
	return nil
}

// sameOriginRedirects is the JWKS client's redirect policy: a redirect
// may change the path, never the scheme or the host, so an https fetch
// cannot be downgraded or sent to a server the operator did not name.
func sameOriginRedirects(req *http.Request, via []*http.Request) error {
	if len(via) >= 10 {
		return errors.New("auth: JWKS: stopped after 10 redirects")
	}
	first := via[0].URL
	if req.URL.Scheme != first.Scheme || !strings.EqualFold(req.URL.Host, first.Host) {
		return fmt.Errorf("auth: JWKS: refusing the redirect from %s to %s: it changes the scheme or host", first.Redacted(), req.URL.Redacted())
	}
	return nil
}

// startKeySource fetches the JWKS once, synchronously, so that a wrong URL
// or an unreachable authorization server is a start-up error with its
// cause, then keeps it fresh until close.
func startKeySource(ctx context.Context, cfg *OAuthConfig, log *slog.Logger) (*keySource, error) {
	ks := &keySource{url: cfg.JWKSURL, log: log, minRefresh: cfg.JWKSMinRefresh}
	var hc *http.Client
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient // the caller's transport and timeout, our redirect policy
		hc = &c
	} else {
		hc = &http.Client{Timeout: 10 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}
		ks.idle = hc
	}
	hc.CheckRedirect = sameOriginRedirects
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
	ks.cache = cache
	fail := func(err error) (*keySource, error) {
		ks.close()
		return nil, err
	}
	// The first fetch is ours and synchronous, so that a wrong URL or an
	// unreachable authorization server is a start-up error with its
	// cause: the cache only logs a failed fetch and tries again later.
	if err := fetchJWKS(ctx, hc, cfg.JWKSURL); err != nil {
		return fail(optionError("JWKSURL", fmt.Errorf("fetching the JWKS from %s: %w", cfg.JWKSURL, err)))
	}
	// Registering makes the cache fetch the URL in the background at
	// once, so wait for that fetch: one still in flight after start-up
	// could land after a refresh for a rotated key and undo it.
	wait := hc.Timeout
	if wait <= 0 {
		wait = 30 * time.Second
	}
	rctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	if err := cache.Register(rctx, cfg.JWKSURL,
		jwk.WithHTTPClient(hc),
		jwk.WithMinInterval(cfg.JWKSMinRefresh),
		// Refreshed at least this often whatever the JWKS response's
		// caching headers say, so a key the authorization server
		// withdraws stops being trusted (OAuthConfig.JWKSMaxRefresh).
		jwk.WithHttprcResourceOption(httprc.WithMaxInterval(cfg.JWKSMaxRefresh)),
		jwk.WithWaitReady(true),
	); err != nil {
		return fail(optionError("JWKSURL", fmt.Errorf("%s: the JWKS cache's first fetch: %w", cfg.JWKSURL, err)))
	}
	set, err := cache.CachedSet(cfg.JWKSURL)
	if err != nil {
		return fail(fmt.Errorf("auth: JWKS %s: %w", cfg.JWKSURL, err))
	}
	ks.provider = &keyProvider{set: set}
	return ks, nil
}

// maxJWKSBytes bounds the start-up fetch's body; real key sets are a few
// kilobytes.
const maxJWKSBytes = 1 << 20

// fetchJWKS fetches and parses the key set at url once, for the cause of
// a failure at start-up.
func fetchJWKS(ctx context.Context, hc *http.Client, url string) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("HTTP status %s, want 200", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return fmt.Errorf("reading the key set: %w", err)
	}
	if len(body) > maxJWKSBytes {
		return fmt.Errorf("the key set is larger than %d bytes", maxJWKSBytes)
	}
	if _, err := jwk.Parse(body); err != nil {
		return fmt.Errorf("parsing the key set: %w", err)
	}
	return nil
}

// refreshForUnknownKey refetches the JWKS because a token named a key it
// does not hold: the authorization server may have rotated its keys. It
// reports whether it fetched; it does nothing when a refresh happened
// within JWKSMinRefresh.
func (ks *keySource) refreshForUnknownKey(ctx context.Context, now time.Time) bool {
	last := ks.lastRefresh.Load()
	if last != 0 && now.UnixNano()-last < int64(ks.minRefresh) {
		ks.log.Debug("auth: a token names a key the JWKS does not hold; not refetching it, it was fetched for an unknown key within JWKSMinRefresh", "url", ks.url, "min_refresh", ks.minRefresh)
		return false
	}
	if !ks.lastRefresh.CompareAndSwap(last, now.UnixNano()) {
		return false
	}
	// Info, not Debug: a rotation is worth an operator's notice, and the
	// rate limit above bounds how often a forger can make this line.
	ks.log.Info("auth: a token names a key the JWKS does not hold; fetching the JWKS again in case the keys were rotated", "url", ks.url)
	if _, err := ks.cache.Refresh(ctx, ks.url); err != nil {
		ks.log.Warn("auth: refreshing the JWKS for an unknown key failed", "err", err)
		return false
	}
	return true
}

func (ks *keySource) close() {
	ks.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := ks.cache.Shutdown(ctx); err != nil {
			ks.log.Warn("auth: stopping the JWKS cache", "err", err)
		}
		if ks.idle != nil {
			ks.idle.CloseIdleConnections()
		}
	})
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
