package auth

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/grpc-mcp-gateway/gateway/internal/loopback"
)

// keySource is where token signatures are checked against: the
// authorization server's JWKS, fetched at start, refreshed in the
// background as often as its response's caching headers say (within
// JWKSMinRefresh and JWKSMaxRefresh), and refreshed at once (at most once
// per JWKSMinRefresh) when a token names a key it does not know, so a
// rotation is picked up without a restart.
//
// Whoever can answer the JWKS fetch can mint tokens, so the fetch is held
// to https (plain http only to a loopback address, for a local
// authorization server) and follows no redirect to another scheme or host.
//
// The background refresh is one timer: at most one goroutine (the timer's
// function, fetching) exists at a time, and close stops the timer, cancels
// a fetch under way and waits for it.
type keySource struct {
	url        string
	log        *slog.Logger
	hc         *http.Client
	minRefresh time.Duration
	maxRefresh time.Duration
	// fetchTimeout bounds a background fetch.
	fetchTimeout time.Duration
	// after schedules the next background refresh: time.AfterFunc, or,
	// in tests, a hand that decides when the refresh runs.
	after func(d time.Duration, f func()) (stop func() bool)

	// keys is the key set as last fetched, replaced whole.
	keys atomic.Pointer[[]jose.JSONWebKey]

	// fetchMu serialises fetches, so that one that started earlier
	// cannot land after a later one and undo it (a rotation picked up
	// for an unknown kid, say). It guards etag and skipped.
	fetchMu sync.Mutex
	// etag is the validator of the set held, sent as If-None-Match.
	etag string
	// skipped is how many keys of the last set could not be read, so a
	// warning about them is logged when that changes, not at every fetch.
	skipped int

	// lastRefresh is when an unknown kid last forced a refresh
	// (UnixNano), to rate-limit refreshes a forger could trigger.
	lastRefresh atomic.Int64

	mu sync.Mutex // guards closed, stop and cancel
	// closed is set by close: nothing is scheduled after it.
	closed bool
	// stop stops the scheduled refresh's timer.
	stop func() bool
	// cancel cancels the background fetch under way.
	cancel context.CancelFunc
	// running counts background refreshes under way, for close to wait.
	running sync.WaitGroup

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
// cause, then keeps it fresh until close, scheduling its refreshes with
// after ([afterFunc] but in tests).
func startKeySource(ctx context.Context, cfg *OAuthConfig, log *slog.Logger, after func(time.Duration, func()) func() bool) (*keySource, error) {
	ks := newKeySource(cfg, log, after)
	next, err := ks.fetch(ctx)
	if err != nil {
		ks.close()
		return nil, optionError("JWKSURL", fmt.Errorf("fetching the JWKS from %s: %w", cfg.JWKSURL, err))
	}
	ks.schedule(next)
	return ks, nil
}

// afterFunc is time.AfterFunc as keySource.after.
func afterFunc(d time.Duration, f func()) func() bool { return time.AfterFunc(d, f).Stop }

// newKeySource is a key source that has fetched nothing yet and
// schedules its refreshes with after.
func newKeySource(cfg *OAuthConfig, log *slog.Logger, after func(time.Duration, func()) func() bool) *keySource {
	ks := &keySource{url: cfg.JWKSURL, log: log, minRefresh: cfg.JWKSMinRefresh, maxRefresh: cfg.JWKSMaxRefresh, after: after}
	if cfg.HTTPClient != nil {
		c := *cfg.HTTPClient // the caller's transport and timeout, our redirect policy
		ks.hc = &c
	} else {
		ks.hc = &http.Client{Timeout: 10 * time.Second, Transport: http.DefaultTransport.(*http.Transport).Clone()}
		ks.idle = ks.hc
	}
	ks.hc.CheckRedirect = sameOriginRedirects
	ks.fetchTimeout = ks.hc.Timeout
	if ks.fetchTimeout <= 0 {
		ks.fetchTimeout = 30 * time.Second
	}
	empty := []jose.JSONWebKey{}
	ks.keys.Store(&empty)
	return ks
}

// maxJWKSBytes bounds a JWKS response's body; real key sets are a few
// kilobytes.
const maxJWKSBytes = 1 << 20

// fetch fetches the key set, replaces the one held when it got a new
// one, and says when to fetch it next, from the response's caching
// headers. A failed fetch leaves the keys held as they were.
func (ks *keySource) fetch(ctx context.Context) (next time.Duration, err error) {
	ks.fetchMu.Lock()
	defer ks.fetchMu.Unlock()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ks.url, nil)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Accept", "application/jwk-set+json, application/json")
	if ks.etag != "" {
		req.Header.Set("If-None-Match", ks.etag)
	}
	resp, err := ks.hc.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotModified && ks.etag != "":
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxJWKSBytes))
		return refreshInterval(resp.Header, time.Now(), ks.minRefresh, ks.maxRefresh), nil
	case resp.StatusCode != http.StatusOK:
		return 0, fmt.Errorf("HTTP status %s, want 200", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxJWKSBytes+1))
	if err != nil {
		return 0, fmt.Errorf("reading the key set: %w", err)
	}
	if len(body) > maxJWKSBytes {
		return 0, fmt.Errorf("the key set is larger than %d bytes", maxJWKSBytes)
	}
	keys, skipped, err := parseJWKS(body)
	if err != nil {
		return 0, fmt.Errorf("parsing the key set: %w", err)
	}
	if len(skipped) != ks.skipped && len(skipped) > 0 {
		ks.log.Warn("auth: the JWKS holds keys that cannot verify a token; ignoring them", "url", ks.url, "ignored", len(skipped), "first", skipped[0])
	}
	ks.skipped = len(skipped)
	ks.keys.Store(&keys)
	ks.etag = resp.Header.Get("ETag")
	return refreshInterval(resp.Header, time.Now(), ks.minRefresh, ks.maxRefresh), nil
}

