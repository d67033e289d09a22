package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lestrrat-go/jwx/v3/jwa"
	"github.com/lestrrat-go/jwx/v3/jwk"
	"github.com/lestrrat-go/jwx/v3/jwt"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
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
	set     jwk.Set
	keys    map[string]jwk.Key // kid -> private key
	fetches atomic.Int32
	srv     *httptest.Server
}

func newIDP(t *testing.T) *idp {
	t.Helper()
	p := &idp{t: t, set: jwk.NewSet(), keys: map[string]jwk.Key{}}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.fetches.Add(1)
		p.mu.Lock()
		defer p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(p.set)
	}))
	t.Cleanup(p.srv.Close)
	p.addEC("ec1", true)
	return p
}

func (p *idp) jwksURL() string { return p.srv.URL + "/jwks.json" }

// addEC adds a P-256 key; publish=false keeps it out of the JWKS, for
// forged signatures.
func (p *idp) addEC(kid string, publish bool) jwk.Key {
	p.t.Helper()
	raw, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		p.t.Fatal(err)
	}
	return p.add(raw, kid, jwa.ES256(), publish, true)
}

func (p *idp) add(raw any, kid string, alg jwa.SignatureAlgorithm, publish, declareAlg bool) jwk.Key {
	p.t.Helper()
	priv, err := jwk.Import(raw)
	if err != nil {
		p.t.Fatal(err)
	}
	_ = priv.Set(jwk.KeyIDKey, kid)
	_ = priv.Set(jwk.AlgorithmKey, alg)
	pub, err := jwk.PublicKeyOf(priv)
	if err != nil {
		p.t.Fatal(err)
	}
	if !declareAlg {
		_ = pub.Remove(jwk.AlgorithmKey)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.keys[kid] = priv
	if publish {
		_ = p.set.AddKey(pub)
	}
	return priv
}

type claims map[string]any

func (p *idp) token(kid string, c claims) string {
	p.t.Helper()
	b := jwt.NewBuilder().Issuer(issuer).Audience([]string{resource}).Subject("alice").
		IssuedAt(time.Now()).Expiration(time.Now().Add(time.Hour))
	for k, v := range c {
		b = b.Claim(k, v)
	}
	tok, err := b.Build()
	if err != nil {
		p.t.Fatal(err)
	}
	p.mu.Lock()
	key := p.keys[kid]
	p.mu.Unlock()
	alg, _ := key.Algorithm()
	signed, err := jwt.Sign(tok, jwt.WithKey(alg, key))
	if err != nil {
		p.t.Fatal(err)
	}
	return string(signed)
}

func startOAuth(t *testing.T, p *idp, mod func(*auth.OAuthConfig)) *auth.Authenticator {
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
	log, _ := testLogger()
	a, err := auth.New(context.Background(), auth.Config{OAuth: cfg, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a
}

const metadataURL = `resource_metadata="https://mcp.example.com/.well-known/oauth-protected-resource/mcp"`

func b64(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }

func TestOAuthTokens(t *testing.T) {
	p := newIDP(t)
	a := startOAuth(t, p, nil)
	h := a.Wrap(echo)

	rsaKey, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	// An RSA key published without "alg", as Microsoft Entra does: usable
	// with an RSA algorithm of the token's choosing, nothing else.
	p.add(rsaKey, "rsa-noalg", jwa.RS256(), true, false)
	p.addEC("forger", false)

	now := time.Now()
	payload := `{"iss":"` + issuer + `","aud":"` + resource + `","sub":"mallory","scope":"mcp","exp":` + jsonTime(now.Add(time.Hour)) + `}`
	algNone := b64(`{"alg":"none","typ":"JWT"}`) + "." + b64(payload) + "."
	// HMAC "signed" with the public key's JSON as the secret: the classic
	// key-confusion attack.
	pubJSON, _ := json.Marshal(p.set)
	hmacKey, _ := jwk.Import(pubJSON)
	hmacTok, _ := jwt.NewBuilder().Issuer(issuer).Audience([]string{resource}).Subject("mallory").Expiration(now.Add(time.Hour)).Claim("scope", "mcp").Build()
	hmacSigned, err := jwt.Sign(hmacTok, jwt.WithKey(jwa.HS256(), hmacKey))
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
		{"leeway covers a just-expired token", p.token("ec1", claims{"scope": "mcp", "exp": now.Add(-5 * time.Second).Unix()}), 200, ""},
		{"expired", p.token("ec1", claims{"scope": "mcp", "exp": now.Add(-time.Hour).Unix()}), 401, `error_description="the token has expired"`},
		{"not yet valid", p.token("ec1", claims{"scope": "mcp", "nbf": now.Add(time.Hour).Unix()}), 401, `error_description="the token is not valid yet"`},
		{"wrong audience", p.token("ec1", claims{"scope": "mcp", "aud": []string{"https://other.example.com/mcp"}}), 401, `(aud)`},
		{"wrong issuer", p.token("ec1", claims{"scope": "mcp", "iss": "https://evil.example.com"}), 401, `(iss)`},
		{"no exp", noExp(t, p), 401, `error="invalid_token"`},
		{"unknown key", p.token("forger", claims{"scope": "mcp"}), 401, `error="invalid_token"`},
		{"tampered signature", tampered, 401, `error="invalid_token"`},
		{"alg none", algNone, 401, `error="invalid_token"`},
		{"HS256 with the public key", string(hmacSigned), 401, `algorithm is not accepted`},
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
}

func jsonTime(t time.Time) string {
	b, _ := json.Marshal(t.Unix())
	return string(b)
}

func noExp(t *testing.T, p *idp) string {
	tok, _ := jwt.NewBuilder().Issuer(issuer).Audience([]string{resource}).Claim("scope", "mcp").Build()
	p.mu.Lock()
	key := p.keys["ec1"]
	p.mu.Unlock()
	s, err := jwt.Sign(tok, jwt.WithKey(jwa.ES256(), key))
	if err != nil {
		t.Fatal(err)
	}
	return string(s)
}

// TestOAuthToolScopes: the tool of a tools/call decides extra scopes; the
// refusal is the same 403 challenge as for a global scope, and an allowed
// call reaches the handler with its body intact.
func TestOAuthToolScopes(t *testing.T) {
	p := newIDP(t)
	h := startOAuth(t, p, nil).Wrap(echo)
	user := "Bearer " + p.token("ec1", claims{"scope": "mcp"})
	admin := "Bearer " + p.token("ec1", claims{"scope": "mcp zoo:admin"})
	call := func(tool string) string {
		return `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"` + tool + `","arguments":{}}}`
	}
	cases := []struct {
		name, authz, body string
		status            int
	}{
		{"other tool", user, call("ZooService_GetAnimal"), 200},
		{"scoped tool without scope", user, call("ZooService_DeleteAnimal"), 403},
		{"scoped tool with scope", admin, call("ZooService_DeleteAnimal"), 200},
		{"tools/list needs no tool scope", user, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, 200},
		{"batch hiding a scoped call", user, "[" + call("ZooService_GetAnimal") + "," + call("ZooService_DeleteAnimal") + "]", 403},
		{"escaped method name", user, `{"jsonrpc":"2.0","id":7,"method":"tools\/call","params":{"name":"ZooService_DeleteAnimal"}}`, 403},
		{"duplicate name key, last wins", user, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ZooService_GetAnimal","name":"ZooService_DeleteAnimal"}}`, 403},
		// Whatever the MCP layer's parser makes of case variants and
		// duplicate keys, the check covers every reading.
		{"name in another case as well", user, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ZooService_DeleteAnimal","NAME":"ZooService_GetAnimal"}}`, 403},
		{"method in another case as well", user, `{"jsonrpc":"2.0","id":7,"method":"tools/call","METHOD":"ping","params":{"name":"ZooService_DeleteAnimal"}}`, 403},
		{"duplicate name key, first is scoped", user, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ZooService_DeleteAnimal","name":"ZooService_GetAnimal"}}`, 403},
		{"duplicate params", user, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ZooService_GetAnimal"},"Params":{"name":"ZooService_DeleteAnimal"}}`, 403},
		{"escaped key", user, `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"na\u006de":"ZooService_DeleteAnimal"}}`, 403},
		{"a string is not a call", user, `"tools/call"`, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := do(h, "POST", c.authz, c.body)
			if w.Code != c.status {
				t.Fatalf("status %d, want %d (%s)", w.Code, c.status, w.Body)
			}
			if c.status == 200 && w.Body.String() != c.body {
				t.Errorf("body not restored: %q", w.Body)
			}
			if c.status == 403 {
				want := `Bearer error="insufficient_scope", error_description="the token lacks a scope this tool requires", scope="mcp zoo:admin", ` + metadataURL
				if got := w.Header().Get("WWW-Authenticate"); got != want {
					t.Errorf("WWW-Authenticate\n got %s\nwant %s", got, want)
				}
			}
		})
	}
	if w := do(h, "POST", user, `{nope`); w.Code != 400 || !strings.Contains(w.Body.String(), `-32700`) {
		t.Errorf("not JSON: %d %s, want 400 and a JSON-RPC parse error", w.Code, w.Body)
	}
	// A body over the limit cannot be inspected, so it is refused rather
	// than passed on unchecked.
	small, err := auth.New(context.Background(), auth.Config{MaxBodyBytes: 64, OAuth: &auth.OAuthConfig{
		JWKSURL: p.jwksURL(), Issuer: issuer, Resource: resource, ToolScopes: map[string][]string{"x": {"y"}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer small.Close()
	if w := do(small.Wrap(echo), "POST", user, call(strings.Repeat("a", 100))); w.Code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized body: %d, want 413", w.Code)
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
	h := startOAuth(t, p, nil).Wrap(echo)
	before := p.fetches.Load()
	p.addEC("ec2", true)
	if w := do(h, "POST", "Bearer "+p.token("ec2", claims{"scope": "mcp"}), "{}"); w.Code != 200 {
		t.Fatalf("token with the rotated-in key: %d %s", w.Code, w.Header().Get("WWW-Authenticate"))
	}
	if p.fetches.Load() == before {
		t.Error("no JWKS refresh")
	}
	// Forced refreshes are rate-limited: unknown kids cannot make the
	// gateway hammer the authorization server.
	p.addEC("ec3", false)
	// The JWKS cache may still be finishing a fetch the rotation started;
	// count from when fetching has gone quiet.
	n := p.fetches.Load()
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		time.Sleep(100 * time.Millisecond)
		m := p.fetches.Load()
		if m == n {
			break
		}
		n = m
	}
	for range 5 {
		do(h, "POST", "Bearer "+p.token("ec3", claims{"scope": "mcp"}), "{}")
	}
	if p.fetches.Load() != n {
		t.Errorf("%d refreshes for unknown kids within the minimum interval", p.fetches.Load()-n)
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
	get := func(h http.Handler, url string) doc {
		t.Helper()
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest("GET", url, nil))
		if w.Code != 200 || w.Header().Get("Content-Type") != "application/json" {
			t.Fatalf("GET %s: %d %s", url, w.Code, w.Header().Get("Content-Type"))
		}
		var d doc
		if err := json.Unmarshal(w.Body.Bytes(), &d); err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := get(a.MetadataHandler(), "http://mcp.example.com"+auth.MetadataPath+"/mcp")
	if d.Resource != resource || len(d.AuthorizationServers) != 1 || d.AuthorizationServers[0] != issuer ||
		strings.Join(d.ScopesSupported, " ") != "mcp zoo:admin" || strings.Join(d.BearerMethodsSupported, " ") != "header" {
		t.Errorf("metadata: %+v", d)
	}
	if d := get(derived.MetadataHandler(), "http://gw.internal:8080"+auth.MetadataPath); d.Resource != "http://gw.internal:8080/mcp" {
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
		{"no issuer", auth.OAuthConfig{JWKSURL: p.jwksURL(), Audience: "a"}, "--oauth-issuer"},
		{"no audience", auth.OAuthConfig{JWKSURL: p.jwksURL(), Issuer: issuer}, "--oauth-audience"},
		{"bad url", auth.OAuthConfig{JWKSURL: "ftp://x", Issuer: issuer, Audience: "a"}, "--oauth-jwks-url"},
		{"unreachable", auth.OAuthConfig{JWKSURL: dead.URL, Issuer: issuer, Audience: "a"}, "fetching the JWKS"},
		{"bad scope", auth.OAuthConfig{JWKSURL: p.jwksURL(), Issuer: issuer, Audience: "a", RequiredScopes: []string{`a"b`}}, "not a scope token"},
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
