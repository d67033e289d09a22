package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

const (
	issuer   = "https://as.example.com"
	resource = "https://mcp.example.com/mcp"
)

// idp is a test authorization server: it holds signing keys and serves
// their public halves as a JWKS.
type idp struct {
	t       *testing.T
	mu      sync.Mutex
	set     jose.JSONWebKeySet
	keys    map[string]jose.JSONWebKey // kid -> private key
	fetches atomic.Int32
	srv     *httptest.Server
	// cacheControl, when set, is the JWKS response's Cache-Control.
	cacheControl string
}

func newIDP(t *testing.T) *idp {
	t.Helper()
	p := &idp{t: t, keys: map[string]jose.JSONWebKey{}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.fetches.Add(1)
		p.mu.Lock()
		defer p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if p.cacheControl != "" {
			w.Header().Set("Cache-Control", p.cacheControl)
		}
		_ = json.NewEncoder(w).Encode(p.set)
	}))
	t.Cleanup(p.srv.Close)
	p.addEC("ec1", true)
	return p
}

func (p *idp) jwksURL() string { return p.srv.URL + "/jwks.json" }

// withdraw takes the key kid out of the JWKS.
func (p *idp) withdraw(kid string) {
	p.t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, k := range p.set.Keys {
		if k.KeyID == kid {
			p.set.Keys = append(p.set.Keys[:i], p.set.Keys[i+1:]...)
			return
		}
	}
	p.t.Fatalf("no key %s to withdraw", kid)
}

// addEC adds a P-256 key; publish=false keeps it out of the JWKS, for
// forged signatures.
func (p *idp) addEC(kid string, publish bool) jose.JSONWebKey {
	p.t.Helper()
	raw, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	return p.add(raw, kid, jose.ES256, publish, true)
}

func (p *idp) add(raw any, kid string, alg jose.SignatureAlgorithm, publish, declareAlg bool) jose.JSONWebKey {
	p.t.Helper()
	priv := jose.JSONWebKey{Key: raw, KeyID: kid, Algorithm: string(alg)}
	pub := priv.Public()
	if !pub.Valid() {
		p.t.Fatalf("key %s: no public half", kid)
	}
	if !declareAlg {
		pub.Algorithm = ""
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys[kid] = priv
	if publish {
		p.set.Keys = append(p.set.Keys, pub)
	}
	return priv
}

type claims map[string]any

// sign signs the claims c with the key kid under alg, naming kid, with
// the extra protected headers hdr.
func (p *idp) sign(kid string, alg jose.SignatureAlgorithm, c claims, hdr map[string]any) string {
	p.t.Helper()
	p.mu.Lock()
	key := p.keys[kid]
	p.mu.Unlock()
	opts := (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid)
	for k, v := range hdr {
		opts = opts.WithHeader(jose.HeaderKey(k), v)
	}
	signer, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key.Key}, opts)
	if err != nil {
		p.t.Fatal(err)
	}
	s, err := jwt.Signed(signer).Claims(map[string]any(c)).Serialize()
	if err != nil {
		p.t.Fatal(err)
	}
	return s
}

// claims are the claims of a valid token with c added.
func (p *idp) claims(c claims) claims {
	all := claims{"iss": issuer, "aud": []string{resource}, "sub": "alice",
		"iat": time.Now().Unix(), "exp": time.Now().Add(time.Hour).Unix()}
	for k, v := range c {
		all[k] = v
	}
	return all
}

func (p *idp) token(kid string, c claims) string {
	p.t.Helper()
	p.mu.Lock()
	alg := p.keys[kid].Algorithm
	p.mu.Unlock()
	return p.sign(kid, jose.SignatureAlgorithm(alg), p.claims(c), nil)
}

func startOAuth(t *testing.T, p *idp, mod func(*auth.OAuthConfig)) *auth.Authenticator {
	t.Helper()
	a, _ := startOAuthLogged(t, p, mod)
	return a
}

