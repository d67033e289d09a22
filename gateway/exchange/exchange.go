// Package exchange gets a backend its own token for each caller, by OAuth
// 2.0 Token Exchange (RFC 8693): the gateway trades the caller's validated
// access token at the authorization server's token endpoint for one meant
// for the backend (its audience, its resource, its scopes), so the backend
// sees the end user while the caller's own token, issued for the gateway,
// never leaves it.
//
// An Exchanger serves one backend. Exchanged tokens are kept per (subject
// token, scopes) until shortly before they expire, bounded in number;
// concurrent calls that need the same token share one request; a refusal
// is an *Error with the server's code (invalid_target, invalid_scope...)
// and is kept for 5 s, any other failure for 1 s, so a model calling again
// at once does not make the gateway ask again; nothing is retried in a
// loop. The package knows
// nothing of MCP or gRPC.
//
// This package is library API because a backend's token exchange is an
// [Exchanger] made with [New] and handed over as
// gateway.Backend.TokenExchange.
package exchange

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/cryptosigner"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/grpc-mcp-gateway/gateway/internal/loopback"
)

// The RFC 8693 names.
const (
	GrantType       = "urn:ietf:params:oauth:grant-type:token-exchange"
	AccessTokenType = "urn:ietf:params:oauth:token-type:access_token"
	// jwtBearerAssertion is RFC 7523's client assertion type, for
	// private_key_jwt client authentication.
	jwtBearerAssertion = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
)

// Defaults of Options.
const (
	DefaultTimeout    = 10 * time.Second
	DefaultMaxEntries = 10000
	DefaultEarly      = 30 * time.Second
	// refusalTTL is how long a refusal (an OAuth error answer) is kept,
	// failureTTL any other failure: the callers of that moment share it,
	// and a call a little later asks again.
	refusalTTL = 5 * time.Second
	failureTTL = time.Second
	// maxResponseBytes bounds what is read of the token endpoint's answer.
	maxResponseBytes = 1 << 20
)

// Options configure an Exchanger; TokenURL, ClientID, one of
// ClientSecret and PrivateKey, and one of Audience and Resource are
// required.
type Options struct {
	// TokenURL is the authorization server's token endpoint: https, or
	// http to a loopback address.
	TokenURL string
	// ClientID is the gateway's client at the authorization server.
	ClientID string
	// ClientSecret authenticates the client with client_secret_basic.
	ClientSecret string
	// PrivateKey authenticates the client with private_key_jwt (RFC
	// 7523): each request carries an assertion signed with it (ES256 for
	// an ECDSA P-256 key, RS256 for RSA), naming KeyID as its kid.
	PrivateKey crypto.Signer
	KeyID      string
	// Audience and Resource name the backend to the authorization server
	// (RFC 8693 audience, a logical name; resource, a URI); either or
	// both.
	Audience string
	Resource string
	// Scopes are asked for the backend's token; a call may add its own
	// (Token's scopes).
	Scopes []string
	// Timeout bounds one request to the token endpoint. Default
	// DefaultTimeout.
	Timeout time.Duration
	// MaxEntries bounds the tokens kept. Default DefaultMaxEntries.
	MaxEntries int
	// Early is how long before its expiry a kept token is exchanged
	// again. Default DefaultEarly.
	Early time.Duration
	// Transport carries the requests; nil: http.DefaultTransport.
	Transport http.RoundTripper
	// Observe, when set, is told of every request to the token endpoint:
	// its outcome ("ok", "refused": an OAuth error answer, "failed":
	// anything else) and how long it took.
	Observe func(outcome string, d time.Duration)
}

// Error is the token endpoint's refusal (RFC 6749 section 5.2), or what
// went wrong reaching it (Code "failed").
type Error struct {
	Code        string
	Description string
	// Status is the HTTP status of the answer, 0 when there was none.
	Status int
}

func (e *Error) Error() string {
	s := "token exchange: " + e.Code
	if e.Description != "" {
		s += ": " + e.Description
	}
	return s
}

// Exchanger exchanges and keeps tokens for one backend. It is safe for
// concurrent use.
type Exchanger struct {
	o      Options
	client *http.Client
	// signer signs the private_key_jwt assertions; nil with a client
	// secret.
	signer jose.Signer

	mu      sync.Mutex
	entries map[string]*entry
}

