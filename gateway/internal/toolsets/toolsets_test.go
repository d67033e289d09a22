package toolsets_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/grpc-mcp-gateway/gateway/gateway/auth"
	"github.com/grpc-mcp-gateway/gateway/gateway/internal/toolsets"
	"github.com/grpc-mcp-gateway/gateway/internal/oauthtest"
	"github.com/grpc-mcp-gateway/gateway/internal/option"
)

func TestValidName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, bad string
	}{
		{name: "billing"},
		{name: "0-read_only"},
		{name: strings.Repeat("a", 63)},
		{name: "", bad: "want 1 to 63"},
		{name: strings.Repeat("a", 64), bad: "want 1 to 63"},
		{name: "Billing", bad: "want 1 to 63"},
		{name: "-x", bad: "starting with a letter or digit"},
		{name: "a/b", bad: "want 1 to 63"},
		{name: "message", bad: "is reserved"},
	} {
		err := toolsets.ValidName(c.name)
		if c.bad == "" && err != nil || c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)) {
			t.Errorf("ValidName(%q) = %v, want %q", c.name, err, c.bad)
		}
	}
}

func TestCheckRequiredScopes(t *testing.T) {
	t.Parallel()
	const setting = "Options.FrontDoor.Toolsets[1]"
	for _, c := range []struct {
		scopes   []string
		withAuth bool
		want     string
	}{
		{scopes: nil, withAuth: false},
		{scopes: []string{"zoo:admin", "read"}, withAuth: true},
		{scopes: []string{"zoo:admin"}, withAuth: false, want: "toolset admin: needs Options.Auth (an OAuth front door)"},
		{scopes: []string{"a b"}, withAuth: true, want: `toolset admin: "a b" is not an OAuth scope token`},
	} {
		err := toolsets.CheckRequiredScopes(setting, "admin", c.scopes, c.withAuth)
		var oe *option.Error
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q (auth %v): %v, want nil", c.scopes, c.withAuth, err)
		case c.want != "" && (!errors.As(err, &oe) || oe.Option != setting+".RequiredScopes" || oe.Err.Error() != c.want):
			t.Errorf("%q (auth %v): %v, want %s.RequiredScopes: %s", c.scopes, c.withAuth, err, setting, c.want)
		}
	}
}

func TestSelect(t *testing.T) {
	t.Parallel()
	c := toolsets.NewCatalog([]toolsets.Tool{
		{Name: "Zoo_Get", Method: "zoo.v1.Zoo/Get"},
		{Name: "Zoo_Build", Method: "zoo.v1.Zoo/Build", Pollers: []string{"Ops_GetOperation", ""}},
		{Name: "Ops_GetOperation", Method: "google.longrunning.Operations/GetOperation"},
		{Name: "Ops_WaitOperation", Method: "google.longrunning.Operations/WaitOperation"},
		{Name: "Other_Get", Method: "other.Other/Get"},
	})
	for _, tc := range []struct {
		match func(string) bool
		want  []bool
	}{
		{nil, []bool{true, true, true, true, true}},
		{func(m string) bool { return m == "zoo.v1.Zoo/Get" }, []bool{true, false, false, false, false}},
		// A long-running tool brings the tool that polls it, and only it.
		{func(m string) bool { return m == "zoo.v1.Zoo/Build" }, []bool{false, true, true, false, false}},
		{func(string) bool { return false }, []bool{false, false, false, false, false}},
	} {
		if got := c.Select(tc.match); !slices.Equal(got, tc.want) {
			t.Errorf("Select = %v, want %v", got, tc.want)
		}
	}
}

// TestRequireScopes puts RequireScopes behind a real OAuth front door: a
// token without the toolset's scope is refused with the step-up
// challenge and the toolset named; one with it reaches the handler.
func TestRequireScopes(t *testing.T) {
	t.Parallel()
	is := oauthtest.NewIssuer(t)
	const iss, aud = "https://as.example.com", "https://mcp.example.com/mcp"
	a, err := auth.New(t.Context(), auth.Config{OAuth: &auth.OAuthConfig{JWKSURL: is.URL, Issuer: iss, Audience: aud}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("served")) })
	if h := toolsets.RequireScopes(a, "admin", nil, ok); h == nil {
		t.Fatal("RequireScopes without scopes returned nil")
	}
	srv := httptest.NewServer(a.Wrap(toolsets.RequireScopes(a, "admin", []string{"zoo:admin"}, ok)))
	t.Cleanup(srv.Close)
	get := func(scope string) *http.Response {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL, nil)
		req.Header.Set("Authorization", "Bearer "+is.Token(t, iss, aud, scope, nil))
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = resp.Body.Close() })
		return resp
	}
	resp := get("zoo")
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "zoo:admin") ||
		resp.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("token without zoo:admin: %s, WWW-Authenticate %q, Cache-Control %q; want 403 naming the scope, no-store",
			resp.Status, resp.Header.Get("WWW-Authenticate"), resp.Header.Get("Cache-Control"))
	}
	if body, _ := io.ReadAll(resp.Body); !strings.Contains(string(body), "(toolset admin)") {
		t.Errorf("refusal %q does not name the toolset", body)
	}
	if resp := get("zoo zoo:admin"); resp.StatusCode != http.StatusOK {
		t.Errorf("token with zoo:admin: %s, want 200", resp.Status)
	}
}