// startOAuthLogged is startOAuth with its debug log.
func startOAuthLogged(t *testing.T, p *idp, mod func(*auth.OAuthConfig)) (*auth.Authenticator, *testkit.SyncBuffer) {
	t.Helper()
	cfg := &auth.OAuthConfig{
		JWKSURL:        p.jwksURL(),
		Issuer:         issuer,
		Resource:       resource,
		RequiredScopes: []string{"mcp"},
		ToolScopes:     map[string][]string{"ZooService_DeleteAnimal": {"zoo:admin"}},
	}
	if mod != nil {
		mod(cfg)
	}
	log, logs := testLogger()
	a, err := auth.New(context.Background(), auth.Config{OAuth: cfg, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a, logs
}

const metadataURL = `resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestOAuthTokens(t *testing.T) {
	p := newIDP(t)
	a, logs := startOAuthLogged(t, p, nil)
	h := a.Wrap(echo)

	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	// An RSA key published without "alg", as Microsoft Entra does: usable
	// with an RSA algorithm of the token's choosing, nothing else.
	p.add(rsaKey, "rsa-noalg", jose.RS256, true, false)
	p.add(rsaKey, "rsa-pss", jose.PS256, true, true)
	_, edKey, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.add(edKey, "ed", jose.EdDSA, true, true)
	// The same key under RFC 9864's name for its algorithm.
	p.add(edKey, "ed-named", "Ed25519", true, true)
	p.addEC("forger", false)

	now := time.Now()
	payload := `{"iss":"` + issuer + `","aud":"` + resource + `","sub":"mallory","scope":"mcp","exp":` + jsonTime(now.Add(time.Hour)) + `}`
	algNone := b64(`{"alg":"none","typ":"JWT"}`) + "." + b64(payload) + "."
	// HMAC "signed" with the public key's JSON as the secret: the classic
	// key-confusion attack.
	pubJSON, _ := json.Marshal(p.set)
	hmacSigner, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: pubJSON}, (&jose.SignerOptions{}).WithType("JWT"))
	if err != nil {
		t.Fatal(err)
	}
	hmacSigned, err := jwt.Signed(hmacSigner).Claims(map[string]any{"iss": issuer, "aud": resource, "sub": "mallory", "exp": now.Add(time.Hour).Unix(), "scope": "mcp"}).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	// The JSON serialization of a valid token: only the compact one is
	// a bearer token.
	ecSigner, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.ES256, Key: p.keys["ec1"].Key}, (&jose.SignerOptions{}).WithHeader("kid", "ec1"))
	if err != nil {
		t.Fatal(err)
	}
	validClaims, _ := json.Marshal(p.claims(claims{"scope": "mcp"}))
	jsonSerialized, err := ecSigner.Sign(validClaims)
	if err != nil {
		t.Fatal(err)
	}
	valid := p.token("ec1", claims{"scope": "mcp read"})
	tampered := valid[:strings.LastIndex(valid, ".")] + "." + b64("not the signature")

	cases := []struct {
		name   string
		token  string
		status int
		want   string // substring of WWW-Authenticate
	}{
		{"valid", valid, 200, ""},
		{"valid scp array", p.token("ec1", claims{"scp": []string{"mcp"}}), 200, ""},
		{"valid rsa key without alg", p.token("rsa-noalg", claims{"scope": "mcp"}), 200, ""},
		{"valid PS256", p.token("rsa-pss", claims{"scope": "mcp"}), 200, ""},
		{"valid EdDSA", p.token("ed", claims{"scope": "mcp"}), 200, ""},
		{"valid Ed25519", edNamed(t, p, edKey), 200, ""},
		// The default leeway is 30s.
		{"leeway covers a just-expired token", p.token("ec1", claims{"scope": "mcp", "exp": now.Add(-25 * time.Second).Unix()}), 200, ""},
		{"expired beyond the leeway", p.token("ec1", claims{"scope": "mcp", "exp": now.Add(-35 * time.Second).Unix()}), 401, `error_description="the token has expired"`},
		{"expired", p.token("ec1", claims{"scope": "mcp", "exp": now.Add(-time.Hour).Unix()}), 401, `error_description="the token has expired"`},
		{"not yet valid", p.token("ec1", claims{"scope": "mcp", "nbf": now.Add(time.Hour).Unix()}), 401, `error_description="the token is not valid yet"`},
		{"wrong audience", p.token("ec1", claims{"scope": "mcp", "aud": []string{"https://other.example.com/mcp"}}), 401, `(aud)`},
		{"wrong issuer", p.token("ec1", claims{"scope": "mcp", "iss": "https://evil.example.com"}), 401, `(iss)`},
		{"no exp", noExp(t, p), 401, `error="invalid_token"`},
		// Claim names are matched exactly: "EXP" is not an exp.
		{"EXP for exp", upperExp(p), 401, `error="invalid_token"`},
		{"unknown key", p.token("forger", claims{"scope": "mcp"}), 401, `error="invalid_token"`},
		{"tampered signature", tampered, 401, `error="invalid_token"`},
		{"alg none", algNone, 401, `error="invalid_token"`},
		{"HS256 with the public key", hmacSigned, 401, `algorithm is not accepted`},
		{"an alg not accepted", b64(`{"alg":"ES256K","kid":"ec1"}`) + "." + b64(payload) + "." + b64("a signature"), 401, `algorithm is not accepted`},
		// A valid signature, by a published key, but kid names a key of
		// another type.
		{"kid of an RSA key on ES256", p.sign("ec1", jose.ES256, p.claims(claims{"scope": "mcp"}), map[string]any{"kid": "rsa-noalg"}), 401, `error="invalid_token"`},
		// A valid signature over a header with an extension the gateway
		// does not understand.
		{"crit", p.sign("ec1", jose.ES256, p.claims(claims{"scope": "mcp"}), map[string]any{"crit": []string{"urn:x"}, "urn:x": true}), 401, `error="invalid_token"`},
		{"crit b64", p.sign("ec1", jose.ES256, p.claims(claims{"scope": "mcp"}), map[string]any{"crit": []string{"b64"}, "b64": true}), 401, `error="invalid_token"`},
		{"JSON serialization", jsonSerialized.FullSerialize(), 401, `error="invalid_token"`},
		{"JWE", "eyJhbGciOiJSU0EtT0FFUCJ9.a.b.c.d", 401, `error="invalid_token"`},
		{"garbage", "abc.def.ghi", 401, `error="invalid_token"`},
		{"missing", "", 401, `Bearer scope="mcp", ` + metadataURL},
		{"no global scope", p.token("ec1", claims{"scope": "read"}), 403, `Bearer error="insufficient_scope", error_description="the token lacks a required scope", scope="mcp", ` + metadataURL},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			authz := ""
			if c.token != "" {
				authz = "Bearer " + c.token
			}
			w := do(h, "POST", authz, `{}`)
			if w.Code != c.status {
				t.Fatalf("status %d, want %d; WWW-Authenticate: %s", w.Code, c.status, w.Header().Get("WWW-Authenticate"))
			}
			got := w.Header().Get("WWW-Authenticate")
			if c.status == 200 {
				if w.Header().Get("X-Subject") == "" {
					t.Error("no principal in the request context")
				}
				return
			}
			if !strings.Contains(got, c.want) {
				t.Errorf("WWW-Authenticate %q\nwant it to contain %q", got, c.want)
			}
			if !strings.Contains(got, metadataURL) {
				t.Errorf("WWW-Authenticate %q has no %s", got, metadataURL)
			}
		})
	}
	// A token is a credential: neither it nor its signature is logged,
	// accepted or refused, even at debug (the refusals are logged there).
	if !strings.Contains(logs.String(), "auth: token refused") {
		t.Fatalf("no refusal was logged at debug; log:\n%s", logs)
	}
	for _, c := range cases {
		sig := c.token[strings.LastIndex(c.token, ".")+1:]
		if len(sig) >= 16 && strings.Contains(logs.String(), sig) {
			t.Errorf("%s: the token's signature is in the log", c.name)
		}
	}
}

func jsonTime(t time.Time) string {
	b, _ := json.Marshal(t.Unix())
	return string(b)
}

func noExp(t *testing.T, p *idp) string {
	c := p.claims(claims{"scope": "mcp"})
	delete(c, "exp")
	return p.sign("ec1", jose.ES256, c, nil)
}

func upperExp(p *idp) string {
	c := p.claims(claims{"scope": "mcp"})
	c["EXP"] = c["exp"]
	delete(c, "exp")
	return p.sign("ec1", jose.ES256, c, nil)
}

// edNamed is a valid token signed with key under RFC 9864's name for
// EdDSA on Ed25519, "Ed25519", which go-jose does not sign with.
func edNamed(t *testing.T, p *idp, key ed25519.PrivateKey) string {
	t.Helper()
	hdr, _ := json.Marshal(map[string]string{"alg": "Ed25519", "kid": "ed-named", "typ": "JWT"})
	body, _ := json.Marshal(p.claims(claims{"scope": "mcp"}))
	input := b64(string(hdr)) + "." + b64(string(body))
	return input + "." + base64.RawURLEncoding.EncodeToString(ed25519.Sign(key, []byte(input)))
}

// authorizing is the handler behind the middleware in Authorize tests: it
// asks Authorize with the scopes of the rule named in the X-Tool header
// (the gateway asks with the scopes it resolved for the tool it is about
// to run) and answers 200 or the refusal's status and challenge. The body
// is echoed, to show the middleware no longer reads it.
func authorizing(a *auth.Authenticator) http.Handler {
	rules := a.ToolScopes()
	return a.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := a.Authorize(r.Context(), rules[r.Header.Get("X-Tool")]); err != nil {
			var ref *auth.Refusal
			if !errors.As(err, &ref) {
				http.Error(w, err.Error(), 500)
				return
			}
			w.Header().Set("WWW-Authenticate", ref.Challenge)
			w.WriteHeader(ref.Status)
			return
		}
		echo.ServeHTTP(w, r)
	}))
}

// TestAuthorizeToolScopes: the scopes of the tool being run, which the
// caller resolves from the rules ToolScopes hands out, decide; the
// refusal carries the same 403 challenge as a global scope, so a client
// can step up. The middleware passes every body on untouched, even a
// tools/call of a scoped tool: it no longer parses JSON-RPC.
func TestAuthorizeToolScopes(t *testing.T) {
	p := newIDP(t)
	a := startOAuth(t, p, nil)
	rules := a.ToolScopes()
	rules["ZooService_DeleteAnimal"][0] = "changed"
	if got := a.ToolScopes()["ZooService_DeleteAnimal"]; len(got) != 1 || got[0] != "zoo:admin" {
		t.Fatalf("ToolScopes after the caller changed its copy: %v, want the configured [zoo:admin]", got)
	}
	h := authorizing(a)
	user := "Bearer " + p.token("ec1", claims{"scope": "mcp"})
	admin := "Bearer " + p.token("ec1", claims{"scope": "mcp zoo:admin"})
	const call = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ZooService_DeleteAnimal","arguments":{}}}`
	cases := []struct {
		name, authz, tool string
		status            int
	}{
		{"other tool", user, "ZooService_GetAnimal", 200},
		{"scoped tool without scope", user, "ZooService_DeleteAnimal", 403},
		{"scoped tool with scope", admin, "ZooService_DeleteAnimal", 200},
		{"no tool", user, "", 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := httptest.NewRequest("POST", "http://example.com/mcp", strings.NewReader(call))
			r.Header.Set("Authorization", c.authz)
			r.Header.Set("X-Tool", c.tool)
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			if w.Code != c.status {
				t.Fatalf("status %d, want %d (%s)", w.Code, c.status, w.Body)
			}
			if c.status == 200 && w.Body.String() != call {
				t.Errorf("body not passed on intact: %q", w.Body)
			}
			if c.status == 403 {
				want := `Bearer error="insufficient_scope", error_description="the token lacks a scope this tool requires", scope="mcp zoo:admin", ` + metadataURL
				if got := w.Header().Get("WWW-Authenticate"); got != want {
					t.Errorf("WWW-Authenticate\n got %s\nwant %s", got, want)
				}
			}
		})
	}
	// Without a principal (a request that bypassed the middleware) every
	// call is refused.
	err := a.Authorize(context.Background(), nil)
	var ref *auth.Refusal
	if !errors.As(err, &ref) || ref.Status != 401 || ref.Code != "invalid_token" {
		t.Errorf("no principal: %v, want a 401 invalid_token refusal", err)
	}
}