// parseJWKS reads a JWK Set (RFC 7517 section 5): the public keys that can
// verify a signature, and why each other key was left out. A key this
// package cannot use (an unknown type or curve, a symmetric key) does not
// make the whole set unusable.
func parseJWKS(body []byte) (keys []jose.JSONWebKey, skipped []string, err error) {
	var set struct {
		Keys []json.RawMessage `json:"keys"`
	}
	if err := json.Unmarshal(body, &set); err != nil {
		return nil, nil, err
	}
	if set.Keys == nil {
		return nil, nil, errors.New(`want a JSON object with a "keys" array`)
	}
	keys = make([]jose.JSONWebKey, 0, len(set.Keys))
	for i, raw := range set.Keys {
		var k jose.JSONWebKey
		if err := k.UnmarshalJSON(raw); err != nil {
			skipped = append(skipped, fmt.Sprintf("key %d: %v", i, err))
			continue
		}
		if why := unusable(k, raw); why != "" {
			skipped = append(skipped, fmt.Sprintf("key %d (kid %q): %s", i, k.KeyID, why))
			continue
		}
		keys = append(keys, k)
	}
	return keys, skipped, nil
}

// minRSABits is the smallest RSA modulus RFC 7518 section 3.3 allows for
// RS* and PS* ("a key of size 2048 bits or larger MUST be used").
const minRSABits = 2048

// unusable says why the key k of the JWKS, read from raw, may not verify
// a token, or "" when it may.
func unusable(k jose.JSONWebKey, raw json.RawMessage) string {
	if !k.IsPublic() {
		// RFC 8414 section 2: the JWKS "MUST NOT contain private or
		// symmetric key values". A private key published there is known
		// to anyone who fetched it: whatever it signs proves nothing.
		if _, sym := k.Key.([]byte); sym {
			return "a symmetric key: a JWKS holds public keys only"
		}
		return "a private key published in the JWKS: anyone who fetched it can sign with it"
	}
	if keyTypeOf(k.Key) == "" {
		return fmt.Sprintf("%T is not a public signature key", k.Key)
	}
	if rk, ok := k.Key.(*rsa.PublicKey); ok && rk.N.BitLen() < minRSABits {
		return fmt.Sprintf("an RSA key of %d bits; RFC 7518 wants at least %d", rk.N.BitLen(), minRSABits)
	}
	// go-jose does not read key_ops (RFC 7517 section 4.3): a key whose
	// operations are listed and exclude "verify" is meant for something
	// else (decryption, say), and using it for signatures is the
	// cross-use the parameter exists to prevent.
	var ops struct {
		KeyOps *[]string `json:"key_ops"`
	}
	if err := json.Unmarshal(raw, &ops); err != nil {
		return fmt.Sprintf("key_ops: %v", err)
	}
	if ops.KeyOps != nil && !slices.Contains(*ops.KeyOps, "verify") {
		return fmt.Sprintf("its key_ops %q do not include \"verify\"", *ops.KeyOps)
	}
	return ""
}

