package auth_test

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/internal/testkit"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func testLogger() (*slog.Logger, *testkit.SyncBuffer) {
	buf := &testkit.SyncBuffer{}
	return slog.New(slog.NewTextHandler(buf, &slog.HandlerOptions{Level: slog.LevelDebug})), buf
}

// echo is the protected handler: it answers 200 with the body it received,
// so tests see that the middleware passed the request on intact.
var echo = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if p, ok := auth.FromContext(r.Context()); ok {
		w.Header().Set("X-Subject", p.Subject)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
})

func do(h http.Handler, method, authz, body string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(method, "http://example.com/mcp", strings.NewReader(body))
	if authz != "" {
		r.Header.Set("Authorization", authz)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	// Write then rename, as config management tools do, so the poller
	// never reads a half-written file.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func startBearer(t testing.TB, content string) (*auth.Authenticator, string, *testkit.SyncBuffer) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "tokens")
	writeFile(t, path, content)
	log, buf := testLogger()
	a, err := auth.New(context.Background(), auth.Config{BearerTokensFile: path, PollInterval: 10 * time.Millisecond, Logger: log})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	return a, path, buf
}

func TestBearer(t *testing.T) {
	a, _, _ := startBearer(t, "# team tokens\n\n  alpha-token-1  \n#beta-disabled\nb\n\ngamma-token-3333333333333333333333333\n")
	h := a.Wrap(echo)
	cases := []struct {
		name, authz string
		status      int
		challenge   string
	}{
		{"missing", "", 401, "Bearer"},
		{"not bearer", "Basic YWxhZGRpbjpvcGVuc2VzYW1l", 401, "Bearer"},
		{"empty bearer", "Bearer ", 401, "Bearer"},
		{"bad", "Bearer nope", 401, `Bearer error="invalid_token", error_description="the token is not valid"`},
		{"comment is no token", "Bearer #beta-disabled", 401, `Bearer error="invalid_token"`},
		{"prefix of a token", "Bearer alpha-token-", 401, `Bearer error="invalid_token"`},
		{"longer than a token", "Bearer alpha-token-11", 401, `Bearer error="invalid_token"`},
		{"good", "Bearer alpha-token-1", 200, ""},
		{"good, scheme any case", "bearer b", 200, ""},
		{"good, long", "BEARER gamma-token-3333333333333333333333333", 200, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := do(h, http.MethodPost, c.authz, `{"x":1}`)
			if w.Code != c.status {
				t.Fatalf("status %d, want %d (%s)", w.Code, c.status, w.Body)
			}
			got := w.Header().Get("WWW-Authenticate")
			if c.challenge == "" && got != "" || !strings.HasPrefix(got, c.challenge) {
				t.Errorf("WWW-Authenticate %q, want prefix %q", got, c.challenge)
			}
			if c.challenge == "Bearer" && got != "Bearer" {
				t.Errorf("no-token challenge %q, want exactly Bearer (no error, no resource_metadata in bearer mode)", got)
			}
			if c.status == 200 && w.Body.String() != `{"x":1}` {
				t.Errorf("body not passed on: %q", w.Body)
			}
		})
	}
	if w := do(h, http.MethodOptions, "", ""); w.Code != 200 {
		t.Errorf("OPTIONS (CORS preflight) should pass, got %d", w.Code)
	}
	if a.MetadataHandler() != nil {
		t.Error("bearer mode serves no OAuth metadata")
	}
}

func TestBearerReload(t *testing.T) {
	a, path, logs := startBearer(t, "old-secret-token\n")
	h := a.Wrap(echo)
	if w := do(h, "POST", "Bearer old-secret-token", ""); w.Code != 200 {
		t.Fatalf("old token refused: %d", w.Code)
	}

	writeFile(t, path, "# rotated\nnew-secret-token\n")
	testkit.WaitFor(t, "the new token", func() bool { return do(h, "POST", "Bearer new-secret-token", "").Code == 200 })
	if w := do(h, "POST", "Bearer old-secret-token", ""); w.Code != 401 {
		t.Errorf("old token still accepted after reload: %d", w.Code)
	}

	// A broken file keeps the tokens in force and says so.
	writeFile(t, path, "new-secret-token\nnot a token\n")
	testkit.WaitFor(t, "the reload error log", func() bool { return strings.Contains(logs.String(), "keeping the current tokens") })
	if w := do(h, "POST", "Bearer new-secret-token", ""); w.Code != 200 {
		t.Errorf("a bad reload dropped the tokens: %d", w.Code)
	}

	// So does a deleted file.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	testkit.WaitFor(t, "the stat error log", func() bool { return strings.Contains(logs.String(), "cannot stat") })
	if w := do(h, "POST", "Bearer new-secret-token", ""); w.Code != 200 {
		t.Errorf("a deleted file dropped the tokens: %d", w.Code)
	}

	// An emptied file locks everyone out, loudly.
	writeFile(t, path, "# nobody\n")
	testkit.WaitFor(t, "lock-out", func() bool { return do(h, "POST", "Bearer new-secret-token", "").Code == 401 })
	if !strings.Contains(logs.String(), "has no tokens") {
		t.Errorf("no warning about the empty file:\n%s", logs)
	}
	// Through loads, failed reloads and refusals, no token is logged.
	if strings.Contains(logs.String(), "secret-token") {
		t.Errorf("a token reached the log:\n%s", logs)
	}
}