// TestAuthorizeExpiry: a principal whose token has expired since it was
// authenticated (a long-lived connection) is refused at the next call,
// with the same challenge a new request with that token would get. Its
// TokenExpiry is the token's exp, without the leeway of Expiry.
func TestAuthorizeExpiry(t *testing.T) {
	p := newIDP(t)
	a := startOAuth(t, p, func(c *auth.OAuthConfig) { c.Leeway = time.Millisecond })
	exp := time.Now().Add(1500 * time.Millisecond).Truncate(time.Second).Add(time.Second)
	tok := p.token("ec1", claims{"scope": "mcp", "exp": exp.Unix()})
	principal, ctx := admit(a, "http://example.com/ws", tok)
	if principal == nil {
		t.Fatal("token refused at the door")
	}
	if !principal.Expiry.Equal(exp.Add(time.Millisecond)) || principal.Subject != "alice" || principal.Identity() != "sub:alice" || len(principal.TokenID) != 16 {
		t.Errorf("principal %+v, identity %q: want expiry %v", principal, principal.Identity(), exp.Add(time.Millisecond))
	}
	// The token's own expiry, without the leeway: what calls end at, and
	// what a kept exchanged token never outlives.
	if !principal.TokenExpiry.Equal(exp) {
		t.Errorf("TokenExpiry = %v, want the token's exp %v (Expiry adds the leeway)", principal.TokenExpiry, exp)
	}
	if err := a.Authorize(ctx, nil); err != nil {
		t.Fatalf("before expiry: %v", err)
	}
	testkit.WaitFor(t, "the token to expire", func() bool { return principal.Expired(time.Now()) })
	err := a.Authorize(ctx, nil)
	var ref *auth.Refusal
	if !errors.As(err, &ref) || ref.Status != 401 || !strings.Contains(ref.Challenge, `error="invalid_token", error_description="the token has expired"`) {
		t.Errorf("after expiry: %v, want a 401 invalid_token refusal", err)
	}
}