// refreshInterval is how long the response with header h may be kept:
// its Cache-Control max-age, else its Expires, else max; within [min,
// max] whatever it says, so a key the authorization server withdraws
// stops being trusted within max (OAuthConfig.JWKSMaxRefresh), and a
// server that forbids caching is not fetched more often than min.
func refreshInterval(h http.Header, now time.Time, min, max time.Duration) time.Duration {
	d, ok := maxAge(h)
	if !ok {
		d = max
		if e := h.Get("Expires"); e != "" {
			d = 0 // RFC 9111 section 5.3: an invalid date means already expired
			if exp, err := http.ParseTime(e); err == nil {
				if date, err := http.ParseTime(h.Get("Date")); err == nil {
					now = date
				}
				d = exp.Sub(now)
			}
		}
	}
	return clamp(d, min, max)
}

// maxAge reads Cache-Control: max-age, or 0 for no-store and no-cache.
func maxAge(h http.Header) (time.Duration, bool) {
	for _, line := range h.Values("Cache-Control") {
		for _, dir := range strings.Split(line, ",") {
			name, val, _ := strings.Cut(strings.TrimSpace(dir), "=")
			switch strings.ToLower(strings.TrimSpace(name)) {
			case "no-store", "no-cache":
				return 0, true
			case "max-age":
				n, err := strconv.ParseInt(strings.Trim(strings.TrimSpace(val), `"`), 10, 64)
				if err != nil || n < 0 {
					return 0, true
				}
				if n > int64(365*24*time.Hour/time.Second) {
					n = int64(365 * 24 * time.Hour / time.Second)
				}
				return time.Duration(n) * time.Second, true
			}
		}
	}
	return 0, false
}

func clamp(d, lo, hi time.Duration) time.Duration {
	return min(max(d, lo), hi)
}

// schedule arms the next background refresh, unless the source is
// closed.
func (ks *keySource) schedule(d time.Duration) {
	ks.mu.Lock()
	defer ks.mu.Unlock()
	if ks.closed {
		return
	}
	ks.stop = ks.after(d, ks.refresh)
}

// refresh is the background refresh: it fetches the set and schedules
// the next one; a failure keeps the keys held and tries again after
// JWKSMinRefresh.
func (ks *keySource) refresh() {
	ks.mu.Lock()
	if ks.closed {
		ks.mu.Unlock()
		return
	}
	// The fetch lives until close, not until any caller's context.
	ctx, cancel := context.WithTimeout(context.Background(), ks.fetchTimeout)
	ks.cancel = cancel
	ks.running.Add(1)
	ks.mu.Unlock()
	defer ks.running.Done()

	next, err := ks.fetch(ctx)
	cancel()
	ks.mu.Lock()
	ks.cancel = nil
	closed := ks.closed
	ks.mu.Unlock()
	if closed {
		return
	}
	if err != nil {
		ks.log.Warn("auth: refreshing the JWKS failed; keeping the keys already fetched", "url", ks.url, "err", err)
		next = ks.minRefresh
	}
	ks.schedule(next)
}

// refreshForUnknownKey refetches the JWKS because a token named a key it
// does not hold: the authorization server may have rotated its keys. It
// reports whether it fetched; it does nothing when a refresh happened
// within JWKSMinRefresh.
func (ks *keySource) refreshForUnknownKey(ctx context.Context, now time.Time) bool {
	ks.mu.Lock()
	closed := ks.closed
	ks.mu.Unlock()
	if closed {
		// A fetch now would leave a connection, and its goroutines, in
		// the pool close has emptied.
		return false
	}
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
	// The fetch outlives the request that asked for it, within the
	// fetch timeout: a forger who hangs up at once would otherwise
	// cancel it with the rate limit's slot spent, and, doing so every
	// JWKSMinRefresh, keep a rotation from being picked up until the
	// background refresh.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), ks.fetchTimeout)
	defer cancel()
	if _, err := ks.fetch(ctx); err != nil {
		ks.log.Warn("auth: refreshing the JWKS for an unknown key failed", "err", err)
		return false
	}
	return true
}

// close stops the background refresh and waits for one under way.
func (ks *keySource) close() {
	ks.closeOnce.Do(func() {
		ks.mu.Lock()
		ks.closed = true
		if ks.stop != nil {
			ks.stop()
		}
		if ks.cancel != nil {
			ks.cancel()
		}
		ks.mu.Unlock()
		ks.running.Wait()
		if ks.idle != nil {
			ks.idle.CloseIdleConnections()
		}
	})
}