// entry is one kept token, or one exchange under way (done open).
type entry struct {
	done  chan struct{}
	token string
	err   error
	until time.Time // when the token, or the refusal, stops being used
}

// New checks o and returns an Exchanger.
func New(o Options) (*Exchanger, error) {
	u, err := url.Parse(o.TokenURL)
	switch {
	case o.TokenURL == "" || err != nil || u.Host == "":
		return nil, fmt.Errorf("exchange: token URL %q: want an absolute https URL", o.TokenURL)
	case u.Scheme != "https" && !(u.Scheme == "http" && loopback.Host(u.Hostname())):
		return nil, fmt.Errorf("exchange: token URL %q: want https (http only to a loopback address): the request carries the caller's token and the client's credential", o.TokenURL)
	case o.ClientID == "":
		return nil, errors.New("exchange: a client id is required")
	case (o.ClientSecret == "") == (o.PrivateKey == nil):
		return nil, errors.New("exchange: want exactly one client credential: a client secret (client_secret_basic) or a private key (private_key_jwt)")
	case o.Audience == "" && o.Resource == "":
		return nil, errors.New("exchange: want an audience or a resource naming the backend")
	}
	if o.Resource != "" {
		if r, err := url.Parse(o.Resource); err != nil || !r.IsAbs() || r.Fragment != "" {
			return nil, fmt.Errorf("exchange: resource %q: want an absolute URI without a fragment (RFC 8707)", o.Resource)
		}
	}
	for _, s := range o.Scopes {
		if !validScope(s) {
			return nil, fmt.Errorf("exchange: scope %q is not a scope token", s)
		}
	}
	x := &Exchanger{o: o, entries: make(map[string]*entry)}
	if o.PrivateKey != nil {
		if x.signer, err = assertionSigner(o.PrivateKey, o.KeyID); err != nil {
			return nil, err
		}
	}
	if x.o.Timeout <= 0 {
		x.o.Timeout = DefaultTimeout
	}
	if x.o.MaxEntries <= 0 {
		x.o.MaxEntries = DefaultMaxEntries
	}
	if x.o.Early <= 0 {
		x.o.Early = DefaultEarly
	}
	x.client = &http.Client{Transport: o.Transport, Timeout: x.o.Timeout,
		// The token endpoint answers; a redirect would carry the
		// credentials elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return x, nil
}

// Token returns a token for the backend on behalf of the holder of
// subjectToken (a validated access token), valid until at least the
// Early margin from now; scopes are asked on top of Options.Scopes.
// notAfter, when not zero, is when subjectToken expires: a token kept
// for it is not used past then.
func (x *Exchanger) Token(ctx context.Context, subjectToken string, scopes []string, notAfter time.Time) (string, error) {
	scopes = x.scopes(scopes)
	key := cacheKey(subjectToken, scopes)
	now := time.Now()
	x.mu.Lock()
	e, ok := x.entries[key]
	if ok {
		select {
		case <-e.done:
			if !now.Before(e.until) {
				delete(x.entries, key)
				ok = false
			}
		default:
		}
	}
	if !ok {
		e = &entry{done: make(chan struct{})}
		x.makeRoom(now)
		x.entries[key] = e
		// The request runs on its own, bounded by Options.Timeout: every
		// caller, the first included, waits for it only as long as its
		// own context allows, and all of them get its one answer.
		go x.exchange(context.WithoutCancel(ctx), e, subjectToken, scopes, notAfter)
	}
	x.mu.Unlock()
	select {
	case <-e.done:
		return e.token, e.err
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// exchange makes the request for e and closes e.done. Its context carries
// the first caller's values, not its cancellation: the callers waiting on
// it must not see the first one's cancellation as their error.
func (x *Exchanger) exchange(ctx context.Context, e *entry, subjectToken string, scopes []string, notAfter time.Time) {
	defer close(e.done)
	start := time.Now()
	tok, expiresIn, err := x.request(ctx, subjectToken, scopes)
	outcome := "ok"
	var xe *Error
	switch {
	case errors.As(err, &xe) && xe.Code != "failed":
		outcome = "refused"
	case err != nil:
		outcome = "failed"
	}
	if x.o.Observe != nil {
		x.o.Observe(outcome, time.Since(start))
	}
	now := time.Now()
	switch {
	case outcome == "refused":
		e.err, e.until = err, now.Add(refusalTTL)
	case err != nil:
		e.err, e.until = err, now.Add(failureTTL)
	default:
		e.token = tok
		e.until = now.Add(time.Minute)
		switch {
		case expiresIn > 2*x.o.Early:
			e.until = now.Add(expiresIn - x.o.Early)
		case expiresIn > 0:
			// A short-lived token is used for half its life, so calls
			// made at once share it and none is sent about to expire.
			e.until = now.Add(expiresIn / 2)
		}
		if !notAfter.IsZero() && notAfter.Before(e.until) {
			e.until = notAfter
		}
	}
}

// makeRoom removes the entries past their time, and, when the store is
// still full, an arbitrary finished one. Called with mu held.
func (x *Exchanger) makeRoom(now time.Time) {
	if len(x.entries) < x.o.MaxEntries {
		return
	}
	var victim string
	for k, e := range x.entries {
		select {
		case <-e.done:
			if !now.Before(e.until) {
				delete(x.entries, k)
				continue
			}
			victim = k
		default:
		}
	}
	if len(x.entries) >= x.o.MaxEntries && victim != "" {
		delete(x.entries, victim)
	}
}

// Len is the number of tokens kept (and exchanges under way).
func (x *Exchanger) Len() int {
	x.mu.Lock()
	defer x.mu.Unlock()
	return len(x.entries)
}

// request is one exchange at the token endpoint.
func (x *Exchanger) request(ctx context.Context, subjectToken string, scopes []string) (string, time.Duration, error) {
	form := url.Values{
		"grant_type":           {GrantType},
		"subject_token":        {subjectToken},
		"subject_token_type":   {AccessTokenType},
		"requested_token_type": {AccessTokenType},
	}
	if x.o.Audience != "" {
		form.Set("audience", x.o.Audience)
	}
	if x.o.Resource != "" {
		form.Set("resource", x.o.Resource)
	}
	if len(scopes) > 0 {
		form.Set("scope", strings.Join(scopes, " "))
	}
	if x.o.PrivateKey != nil {
		assertion, err := x.assertion()
		if err != nil {
			return "", 0, &Error{Code: "failed", Description: "signing the client assertion: " + err.Error()}
		}
		form.Set("client_id", x.o.ClientID)
		form.Set("client_assertion_type", jwtBearerAssertion)
		form.Set("client_assertion", assertion)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, x.o.TokenURL, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, &Error{Code: "failed", Description: err.Error()}
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	if x.o.ClientSecret != "" {
		// RFC 6749 section 2.3.1: both parts form-encoded first.
		req.SetBasicAuth(url.QueryEscape(x.o.ClientID), url.QueryEscape(x.o.ClientSecret))
	}
	resp, err := x.client.Do(req)
	if err != nil {
		// The URL is the operator's; the error names it, never the form.
		if ue := (*url.Error)(nil); errors.As(err, &ue) {
			err = ue.Err // without the URL, which the operator knows
		}
		return "", 0, &Error{Code: "failed", Description: "the token endpoint did not answer: " + err.Error()}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxResponseBytes))
	if err != nil {
		return "", 0, &Error{Code: "failed", Description: "reading the token endpoint's answer: " + err.Error(), Status: resp.StatusCode}
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt != "application/json" {
		return "", 0, &Error{Code: "failed", Description: fmt.Sprintf("the token endpoint answered %d with %q, not JSON", resp.StatusCode, mt), Status: resp.StatusCode}
	}
	if resp.StatusCode != http.StatusOK {
		var oe struct {
			Error       string `json:"error"`
			Description string `json:"error_description"`
		}
		if json.Unmarshal(body, &oe) != nil || oe.Error == "" {
			return "", 0, &Error{Code: "failed", Description: fmt.Sprintf("the token endpoint answered %d without an OAuth error", resp.StatusCode), Status: resp.StatusCode}
		}
		return "", 0, &Error{Code: oe.Error, Description: oe.Description, Status: resp.StatusCode}
	}
	var tr struct {
		AccessToken     string          `json:"access_token"`
		IssuedTokenType string          `json:"issued_token_type"`
		TokenType       string          `json:"token_type"`
		ExpiresIn       json.RawMessage `json:"expires_in"`
	}
	if err := json.Unmarshal(body, &tr); err != nil {
		return "", 0, &Error{Code: "failed", Description: "the token endpoint's answer is not a token response: " + err.Error(), Status: resp.StatusCode}
	}
	switch {
	case tr.AccessToken == "":
		return "", 0, &Error{Code: "failed", Description: "the token endpoint's answer has no access_token", Status: resp.StatusCode}
	case !strings.EqualFold(tr.TokenType, "Bearer"):
		// RFC 8693 section 2.2.1: N_A is a token that is not an access
		// token; the backend takes bearer tokens.
		return "", 0, &Error{Code: "failed", Description: fmt.Sprintf("the token endpoint issued a token of type %q, not Bearer", tr.TokenType), Status: resp.StatusCode}
	}
	var expiresIn time.Duration
	if len(tr.ExpiresIn) > 0 {
		// A number, or (some servers) a string holding one.
		s := strings.Trim(string(tr.ExpiresIn), `"`)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil && n > 0 {
			expiresIn = time.Duration(n) * time.Second
		}
	}
	return tr.AccessToken, expiresIn, nil
}

// assertion is a private_key_jwt client assertion for one request.
func (x *Exchanger) assertion() (string, error) {
	var jti [16]byte
	if _, err := rand.Read(jti[:]); err != nil {
		return "", err
	}
	now := time.Now()
	return jwt.Signed(x.signer).Claims(jwt.Claims{
		Issuer:   x.o.ClientID,
		Subject:  x.o.ClientID,
		Audience: jwt.Audience{x.o.TokenURL},
		IssuedAt: jwt.NewNumericDate(now),
		Expiry:   jwt.NewNumericDate(now.Add(time.Minute)),
		ID:       hex.EncodeToString(jti[:]),
	}).Serialize()
}

// assertionSigner signs assertions with key, naming kid when it is set.
// The algorithm is ES256 for P-256, RS256 for RSA, EdDSA for Ed25519, the
// ones authorization servers take for private_key_jwt.
func assertionSigner(key crypto.Signer, kid string) (jose.Signer, error) {
	var alg jose.SignatureAlgorithm
	switch pub := key.Public().(type) {
	case *ecdsa.PublicKey:
		if pub.Curve != elliptic.P256() {
			return nil, fmt.Errorf("exchange: private key: ECDSA on %s; want P-256 (ES256)", pub.Curve.Params().Name)
		}
		alg = jose.ES256
	case *rsa.PublicKey:
		if pub.N.BitLen() < 2048 {
			return nil, fmt.Errorf("exchange: private key: RSA of %d bits; want at least 2048", pub.N.BitLen())
		}
		alg = jose.RS256
	case ed25519.PublicKey:
		alg = jose.EdDSA
	default:
		return nil, fmt.Errorf("exchange: private key: %T; want ECDSA P-256, RSA or Ed25519", key.Public())
	}
	var sk any = key
	switch key.(type) {
	case *ecdsa.PrivateKey, *rsa.PrivateKey, ed25519.PrivateKey:
	default:
		// A signer whose key stays elsewhere (an HSM, a KMS).
		sk = cryptosigner.Opaque(key)
	}
	opts := (&jose.SignerOptions{}).WithType("JWT")
	if kid != "" {
		opts = opts.WithHeader(jose.HeaderKey("kid"), kid)
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: sk}, opts)
	if err != nil {
		return nil, fmt.Errorf("exchange: private key: %w", err)
	}
	return s, nil
}

// scopes are Options.Scopes and extra, sorted, without duplicates.
func (x *Exchanger) scopes(extra []string) []string {
	if len(extra) == 0 {
		return x.o.Scopes
	}
	all := slices.Concat(x.o.Scopes, extra)
	slices.Sort(all)
	return slices.Compact(all)
}

// cacheKey keys a token by its subject token's digest (the token itself
// is not kept as a key) and the scopes asked.
func cacheKey(subjectToken string, scopes []string) string {
	d := sha256.Sum256([]byte(subjectToken))
	return base64.RawStdEncoding.EncodeToString(d[:]) + " " + strings.Join(scopes, " ")
}

func validScope(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x21 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}