// TestOAuthIdentity: sessions are bound to Principal.Identity. It is the
// token's sub, so a refreshed token (another token, the same sub) keeps
// its sessions; a token without sub is an identity of its own.
func TestOAuthIdentity(t *testing.T) {
	p := newIDP(t)
	a := startOAuth(t, p, nil)
	identity := func(tok string) string {
		t.Helper()
		principal, _ := admit(a, "http://example.com/mcp", tok)
		if principal == nil {
			t.Fatal("token refused at the door")
		}
		return principal.Identity()
	}
	first, refreshed := p.token("ec1", claims{"scope": "mcp", "jti": "1"}), p.token("ec1", claims{"scope": "mcp", "jti": "2"})
	if first == refreshed || identity(first) != "sub:alice" || identity(refreshed) != "sub:alice" {
		t.Errorf("two tokens of sub alice: identities %q and %q, want sub:alice for both", identity(first), identity(refreshed))
	}
	noSub := func(jti string) string {
		c := p.claims(claims{"scope": "mcp", "jti": jti})
		delete(c, "sub")
		return p.sign("ec1", jose.ES256, c, nil)
	}
	one, other := identity(noSub("1")), identity(noSub("2"))
	if !strings.HasPrefix(one, "token:") || !strings.HasPrefix(other, "token:") || one == other {
		t.Errorf("tokens without sub: identities %q and %q, want one of its own per token", one, other)
	}
}