var (
	errNoKey         = errors.New("no key in the JWKS matches the token")
	errAlgNotAllowed = errors.New("signature algorithm not allowed")
)

// Key types (RFC 7518 section 6.1, RFC 8037).
const (
	ktyRSA = "RSA"
	ktyEC  = "EC"
	ktyOKP = "OKP"
)

// keyTypeOf is the JWK key type of a public key, "" for any other.
func keyTypeOf(key any) string {
	switch key.(type) {
	case *rsa.PublicKey:
		return ktyRSA
	case *ecdsa.PublicKey:
		return ktyEC
	case ed25519.PublicKey:
		return ktyOKP
	}
	return ""
}

// keyFamily maps the accepted signature algorithms to the key type that
// may verify them. Only asymmetric algorithms are here: "none" and the
// HMAC family are refused outright, so a public key can never be used as
// an HMAC secret.
var keyFamily = map[jose.SignatureAlgorithm]string{
	jose.RS256: ktyRSA, jose.RS384: ktyRSA, jose.RS512: ktyRSA,
	jose.PS256: ktyRSA, jose.PS384: ktyRSA, jose.PS512: ktyRSA,
	jose.ES256: ktyEC, jose.ES384: ktyEC, jose.ES512: ktyEC,
	jose.EdDSA: ktyOKP, algEd25519: ktyOKP,
}

// algEd25519 is RFC 9864's fully-specified name for EdDSA on Ed25519,
// which go-jose does not know: its keys verify through ed25519Verifier.
const algEd25519 = jose.SignatureAlgorithm("Ed25519")

// allowedAlgs is keyFamily's algorithms, for the parser, which refuses
// any other before a key is looked at.
var allowedAlgs = func() []jose.SignatureAlgorithm {
	algs := make([]jose.SignatureAlgorithm, 0, len(keyFamily))
	for a := range keyFamily {
		algs = append(algs, a)
	}
	return algs
}()

// ed25519Verifier verifies EdDSA under either of its names.
type ed25519Verifier ed25519.PublicKey

func (v ed25519Verifier) VerifyPayload(payload, sig []byte, alg jose.SignatureAlgorithm) error {
	if alg != jose.EdDSA && alg != algEd25519 {
		return fmt.Errorf("%w: %q with an Ed25519 key", errAlgNotAllowed, alg)
	}
	if !ed25519.Verify(ed25519.PublicKey(v), payload, sig) {
		return jose.ErrCryptoFailure
	}
	return nil
}

// candidates are the keys held that may verify a signature made with alg
// under kid: the alg must be asymmetric, the key of that alg's type, meant
// for signatures, carrying kid when the token names one, and carrying the
// same alg when the key declares one. Keys without "alg" (common in
// Microsoft Entra's JWKS) are still usable, but only with an alg of their
// own key type.
func (ks *keySource) candidates(alg jose.SignatureAlgorithm, kid string) ([]any, error) {
	kty, ok := keyFamily[alg]
	if !ok {
		return nil, fmt.Errorf("%w: %q", errAlgNotAllowed, alg)
	}
	var out []any
	for _, k := range *ks.keys.Load() {
		if kid != "" && k.KeyID != kid {
			continue
		}
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		if keyTypeOf(k.Key) != kty {
			continue
		}
		if k.Algorithm != "" && k.Algorithm != string(alg) {
			continue
		}
		if ed, ok := k.Key.(ed25519.PublicKey); ok {
			out = append(out, ed25519Verifier(ed))
		} else {
			out = append(out, k.Key)
		}
	}
	if len(out) == 0 {
		return nil, errNoKey
	}
	return out, nil
}

// verify checks the signature of a compact JWS against the keys that may
// have made it, and returns its payload.
func (ks *keySource) verify(sig *jose.JSONWebSignature) ([]byte, error) {
	h := sig.Signatures[0].Header
	keys, err := ks.candidates(jose.SignatureAlgorithm(h.Algorithm), h.KeyID)
	if err != nil {
		return nil, err
	}
	var last error
	for _, k := range keys {
		payload, err := sig.Verify(k)
		if err == nil {
			return payload, nil
		}
		last = err
	}
	return nil, fmt.Errorf("verifying the signature: %w", last)
}
