package main

import (
	"io"
	"net/http"
	"regexp"
	"slices"
	"testing"
	"time"
)

// TestAdminListen: with --admin-listen, /metrics and /readyz move there
// (and answer only loopback names, IP literals and allowed hosts), the
// MCP listener keeps /healthz, and --allow-unauthenticated lets a
// non-loopback --listen start.
func TestAdminListen(t *testing.T) {
	p := startGatewayProcess(t, "--listen", "0.0.0.0:0", "--allow-unauthenticated", "--admin-listen", "127.0.0.1:0", "--metrics")
	m := regexp.MustCompile(`Admin endpoints \(/metrics, /readyz, /healthz\) at (http://\S+)`).FindStringSubmatch(p.logs.String())
	if m == nil {
		t.Fatalf("no admin URL printed:\n%s", p.logs.String())
	}
	admin := m[1]
	mcpBase := regexp.MustCompile(`http://[^/]*:`).ReplaceAllString(p.base, "http://127.0.0.1:")
	get := func(url, host string) int {
		t.Helper()
		req, _ := http.NewRequest("GET", url, nil)
		if host != "" {
			req.Host = host
		}
		// A bound: a stream (/sse) that passed the Host check would not end.
		resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		url, host string
		want      int
	}{
		{admin + "/metrics", "", 200},
		{admin + "/healthz", "", 200},
		{admin + "/metrics", "evil.example", http.StatusForbidden},
		{admin + "/readyz", "evil.example", http.StatusForbidden},
		{mcpBase + "/healthz", "", 200},
		{mcpBase + "/metrics", "", http.StatusNotFound},
		{mcpBase + "/readyz", "", http.StatusNotFound},
		{mcpBase + "/mcp", "evil.example", http.StatusForbidden},
		{mcpBase + "/ws", "evil.example", http.StatusForbidden},
		{mcpBase + "/sse", "evil.example", http.StatusForbidden},
		{mcpBase + "/sse/message", "evil.example", http.StatusForbidden},
		// /healthz alone answers any Host, for probes.
		{mcpBase + "/healthz", "evil.example", 200},
		{admin + "/healthz", "evil.example", 200},
	} {
		if got := get(tc.url, tc.host); got != tc.want {
			t.Errorf("GET %s (Host %q): %d, want %d", tc.url, tc.host, got, tc.want)
		}
	}
	// /readyz may lag a discovery; it answers 200 or 503, never 404, there.
	if got := get(admin+"/readyz", ""); got != 200 && got != http.StatusServiceUnavailable {
		t.Errorf("admin /readyz: %d", got)
	}
}

// TestAllowedHostsAddOAuthResource: the Host allow-list is --allowed-host
// plus the host (with its port, if it names one) of --oauth-resource, the
// name clients are told to use.
func TestAllowedHostsAddOAuthResource(t *testing.T) {
	e := &exposure{allowedHosts: stringList{"mcp.example.com"}}
	if got := e.hosts("https://gw.example.com:8443/mcp"); !slices.Equal(got, []string{"mcp.example.com", "gw.example.com:8443"}) {
		t.Errorf("hosts with --oauth-resource: %q", got)
	}
	if got := e.hosts(""); !slices.Equal(got, []string{"mcp.example.com"}) {
		t.Errorf("hosts without --oauth-resource: %q", got)
	}
}

// TestMetricsOff: --metrics=false serves no /metrics; the probes stay.
func TestMetricsOff(t *testing.T) {
	p := startGatewayProcess(t, "--metrics=false")
	for path, want := range map[string]int{"/metrics": http.StatusNotFound, "/healthz": http.StatusOK} {
		resp, err := http.Get(p.base + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s with --metrics=false: %d, want %d", path, resp.StatusCode, want)
		}
	}
}