// TestOAuthJWKSTransport: the JWKS is fetched over https, or plain http
// to loopback only, and a redirect may not change the scheme or host.
func TestOAuthJWKSTransport(t *testing.T) {
	p := newIDP(t)
	// 127.0.0.1 and localhost are the same machine but not the same host:
	// the redirect is refused although both are loopback.
	otherHost := httptest.NewServer(http.RedirectHandler(strings.Replace(p.jwksURL(), "127.0.0.1", "localhost", 1), http.StatusFound))
	t.Cleanup(otherHost.Close)
	fetches := p.fetches.Load()
	_, err := auth.New(context.Background(), auth.Config{OAuth: &auth.OAuthConfig{JWKSURL: otherHost.URL + "/jwks", Issuer: issuer, Audience: "a"}})
	if err == nil || !strings.Contains(err.Error(), "changes the scheme or host") {
		t.Errorf("redirect to another host: %v", err)
	}
	if p.fetches.Load() != fetches {
		t.Error("the redirect to another host was followed")
	}
	// A redirect on the same host is an ordinary move and is followed.
	sameHost := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/jwks.json" {
			http.Redirect(w, r, "/jwks.json", http.StatusFound)
			return
		}
		p.srv.Config.Handler.ServeHTTP(w, r)
	}))
	t.Cleanup(sameHost.Close)
	a, err := auth.New(context.Background(), auth.Config{OAuth: &auth.OAuthConfig{JWKSURL: sameHost.URL + "/old", Issuer: issuer, Audience: "a"}})
	if err != nil {
		t.Errorf("redirect on the same host: %v", err)
	} else {
		a.Close()
	}
	// https to http on the same host: a downgrade.
	tlsSrv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+r.Host+"/jwks.json", http.StatusFound)
	}))
	t.Cleanup(tlsSrv.Close)
	_, err = auth.New(context.Background(), auth.Config{OAuth: &auth.OAuthConfig{JWKSURL: tlsSrv.URL + "/jwks", Issuer: issuer, Audience: "a", HTTPClient: tlsSrv.Client()}})
	if err == nil || !strings.Contains(err.Error(), "changes the scheme or host") {
		t.Errorf("redirect from https to http: %v", err)
	}
	// Plain http to a host that is not loopback is refused before any
	// fetch.
	_, err = auth.New(context.Background(), auth.Config{OAuth: &auth.OAuthConfig{JWKSURL: "http://as.example.com/jwks", Issuer: issuer, Audience: "a"}})
	if err == nil || !strings.Contains(err.Error(), "must be fetched over https") {
		t.Errorf("plain http off loopback: %v", err)
	}
}

// TestOAuthForwardClaims: claims become headers, and a client cannot forge
// them by sending the headers itself.
func TestOAuthForwardClaims(t *testing.T) {
	p := newIDP(t)
	var got http.Header
	h := startOAuth(t, p, func(c *auth.OAuthConfig) {
		c.ForwardClaims = []auth.ClaimHeader{{Claim: "sub", Header: "X-User-Id"}, {Claim: "groups", Header: "X-User-Groups"}, {Claim: "tenant", Header: "X-Tenant"}}
	}).Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = r.Header }))
	r := httptest.NewRequest("POST", "http://example.com/mcp", strings.NewReader(`{}`))
	r.Header.Set("Authorization", "Bearer "+p.token("ec1", claims{"scope": "mcp", "groups": []string{"keepers", "vets"}}))
	r.Header.Set("X-User-Id", "root")
	r.Header.Set("X-Tenant", "forged")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if v := got.Values("X-User-Id"); len(v) != 1 || v[0] != "alice" {
		t.Errorf("X-User-Id = %q, want [alice]", v)
	}
	if v := got.Values("X-User-Groups"); strings.Join(v, ",") != "keepers,vets" {
		t.Errorf("X-User-Groups = %q", v)
	}
	if v := got.Values("X-Tenant"); len(v) != 0 {
		t.Errorf("X-Tenant (claim absent) = %q, want the client's value removed", v)
	}
	if r.Header.Get("X-User-Id") != "root" {
		t.Error("the middleware modified the caller's request")
	}
}