// TestBearerRevocation: each static token is its own principal; a token
// kept across a reload keeps its principal, and one removed from the file
// has its Revoked channel closed (long-lived connections watch it) and its
// next call refused by Authorize.
// admit passes a GET of url bearing tok through a's door and returns the
// principal the handler behind it saw (nil when the door refused) and the
// request's context there.
func admit(a *auth.Authenticator, url, tok string) (*auth.Principal, context.Context) {
	var p *auth.Principal
	var ctx context.Context
	r := httptest.NewRequest("GET", url, nil)
	r.Header.Set("Authorization", "Bearer "+tok)
	a.Wrap(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		p, _ = auth.FromContext(r.Context())
		ctx = r.Context()
	})).ServeHTTP(httptest.NewRecorder(), r)
	return p, ctx
}

func TestBearerRevocation(t *testing.T) {
	a, path, _ := startBearer(t, "alpha\nbeta\n")
	principal := func(tok string) (*auth.Principal, context.Context) {
		t.Helper()
		p, ctx := admit(a, "http://localhost/ws", tok)
		if p == nil {
			t.Fatalf("token %q refused", tok)
		}
		return p, ctx
	}
	alpha, alphaCtx := principal("alpha")
	beta, _ := principal("beta")
	if alpha.Identity() == beta.Identity() || !strings.HasPrefix(alpha.Identity(), "token:") || !alpha.Expiry.IsZero() {
		t.Errorf("identities %q and %q: want one per token, no expiry", alpha.Identity(), beta.Identity())
	}
	if again, _ := principal("alpha"); again != alpha {
		t.Error("the same token got a new principal")
	}
	// A static token grants no scopes: a call that needs one is refused.
	var ref *auth.Refusal
	if err := a.Authorize(alphaCtx, []string{"zoo:admin"}); !errors.As(err, &ref) || ref.Status != 403 || ref.Code != "insufficient_scope" {
		t.Errorf("a static token's call that needs a scope: %v, want a 403 insufficient_scope refusal", err)
	}
	if a.ToolScopes() != nil {
		t.Errorf("bearer mode has tool scope rules: %v", a.ToolScopes())
	}
	writeFile(t, path, "beta\ngamma\n")
	select {
	case <-alpha.Revoked():
	case <-time.After(10 * time.Second):
		t.Fatal("alpha, removed from the file, was not revoked")
	}
	if err := a.Authorize(alphaCtx, nil); err == nil || !strings.Contains(err.Error(), "revoked") {
		t.Errorf("a call with the revoked token: %v", err)
	}
	select {
	case <-beta.Revoked():
		t.Error("beta, still in the file, was revoked")
	default:
	}
	if again, _ := principal("beta"); again != beta {
		t.Error("a token kept across the reload got a new principal (its sessions would be lost)")
	}
}

func TestBearerEmptyFileAtStart(t *testing.T) {
	a, _, logs := startBearer(t, "\n# nothing here\n")
	if w := do(a.Wrap(echo), "POST", "Bearer anything", ""); w.Code != 401 {
		t.Errorf("status %d, want 401", w.Code)
	}
	if !strings.Contains(logs.String(), "every request to the MCP endpoints gets 401") {
		t.Errorf("no start-up warning:\n%s", logs)
	}
}

func TestBearerStartErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := auth.New(context.Background(), auth.Config{BearerTokensFile: filepath.Join(dir, "absent")}); err == nil || !strings.Contains(err.Error(), "bearer tokens file") {
		t.Errorf("missing file: %v", err)
	}
	bad := filepath.Join(dir, "bad")
	writeFile(t, bad, "a b\n")
	if _, err := auth.New(context.Background(), auth.Config{BearerTokensFile: bad}); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("token with a space: %v", err)
	}
	if _, err := auth.New(context.Background(), auth.Config{}); err == nil {
		t.Error("no mode: want an error")
	}
}

// TestBearerManyTokens checks the constant-time path against a long list:
// every token matches wherever it sits, and near-misses do not.
func TestBearerManyTokens(t *testing.T) {
	var sb strings.Builder
	for i := range 500 {
		sb.WriteString(strings.Repeat("k", i+1) + "\n")
	}
	a, _, _ := startBearer(t, sb.String())
	h := a.Wrap(echo)
	for _, n := range []int{1, 250, 500} {
		if w := do(h, "POST", "Bearer "+strings.Repeat("k", n), ""); w.Code != 200 {
			t.Errorf("token %d refused", n)
		}
	}
	for _, tok := range []string{strings.Repeat("k", 501), strings.Repeat("k", 250) + "x", "K"} {
		if w := do(h, "POST", "Bearer "+tok, ""); w.Code != 401 {
			t.Errorf("%q accepted", tok)
		}
	}
}