// TestOAuthKeyRotation: a token signed with a key published after start is
// accepted at once, through a refresh forced by its unknown kid.
func TestOAuthKeyRotation(t *testing.T) {
	p := newIDP(t)
	log, logs := testLogger()
	a, err := auth.New(context.Background(), auth.Config{Logger: log, OAuth: &auth.OAuthConfig{
		JWKSURL: p.jwksURL(), Issuer: issuer, Resource: resource, RequiredScopes: []string{"mcp"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	h := a.Wrap(echo)
	// What the key source decided, from its log and the IdP's fetch
	// count (the background refresh is an hour away).
	decisions := func(what string) int { return strings.Count(logs.String(), what) }
	const fetched, skipped = "fetching the JWKS again", "not refetching it"

	before := p.fetches.Load()
	p.addEC("ec2", true)
	if w := do(h, "POST", "Bearer "+p.token("ec2", claims{"scope": "mcp"}), "{}"); w.Code != 200 {
		t.Fatalf("token with the rotated-in key: %d %s", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	if p.fetches.Load() != before+1 || decisions(fetched) != 1 {
		t.Errorf("no JWKS refresh for the rotated-in key: %d fetches, log:\n%s", p.fetches.Load()-before, logs)
	}
	// Forced refreshes are rate-limited: unknown kids cannot make the
	// gateway hammer the authorization server.
	p.addEC("ec3", false)
	for range 5 {
		if w := do(h, "POST", "Bearer "+p.token("ec3", claims{"scope": "mcp"}), "{}"); w.Code != 401 {
			t.Errorf("token with a key the JWKS does not publish: %d, want 401", w.Code)
		}
	}
	if n, m := decisions(fetched), decisions(skipped); n != 1 || m != 5 || p.fetches.Load() != before+1 {
		t.Errorf("%d forced refreshes and %d skipped for unknown kids within the minimum interval, want 1 and 5; log:\n%s", n, m, logs)
	}
}

// TestOAuthKeyWithdrawn: the JWKS is fetched again every JWKSMaxRefresh
// even when its response says to cache it for a day, so a key the
// authorization server withdraws stops being trusted without any token
// asking for a refresh. (The default is an hour; the test shortens it.)
func TestOAuthKeyWithdrawn(t *testing.T) {
	p := newIDP(t)
	p.cacheControl = "max-age=86400"
	p.addEC("ec2", true)
	a := startOAuth(t, p, func(c *auth.OAuthConfig) { c.JWKSMinRefresh, c.JWKSMaxRefresh = time.Second, time.Second })
	h := a.Wrap(echo)
	if w := do(h, "POST", "Bearer "+p.token("ec2", claims{"scope": "mcp"}), "{}"); w.Code != 200 {
		t.Fatalf("token with a published key: %d %s", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	p.withdraw("ec2")
	// Two fetches after the withdrawal: the first has then completed (the
	// cache starts a resource's next fetch only when its last is done).
	after := p.fetches.Load()
	testkit.WaitFor(t, "two periodic JWKS fetches", func() bool { return p.fetches.Load() >= after+2 })
	// Only the periodic fetches can have dropped the key: until they did,
	// the cached set held it, and a token naming a known key asks for no
	// refresh.
	if w := do(h, "POST", "Bearer "+p.token("ec2", claims{"scope": "mcp"}), "{}"); w.Code != 401 {
		t.Errorf("token with the withdrawn key: %d, want 401", w.Code)
	}
	if w := do(h, "POST", "Bearer "+p.token("ec1", claims{"scope": "mcp"}), "{}"); w.Code != 200 {
		t.Errorf("token with a key still published: %d, want 200", w.Code)
	}
	if _, err := auth.New(context.Background(), auth.Config{OAuth: &auth.OAuthConfig{
		JWKSURL: p.jwksURL(), Issuer: issuer, Resource: resource, JWKSMinRefresh: time.Hour, JWKSMaxRefresh: time.Minute,
	}}); err == nil || !strings.Contains(err.Error(), "JWKSMaxRefresh") {
		t.Errorf("JWKSMaxRefresh below JWKSMinRefresh: %v, want an error naming it", err)
	}
}

func TestOAuthMetadata(t *testing.T) {
	p := newIDP(t)
	a := startOAuth(t, p, nil)
	derived := startOAuth(t, p, func(c *auth.OAuthConfig) { c.Resource, c.Audience = "", resource })
	type doc struct {
		Resource               string   `json:"resource"`
		AuthorizationServers   []string `json:"authorization_servers"`
		ScopesSupported        []string `json:"scopes_supported"`
		BearerMethodsSupported []string `json:"bearer_methods_supported"`
	}
	get := func(h http.Handler, url, cacheControl string) doc {
		t.Helper()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", url, nil))
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s: %d %s", url, w.Code, w.Header().Get("Content-Type"))
		}
		// A document derived from the request's Host must never be served
		// from a shared cache to another host.
		if got := w.Header().Get("Cache-Control"); got != cacheControl {
			t.Errorf("GET %s: Cache-Control %q, want %q", url, got, cacheControl)
		}
		var d doc
		if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := get(a.MetadataHandler(), "http://mcp.example.com"+auth.MetadataPath+"/mcp", "public, max-age=3600")
	if d.Resource != resource || len(d.AuthorizationServers) != 1 || d.AuthorizationServers[0] != issuer ||
		strings.Join(d.ScopesSupported, " ") != "mcp zoo:admin" || strings.Join(d.BearerMethodsSupported, " ") != "header" {
		t.Errorf("metadata: %+v", d)
	}
	// The rules' scopes, method patterns' too, in one order whatever the
	// map's: required first, then by rule.
	rules := startOAuth(t, p, func(c *auth.OAuthConfig) {
		c.ToolScopes = map[string][]string{"zoo.v1.ZooService/*": {"zoo:write", "zoo:admin"}, "ZooService_DeleteAnimal": {"zoo:admin"}, "zoo.v1.*": {"zoo:read", "mcp"}}
	})
	for range 5 {
		if d := get(rules.MetadataHandler(), "http://mcp.example.com"+auth.MetadataPath, "public, max-age=3600"); strings.Join(d.ScopesSupported, " ") != "mcp zoo:admin zoo:read zoo:write" {
			t.Fatalf("scopes_supported with method rules: %v, want mcp zoo:admin zoo:read zoo:write", d.ScopesSupported)
		}
	}
	if d := get(derived.MetadataHandler(), "http://gw.internal:8080"+auth.MetadataPath, "no-store"); d.Resource != "http://gw.internal:8080/mcp" {
		t.Errorf("derived resource %q", d.Resource)
	}
	for _, path := range []string{auth.MetadataPath + "/other", auth.MetadataPath + "/mcp/x"} {
		w := httptest.NewRecorder()
		a.MetadataHandler().ServeHTTP(w, httptest.NewRequest("GET", "http://mcp.example.com"+path, nil))
		if w.Code != 404 {
			t.Errorf("GET %s: %d, want 404 (not this resource)", path, w.Code)
		}
	}
	w := do(derived.Wrap(echo), "POST", "", "")
	if got := w.Header().Get("WWW-Authenticate"); !strings.Contains(got, `resource_metadata="http://example.com/.well-known/oauth-protected-resource/mcp"`) {
		t.Errorf("derived resource_metadata: %s", got)
	}
}

func TestOAuthStartErrors(t *testing.T) {
	p := newIDP(t)
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	cases := []struct {
		name string
		cfg  auth.OAuthConfig
		want string
	}{
		{"no issuer", auth.OAuthConfig{JWKSURL: p.jwksURL(), Audience: "a"}, "OAuthConfig.Issuer"},
		{"no audience", auth.OAuthConfig{JWKSURL: p.jwksURL(), Issuer: issuer}, "OAuthConfig.Audience"},
		{"bad url", auth.OAuthConfig{JWKSURL: "ftp://x", Issuer: issuer, Audience: "a"}, "OAuthConfig.JWKSURL"},
		{"unreachable", auth.OAuthConfig{JWKSURL: dead.URL, Issuer: issuer, Audience: "a"}, "fetching the JWKS"},
		{"bad scope", auth.OAuthConfig{JWKSURL: p.jwksURL(), Issuer: issuer, Audience: "a", RequiredScopes: []string{`a"b`}}, "not a scope token"},
		// 5 nanoseconds, meant as minutes: a JWKS fetch per forged token.
		{"JWKSMinRefresh in nanoseconds", auth.OAuthConfig{JWKSURL: p.jwksURL(), Issuer: issuer, Audience: "a", JWKSMinRefresh: 5}, "OAuthConfig.JWKSMinRefresh"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			a, err := auth.New(ctx, auth.Config{OAuth: &c.cfg})
			if err == nil {
				a.Close()
				t.Fatal("want an error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not mention %q", err, c.want)
			}
		})
	}
}

// TestOAuthUnsafeJWKSKeys: a key the JWKS publishes but that must not
// verify a token is left out, with a warning, and the set's other keys
// still work: a private key (RFC 8414 section 2: anyone who fetched the
// set can sign with it), an RSA key under RFC 7518's 2048 bits, and a
// key whose key_ops exclude "verify" (RFC 7517 section 4.3; go-jose
// does not read key_ops).
func TestOAuthUnsafeJWKSKeys(t *testing.T) {
	p := newIDP(t)
	p.addEC("leaked", false)
	p.addEC("ecdh", false)
	small, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	p.add(small, "rsa1024", jose.RS256, false, true)

	var keys []json.RawMessage
	raw := func(k jose.JSONWebKey, extra map[string]any) {
		b, err := k.MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]any{}
		_ = json.Unmarshal(b, &m)
		for n, v := range extra {
			m[n] = v
		}
		b, _ = json.Marshal(m)
		keys = append(keys, b)
	}
	p.mu.Lock()
	ec1, leaked, rsa1024, ecdh := p.keys["ec1"], p.keys["leaked"], p.keys["rsa1024"], p.keys["ecdh"]
	p.mu.Unlock()
	raw(ec1.Public(), nil)
	raw(leaked, nil) // the private key itself
	raw(rsa1024.Public(), nil)
	raw(ecdh.Public(), map[string]any{"key_ops": []string{"deriveKey"}})
	body, _ := json.Marshal(map[string]any{"keys": keys})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(body) }))
	t.Cleanup(srv.Close)

	a, logs := startOAuthLogged(t, p, func(c *auth.OAuthConfig) { c.JWKSURL = srv.URL })
	h := a.Wrap(echo)
	if w := do(h, "POST", "Bearer "+p.token("ec1", claims{"scope": "mcp"}), "{}"); w.Code != 200 {
		t.Fatalf("token with the set's usable key: %d %s", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	for _, kid := range []string{"leaked", "rsa1024", "ecdh"} {
		if w := do(h, "POST", "Bearer "+p.token(kid, claims{"scope": "mcp"}), "{}"); w.Code != 401 {
			t.Errorf("token signed with the JWKS key %s: %d, want 401", kid, w.Code)
		}
	}
	if !strings.Contains(logs.String(), "ignored=3") {
		t.Errorf("no warning that 3 keys were ignored; log:\n%s", logs)
	}
}

// TestOAuthTokensNotTrusted: what a forger controls in a token's header
// never chooses the key (an embedded jwk, an x5c certificate, a jku or
// x5u URL, which is not fetched), an algorithm is held to its key's
// curve and declared alg, and a claims set with a duplicate name is
// refused whole, so no two readings of it can differ.
func TestOAuthTokensNotTrusted(t *testing.T) {
	p := newIDP(t)
	forger := p.addEC("forger", false)
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	p.add(p384, "p384", jose.ES384, true, false)
	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	p.add(rsaKey, "rsa-pss", jose.PS256, true, true)
	var jkuFetches atomic.Int32
	forgerSet, _ := json.Marshal(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{forger.Public()}})
	jku := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		jkuFetches.Add(1)
		_, _ = w.Write(forgerSet)
	}))
	t.Cleanup(jku.Close)
	h := startOAuth(t, p, nil).Wrap(echo)

	valid, _ := json.Marshal(p.claims(claims{"scope": "mcp"}))
	// signed signs payload with key under alg, with the protected
	// headers hdr, and the forger's public key as "jwk" if embed.
	signed := func(key any, alg jose.SignatureAlgorithm, payload []byte, hdr map[string]any, embed bool) string {
		t.Helper()
		opts := &jose.SignerOptions{EmbedJWK: embed}
		for k, v := range hdr {
			opts = opts.WithHeader(jose.HeaderKey(k), v)
		}
		s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, opts)
		if err != nil {
			t.Fatal(err)
		}
		jws, err := s.Sign(payload)
		if err != nil {
			t.Fatal(err)
		}
		out, err := jws.CompactSerialize()
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: issuer},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour)}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, forger.Public().Key, forger.Key)
	if err != nil {
		t.Fatal(err)
	}
	x5c := []string{base64.StdEncoding.EncodeToString(der)}
	// ES256 made with the P-384 key: its SHA-256 signature, r and s at
	// the key's size.
	es256P384 := func() string {
		input := b64(`{"alg":"ES256","kid":"p384"}`) + "." + b64(string(valid))
		d := sha256.Sum256([]byte(input))
		r, s, err := ecdsa.Sign(rand.Reader, p384, d[:])
		if err != nil {
			t.Fatal(err)
		}
		sig := make([]byte, 96)
		r.FillBytes(sig[:48])
		s.FillBytes(sig[48:])
		return input + "." + base64.RawURLEncoding.EncodeToString(sig)
	}()
	exp := jsonTime(time.Now().Add(time.Hour))
	withClaims := func(rest string) []byte {
		return []byte(`{"iss":"` + issuer + `","sub":"alice",` + rest + `}`)
	}
	ec1 := p.keys["ec1"].Key

	cases := []struct {
		name   string
		token  string
		status int
	}{
		{"aud as a string", signed(ec1, jose.ES256, withClaims(`"aud":"`+resource+`","scope":"mcp","exp":`+exp), map[string]any{"kid": "ec1"}, false), 200},
		{"jwk with the forger's key, its kid", signed(forger.Key, jose.ES256, valid, map[string]any{"kid": "forger"}, true), 401},
		{"jwk with the forger's key, a published kid", signed(forger.Key, jose.ES256, valid, map[string]any{"kid": "ec1"}, true), 401},
		{"jwk with the forger's key, no kid", signed(forger.Key, jose.ES256, valid, nil, true), 401},
		{"x5c with the forger's certificate", signed(forger.Key, jose.ES256, valid, map[string]any{"kid": "ec1", "x5c": x5c}, false), 401},
		{"jku to the forger's JWKS", signed(forger.Key, jose.ES256, valid, map[string]any{"kid": "forger", "jku": jku.URL}, false), 401},
		{"x5u to the forger's certificate", signed(forger.Key, jose.ES256, valid, map[string]any{"kid": "forger", "x5u": jku.URL}, false), 401},
		{"ES256 with a P-384 key", es256P384, 401},
		{"RS256 with a key declared PS256", signed(rsaKey, jose.RS256, valid, map[string]any{"kid": "rsa-pss"}, false), 401},
		{"aud twice, the other first", signed(ec1, jose.ES256, withClaims(`"aud":"https://other.example.com","aud":"`+resource+`","scope":"mcp","exp":`+exp), map[string]any{"kid": "ec1"}, false), 401},
		{"aud twice, ours first", signed(ec1, jose.ES256, withClaims(`"aud":"`+resource+`","aud":"https://other.example.com","scope":"mcp","exp":`+exp), map[string]any{"kid": "ec1"}, false), 401},
		{"exp twice", signed(ec1, jose.ES256, withClaims(`"aud":"`+resource+`","scope":"mcp","exp":1,"exp":`+exp), map[string]any{"kid": "ec1"}, false), 401},
		{"scope twice", signed(ec1, jose.ES256, withClaims(`"aud":"`+resource+`","scope":"read","scope":"mcp","exp":`+exp), map[string]any{"kid": "ec1"}, false), 401},
		{"scope twice, one escaped", signed(ec1, jose.ES256, withClaims(`"aud":"`+resource+`","scope":"read","\u0073cope":"mcp","exp":`+exp), map[string]any{"kid": "ec1"}, false), 401},
		{"exp as a string", signed(ec1, jose.ES256, withClaims(`"aud":"`+resource+`","scope":"mcp","exp":"`+exp+`"`), map[string]any{"kid": "ec1"}, false), 401},
		{"exp past int64", signed(ec1, jose.ES256, withClaims(`"aud":"`+resource+`","scope":"mcp","exp":1e300`), map[string]any{"kid": "ec1"}, false), 401},
		{"exp null", signed(ec1, jose.ES256, withClaims(`"aud":"`+resource+`","scope":"mcp","exp":null`), map[string]any{"kid": "ec1"}, false), 401},
		{"nbf past int64", signed(ec1, jose.ES256, withClaims(`"aud":"`+resource+`","scope":"mcp","exp":`+exp+`,"nbf":9.3e18`), map[string]any{"kid": "ec1"}, false), 401},
		{"a second claims set after the first", signed(ec1, jose.ES256, append(withClaims(`"aud":"`+resource+`","scope":"mcp","exp":`+exp), `{}`...), map[string]any{"kid": "ec1"}, false), 401},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if w := do(h, "POST", "Bearer "+c.token, "{}"); w.Code != c.status {
				t.Errorf("status %d, want %d; WWW-Authenticate: %s", w.Code, c.status, w.Header().Get("WWW-Authenticate"))
			}
		})
	}
	if n := jkuFetches.Load(); n != 0 {
		t.Errorf("the forger's jku/x5u URL was fetched %d times", n)
	}
}
